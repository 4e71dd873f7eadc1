#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Per virtio-user path: vswd and vsw-xconnect against dpdk-testpmd's
net_vhost, same run.

For each of the ten paths of test/integration/virtio_paths.py (the guest's
net_virtio_user devargs) and each size (64, 1518 B): a testpmd guest in io
forwarding primed with `start tx_first`, served in turn by vswd (the
cheapest rule set: in_port -> output, both ways), by vsw-xconnect (the
same vhost-user ports and virtqueue data path, no switch: the
like-for-like row against net_vhost, which forwards without a classifier
too) and by testpmd net_vhost (io forwarding); busy cycles per packet of
the backend's polling thread (vswd: PMD busy cycles / packets,
pmd-stats-show; xconnect: its poller's, with the dequeue and enqueue
stages timed apart (rdtsc per stage); net_vhost: --record-core-cycles),
over --reps interleaved repetitions (the backend order turns every
repetition), min and median per point. vswd - xconnect is what the switch
adds (classification, actions, output batches, counters). Reuses the
backends and the measurement of bench/vsw-loopback.py.

  ./vswdev bench-paths [--reps N] [--paths a,b] [--seconds S]
      [--backends vswd,xconnect,testpmd] [--ref-build DIR]
      [--nomrg-mbuf BYTES]

