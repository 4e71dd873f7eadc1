#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Per virtio-user path: vswd against dpdk-testpmd's net_vhost, same run.

For each of the ten paths of test/integration/virtio_paths.py (the guest's
net_virtio_user devargs) and each size (64, 1518 B): a testpmd guest in io
forwarding primed with `start tx_first`, served by vswd (in_port
cross-connect) and by testpmd net_vhost (io forwarding), one after the
other; busy cycles per packet of the backend's polling thread (vswd: PMD
busy cycles / packets, pmd-stats-show; net_vhost: --record-core-cycles),
over --reps interleaved repetitions (path x backend order kept, every
repetition runs all), min and median per point. Reuses the backends and
the measurement of bench/vsw-loopback.py.

  ./vswdev bench-paths [--reps N] [--paths a,b] [--seconds S]
"""
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

SIZES = (64, 1518)


def point(args, tmp, name, bename, rows):
    devargs, eal = PATHS[name][0], PATHS[name][1]
    if bename == "vswd":
        be = lb.VswdBackend(args, tmp, "v")
    else:
        be = lb.OtherBackend(VhostBackend, args, tmp, "t")
    extra = ["--burst=32"]
    if not devarg(devargs, "mrg_rxbuf"):
        extra.append("--mbuf-size=9344")  # one buffer a frame
    g = Guest(args.testpmd, be.socks, tmp, "%s-%s%d" % (
        name, bename, next(lb.SEQ)), devargs=devargs, eal=eal, extra=extra)
    g.mode = "pvp"
    try:
        g.ready()
        be.up()
        for size in SIZES:
            lb.guest_size(g, size, args.tx_first)
            r = lb.measure(args, be, size)
            rows.setdefault((name, size, bename), []).append(r["cpp"])
            lb.log("%-22s %5d %-14s %8.1f cyc/pkt %7.3f Mpps" % (
                name, size, bename, r["cpp"], r["mpps"]))
        g.quit()
        g = None
    finally:
        if g is not None:
            g.kill()
        be.stop()


def table(rows, names):
    out = ["| path | 64 B vsw min / med | 64 B net_vhost min / med | "
           "1518 B vsw min / med | 1518 B net_vhost min / med |",
           "|---|---|---|---|---|"]
    for n in names:
        cells = []
        for size in SIZES:
            for be in ("vswd", "testpmd"):
                v = [x for x in rows.get((n, size, be), []) if x == x]
                cells.append("%.0f / %.0f" % (min(v), statistics.median(v))
                             if v else "n/a")
        out.append("| %s | %s |" % (n, " | ".join(cells)))
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
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    args.machine = {}
    names = [n for n in args.paths.split(",") if n]
    tmp = tempfile.mkdtemp(prefix="vsw-paths-bench-")
    rows = {}
    try:
        for rep in range(args.reps):
            for name in names:
                order = ("vswd", "testpmd") if rep % 2 == 0 else \
                    ("testpmd", "vswd")
                for bename in order:
                    point(args, tmp, name, bename, rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(table(rows, names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