--ref-build DIR adds that build's vswd and vsw-xconnect ("vswd-ref",
"xconnect-ref", e.g. main built in a second directory) to the same
rotation, and a second table sets them beside this build's: a before /
after in one run.
"""
import copy
import argparse
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "test", "integration"))
_spec = importlib.util.spec_from_file_location(
    "vsw_loopback", os.path.join(HERE, "vsw-loopback.py"))
lb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lb)
from virtio_paths import PATHS, devarg  # noqa: E402
from vswtest.testpmd import Guest, VhostBackend  # noqa: E402
from vswtest.xconnect import Xconnect  # noqa: E402

SIZES = (64, 1518)
BACKENDS = ("vswd", "xconnect", "testpmd")


def point(args, tmp, name, bename, rows):
    devargs, eal = PATHS[name][0], PATHS[name][1]
    if bename == "vswd":
        be = lb.VswdBackend(args, tmp, "v")
    elif bename == "vswd-ref":
        be = lb.VswdBackend(args, tmp, "r", build=args.ref_build)
    elif bename == "xconnect":
        be = lb.OtherBackend(Xconnect, args, tmp, "x")
    elif bename == "xconnect-ref":
        ref = copy.copy(args)
        ref.xconnect = os.path.join(args.ref_build, "bench", "vsw-xconnect")
        be = lb.OtherBackend(Xconnect, ref, tmp, "y")
    else:
        be = lb.OtherBackend(VhostBackend, args, tmp, "t")
    extra = ["--burst=32"]
    if not devarg(devargs, "mrg_rxbuf"):
        extra.append("--mbuf-size=%d" % args.nomrg_mbuf)
        if args.nomrg_mbuf < 9300:  # frames must fit one buffer
            extra.append("--max-pkt-len=%d" % (args.nomrg_mbuf - 192))
    g = Guest(args.testpmd, be.socks, tmp, "%s-%s%d" % (
        name, bename, next(lb.SEQ)), devargs=devargs, eal=eal, extra=extra)
    g.mode = "pvp"
    try:
        g.ready()
        be.up()
        for size in SIZES:
            lb.guest_size(g, size, args.tx_first)
            a = be.snap() if bename.startswith("xconnect") else None
            r = lb.measure(args, be, size)
            rows.setdefault((name, size, bename), []).append(r["cpp"])
            stages = ""
            if a is not None:  # the stage split over warm-up + window
                b = be.snap()
                n = max(1, b["pkts"] - a["pkts"])
                sfx = bename[len("xconnect"):]
                for k in ("deq", "enq"):
                    rows.setdefault((name, size, k + sfx), []).append(
                        (b[k] - a[k]) / n)
                stages = " (deq %.1f enq %.1f)" % (
                    rows[(name, size, "deq" + sfx)][-1],
                    rows[(name, size, "enq" + sfx)][-1])
            lb.log("%-22s %5d %-14s %8.1f cyc/pkt %7.3f Mpps%s" % (
                name, size, bename, r["cpp"], r["mpps"], stages))
        g.quit()
        g = None
    finally:
        if g is not None:
            g.kill()
        be.stop()


def stat(rows, key):
    v = [x for x in rows.get(key, []) if x == x]
    return (min(v), statistics.median(v)) if v else None


def cell(mm):
    return "%.0f / %.0f" % mm if mm else "n/a"


def table(rows, names):
    """One row per path and size: min / median busy cycles per packet of
    each backend, xconnect's stages (medians), the switch's share (median
    vswd - median xconnect) and the targets (medians)."""
    out = ["| path | bytes | vswd | vsw-xconnect (deq + enq) | net_vhost | "
           "switch (vswd - xconnect) | vswd <= net_vhost | "
           "xconnect <= net_vhost |",
           "|---|---:|---|---|---|---:|---|---|"]
    for n in names:
        for size in SIZES:
            v, x, t = (stat(rows, (n, size, b)) for b in BACKENDS)
            d, e = stat(rows, (n, size, "deq")), stat(rows, (n, size, "enq"))
            xs = cell(x) + (" (%.0f + %.0f)" % (d[1], e[1]) if d and e
                            else "")
            sw = "%.0f" % (v[1] - x[1]) if v and x else "n/a"
            ok = ["yes" if a and t and a[1] <= t[1] else
                  ("no" if a and t else "n/a") for a in (v, x)]
            out.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
                n, size, cell(v), xs, cell(t), sw, ok[0], ok[1]))
    return "\n".join(out)


def ref_table(rows, names):
    """Before / after in one run: medians of the reference build's vswd
    and xconnect beside this build's, their ratios, and net_vhost."""
    out = ["| path | bytes | vswd ref | vswd | vswd / ref | xconnect ref "
           "(deq + enq) | xconnect (deq + enq) | xconnect / ref | "
           "net_vhost |", "|---|---:|---:|---:|---:|---|---|---:|---:|"]
    for n in names:
        for size in SIZES:
            st = {b: stat(rows, (n, size, b)) for b in
                  ("vswd-ref", "vswd", "xconnect-ref", "xconnect",
                   "testpmd", "deq", "enq", "deq-ref", "enq-ref")}

            def med(b):
                return "%.0f" % st[b][1] if st[b] else "n/a"

            def ratio(a, b):
                return ("%.2f" % (st[a][1] / st[b][1])
                        if st[a] and st[b] else "n/a")

            def xc(sfx):
                b = "xconnect" + sfx
                d, e = st["deq" + sfx], st["enq" + sfx]
                return med(b) + (" (%.0f + %.0f)" % (d[1], e[1])
                                 if d and e else "")
            out.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                n, size, med("vswd-ref"), med("vswd"),
                ratio("vswd", "vswd-ref"), xc("-ref"), xc(""),
                ratio("xconnect", "xconnect-ref"), med("testpmd")))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--testpmd", default=shutil.which("dpdk-testpmd"))
    ap.add_argument("--paths", default=",".join(PATHS))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--tx-first", type=int, default=32)
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--nomrg-mbuf", type=int, default=9344,
                    help="the guest's mbuf size on the non-mergeable paths "
                    "(default 9344: one buffer a 9000 B frame; 2176, "
                    "testpmd's default, holds the 1518 B points too)")
    ap.add_argument("--ref-build", help="a second build (e.g. main's): "
                    "its vswd and vsw-xconnect join the rotation")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    args.xconnect = os.path.join(args.build, "bench", "vsw-xconnect")
    bes = [b for b in BACKENDS if b in args.backends.split(",")]
    if args.ref_build:
        args.ref_build = os.path.abspath(args.ref_build)
        bes += [b + "-ref" for b in ("vswd", "xconnect") if b in bes]
    args.machine = {}
    names = [n for n in args.paths.split(",") if n]
    tmp = tempfile.mkdtemp(prefix="vsw-paths-bench-")
    rows = {}
    try:
        for rep in range(args.reps):
            for name in names:
                # the order turns by one each repetition
                k = rep % len(bes)
                for bename in bes[k:] + bes[:k]:
                    point(args, tmp, name, bename, rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(table(rows, names))
    if args.ref_build:
        print()
        print(ref_table(rows, names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
