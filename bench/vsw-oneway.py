#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""One-way benchmarks (testpmd style): one side generates at full rate,
the other counts; vswd, dpdk-testpmd as the vhost backend and OVS-DPDK
serve the same topology, side by side in one run.

  tx   guest TX alone: a testpmd guest (one virtio_user port) generates,
       txonly (1 flow) or flowgen (--flowgen-flows=1024) -> backend ->
       net_null sink (no-rx=1);
  rx   guest RX alone: net_null source (size=S) -> backend -> testpmd
       guest in rxonly;
  pvp  net_null source -> backend -> guest port 0, io -> guest port 1 ->
       backend -> net_null sink.

Backends (one PMD / forwarding core on CPU 1, the guest's forwarding
lcore on CPU 0):
  vswd     port-add ... dpdk devargs=net_null..., rules `in_port` and
           (tx) `in_port,udp` with EMC on/off;
  testpmd  dpdk-testpmd with net_vhost + net_null ports, io forwarding
           (no switching: the reference data path), --record-core-cycles;
  ovs      OVS-DPDK (Debian's openvswitch-switch-dpdk, private run dir,
           --no-huge --legacy-mem, dpdkvhostuserclient + dpdk ports),
           the same rules via ovs-ofctl, EMC on/off (emc-insert-inv-prob),
           and (tx, 1024 flows) SMC.

Per point: Mpps delivered at the far end (sink, or guest RX), Mpps the
backend received, the generator's own rate (tx: guest TX), drops, the
backend's busy TSC cycles per packet received (vswd pmd-stats-show, OVS
dpif-netdev/pmd-stats-show, testpmd's record-core-cycles), Mpps per PMD
core = TSC rate / busy cycles per packet (what one fully busy core would
forward), busy% of the PMD's cycles (below ~95 %: the backend waited for
the generator, flagged "gen"), and the window's context (steal time,
CPUs of the threads). Each (topology, size) runs every backend in turn
with fresh processes, the order reversed every other repetition; tables
give min and median over repetitions and flag each repetition fast (F)
or slow (S: above 1.5x the point's minimum).

net_null sets (or fills) the mbufs of the backend's pool to size bytes
without checking the mbuf's room (DPDK 22.11): vswd gives a net_null
port whose frames do not fit its 2 KiB mbufs a pool of its own (port-add
logs it), testpmd gets --mbuf-size, OVS mtu_request=9000; so every size
runs in every topology. net_null frames are all zero, one flow, not UDP:
rx and pvp use `in_port` rules only.

  ./vswdev bench-oneway [--quick] [--backends vswd,testpmd,ovs] [...]
  PYTHONPATH=test/lib python3 bench/vsw-oneway.py --build build

Progress on stderr; the tables on stdout; --out DIR gets oneway.csv,
oneway.md and oneway.png.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

from bench_report import SLOW, Window, c2c, md_table, plot, states, \
    summary, write_csv
from oneway_backends import BACKENDS, GUEST_MBUF, SEQ, SRC_MAX, log
from vswtest import ovs as ovsmod
from vswtest.proc import sched_wait_ns, worker_tid
from vswtest.testpmd import Guest

HERE = os.path.dirname(os.path.abspath(__file__))
TOPOS = ("tx", "rx", "pvp")
SIZES = (64, 512, 1518, 9000)
QUICK_SIZES = (64, 1518)
FLOWS = 1024


def tsc_hz():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz"):
                return float(line.split(":")[1]) * 1e6
    return 2.6e9



# ---- guests ----

def guest_start(args, be, tmp, topo, size):
    extra = ["--burst=32"]
    if args.guest_rxd:
        extra.append("--rxd=%d" % args.guest_rxd)
    if topo == "tx":
        extra.append("--flowgen-flows=%d" % FLOWS)
    if size > SRC_MAX:  # txonly and flowgen frames are one segment
        extra.append("--mbuf-size=%d" % GUEST_MBUF)
    g = Guest(args.testpmd, be.socks, tmp, "g%d" % next(SEQ),
              server=be.guest_server, extra=extra)
    try:
        if be.guest_server:  # the guest waits for OVS before its prompt
            be.attach()
        g.ready()
        if not be.guest_server:
            be.attach()
    except Exception:
        g.kill()  # not yet the caller's to clean up
        raise
    return g


def guest_go(g, topo, size, flows):
    g.cmd("stop")
    if topo == "tx":
        g.cmd("set txpkts %d" % size)
        g.cmd("set fwd " + ("txonly" if flows == 1 else "flowgen"))
    else:
        g.cmd("set fwd " + ("rxonly" if topo == "rx" else "io"))
    g.cmd("start")


def guest_count(g, topo):
    """The guest's own count: packets it sent (tx) or received."""
    st = g.port_stats()
    key = "TX-packets" if topo == "tx" else "RX-packets"
    return sum(p.get(key, 0) for p in st.values()) if topo != "pvp" else \
        st.get(0, {}).get("RX-packets", 0)


# ---- one window ----

def measure(args, be, g, topo, size):
    time.sleep(args.warmup)
    pid = be.p.pid
    tid = be.pmd_tid()
    gtid = worker_tid(g.p.p.pid)
    win = Window({"be": (pid, tid), "g": (g.p.p.pid, gtid)})
    ga = guest_count(g, topo)
    a = be.snap()
    ra = sched_wait_ns(pid, tid)[0] if tid else 0
    time.sleep(args.seconds)
    b = be.snap()
    rb = sched_wait_ns(pid, tid)[0] if tid else 0
    gb = guest_count(g, topo)
    ctx = win.end()
    dt = b["t"] - a["t"]
    rx = b["rx"] - a["rx"]
    busy = b["busy"] - a["busy"]
    total = b["total"] - a["total"]
    hz = tsc_hz()
    if not total:
        total = dt * hz
    oncpu = min(1.0, (rb - ra) / (dt * 1e9)) if rb > ra else 1.0
    r = {"mpps_out": (b["out"] - a["out"]) / dt / 1e6,
         "mpps_in": rx / dt / 1e6,
         "mpps_gen": (gb - ga) / dt / 1e6,
         "drops": b["drops"] - a["drops"],
         "cpp": busy / rx if rx else float("nan"),
         "busy": 100.0 * busy / total if total else float("nan"),
         "oncpu": 100.0 * oncpu}
    r["drop_pct"] = 100.0 * r["drops"] / rx if rx else 0.0
    # TSC cycles run on while the thread is off its CPU: scale them by
    # the share of the window it ran (this box is shared)
    r["raw_cpp"] = r["cpp"]
    r["cpp"] *= oncpu
    r["mpps_core"] = hz / r["cpp"] / 1e6 if rx else float("nan")
    iters = b["iters"] - a["iters"]
    r["burst"] = rx / iters if iters else float("nan")
    if "emc" in b:
        r["emc_pct"] = 100.0 * (b["emc"] - a["emc"]) / rx if rx else 0.0
        r["upcalls"] = b["upcalls"] - a["upcalls"]
    # the generator (guest TX) left the backend idle: generator-bound
    r["gen"] = topo == "tx" and r["busy"] < 95.0
    r.update(ctx)
    return r


def fmt(r):
    return ("%7.3f out %7.3f in %7.3f gen  %6.1f c/p  %6.2f Mpps/core  "
            "busy %5.1f%%  onCPU %5.1f%%  burst %4.1f  drops %5.1f%%  "
            "steal %4.1f%%  c2c %s  cpu be %s g %s%s%s" % (
                r["mpps_out"], r["mpps_in"], r["mpps_gen"], r["cpp"],
                r["mpps_core"], r["busy"], r["oncpu"], r["burst"],
                r["drop_pct"], r["steal"], r.get("c2c", "?"),
                r.get("cpu_be", "?"), r.get("cpu_g", "?"),
                "" if "emc_pct" not in r else "  emc %.0f%% upcalls %d" % (
                    r["emc_pct"], r["upcalls"]),
                "  gen-bound" if r["gen"] else ""))


def run_instance(args, tmp, res, name, topo, size, rep):
    """Fresh backend + guest; every point of this backend at size."""
    machine = c2c(args.build)  # before any of ours polls
    be = BACKENDS[name](args, tmp, topo, size)
    g = None
    ok, how = False, "failed"
    try:
        g = guest_start(args, be, tmp, topo, size)
        for flows in ((1, FLOWS) if topo == "tx" else (1,)):
            guest_go(g, topo, size, flows)
            for rules, emc in be.points(flows):
                be.set_point(rules, emc)
                r = measure(args, be, g, topo, size)
                r.update(rep=rep, topo=topo, size=size, backend=name,
                         flows=flows, rules=rules, emc=emc, **machine)
                key = (topo, size, flows, name, rules, emc)
                res.setdefault(key, []).append(r)
                log("  %-4s %5d B %4d fl %-7s %-12s emc %-7s %s" % (
                    topo, size, flows, name, rules, emc, fmt(r)))
        if args.check and hasattr(be, "check"):
            for ok, what in be.check(g):
                log("  check %s: %s %s" % ("ok" if ok else "FAILED",
                                           name, what))
                args.failed += not ok
        g.cmd("stop")
        g.quit()
        g = None
    finally:
        if g is not None:
            g.kill()
        ok, how = be.stop()
    if not ok:
        log("  %s did not stop cleanly: %s" % (name, how))
    return ok


def label(k):
    topo, size, flows, name, rules, emc = k
    if name == "testpmd":
        return "testpmd io"
    return "%s %s emc %s" % (name, rules, emc)


def load_csv(path):
    """A run's oneway.csv back into {key: [window]} (--from-csv)."""
    import csv
    res = {}
    for r in csv.DictReader(open(path)):
        for k, v in r.items():
            try:
                r[k] = int(v) if k in ("rep", "size", "flows") else float(v)
            except ValueError:
                pass
        r["gen"] = r["gen"] == "True"
        key = (r["topo"], r["size"], r["flows"], r["backend"], r["rules"],
               r["emc"])
        res.setdefault(key, []).append(r)
    return res


def report(args, res):
    """Markdown tables (stdout), CSV, plot."""
    hz = tsc_hz()
    for reps in res.values():
        for r in reps:
            r["gen"] = r["topo"] == "tx" and r["busy"] < 95.0
            # busy cycles per packet that reached the far end
            r["cpd"] = (r["cpp"] * r["mpps_in"] / r["mpps_out"]
                        if r["mpps_out"] else float("nan"))
    print("# One-way benchmarks: %s; %d repetition(s), interleaved; "
          "TSC %.0f MHz; load %s" % (", ".join(args.backends), args.reps,
                                     hz / 1e6, args.load))
    print()
    print("Figures: min / median over repetitions. c/p = backend busy TSC "
          "cycles per packet received, scaled by the share of the window "
          "the PMD thread was on a CPU (onCPU); Mpps/core = TSC / c/p; states: F/S "
          "per repetition (S = c/p above %.1fx the point's minimum); "
          "c/p delivered = busy cycles per packet that reached the far end "
          "(rx, pvp: the guest bounds it, the rest is dropped at its full "
          "ring); gen = tx repetitions where the PMD was idle > 5 %% of "
          "its cycles (the generator was the bottleneck)." % SLOW)
    rows_csv = []
    panels = []
    for topo in args.topos:
        for flows in ((1, FLOWS) if topo == "tx" else (1,)):
            keys = sorted(k for k in res if k[0] == topo and k[2] == flows)
            if not keys:
                continue
            print()
            print("## %s, %d flow%s" % (topo, flows, "s" if flows > 1 else
                                         ""))
            print()
            rows = []
            series = {}
            for k in sorted(keys, key=lambda k: (k[1], label(k))):
                reps = res[k]
                s = summary(reps)
                mo = summary(reps, "mpps_out")
                ref = res.get((topo, k[1], flows, "testpmd", "io", "-"))
                rt = summary(ref)["med"] if ref else float("nan")
                dl = summary(reps, "cpd")
                rows.append([
                    "%d" % k[1], label(k),
                    max(r["mpps_out"] for r in reps), mo["med"],
                    s["min"], s["med"], dl["med"],
                    hz / s["min"] / 1e6 if s["min"] == s["min"] else
                    float("nan"),
                    s["med"] / rt if rt == rt else float("nan"),
                    max(r["drop_pct"] for r in reps),
                    states(reps), sum(r["gen"] for r in reps)])
                series.setdefault(label(k), []).append((k[1], s["med"]))
                for r in reps:
                    rows_csv.append(dict(r, point=label(k)))
            print(md_table(["size", "backend / point", "Mpps out max",
                            "Mpps out med", "c/p min", "c/p med",
                            "c/p delivered med",
                            "Mpps/core (min c/p)", "c/p med / testpmd",
                            "drops % max", "states", "gen"], rows))
            panels.append(("%s, %d flow%s" % (topo, flows, "s" if flows > 1
                                              else ""), series))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        fields = ["rep", "topo", "size", "flows", "backend", "rules", "emc",
                  "point", "mpps_out", "mpps_in", "mpps_gen", "cpp", "raw_cpp", "cpd",
                  "mpps_core", "busy", "oncpu", "drops", "drop_pct", "burst",
                  "emc_pct", "gen", "steal", "load", "c2c", "c2c_p90", "work",
                  "cpu_be", "cpu_g",
                  "nvcsw_be", "nvcsw_g"]
        csvp = os.path.join(args.out, "oneway.csv")
        write_csv(csvp, rows_csv, fields)
        png = os.path.join(args.out, "oneway.png")
        err = plot(png, "one-way: backend busy cycles per packet (median)",
                   panels, "TSC cycles / packet")
        log("csv %s; plot %s" % (csvp, err or png))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--testpmd", default=shutil.which("dpdk-testpmd"))
    ap.add_argument("--quick", action="store_true",
                    help="64 and 1518 B, one repetition, short windows")
    ap.add_argument("--sizes")
    ap.add_argument("--topos", default=",".join(TOPOS))
    ap.add_argument("--backends", default="vswd,testpmd,ovs")
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--warmup", type=float)
    ap.add_argument("--reps", type=int)
    ap.add_argument("--out", help="directory for oneway.csv/.png")
    ap.add_argument("--keep", action="store_true", help="keep logs")
    ap.add_argument("--from-csv", help="only the report of a run's CSV")
    ap.add_argument("--tx-retries", type=int,
                    help="vswd: tx-retries-set N (default: vswd's)")
    ap.add_argument("--guest-rxd", type=int,
                    help="the guest's --rxd (default: testpmd's, 512 on "
                    "virtio_user: the RX buffers it posts)")
    ap.add_argument("--no-drain", action="store_true",
                    help="--check: also print what the guest had not "
                    "received when its forwarding stopped")
    ap.add_argument("--check", action="store_true",
                    help="after each vswd instance: sources stopped, "
                    "packets in = out + drops (the integration test)")
    args = ap.parse_args()
    args.failed = 0
    args.build = os.path.abspath(args.build)
    args.sizes = [int(s) for s in args.sizes.split(",")] if args.sizes \
        else list(QUICK_SIZES if args.quick else SIZES)
    args.topos = args.topos.split(",")
    args.backends = args.backends.split(",")
    args.seconds = args.seconds or (0.8 if args.quick else 1.5)
    args.warmup = args.warmup or (0.5 if args.quick else 0.8)
    args.reps = args.reps or (1 if args.quick else 3)
    if args.from_csv:
        args.load = "(see CSV)"
        report(args, load_csv(args.from_csv))
        return 0
    if not args.testpmd:
        log("dpdk-testpmd not found")
        return 1
    if "ovs" in args.backends:
        ok, why = ovsmod.available()
        if not ok:
            log("ovs left out: " + why)
            args.backends.remove("ovs")
    if args.check and not args.backends:
        print("SKIP: no backend to check")
        return 77
    args.load = "%.1f" % os.getloadavg()[0]
    tmp = tempfile.mkdtemp(prefix="vsw-oneway-")
    res = {}
    clean = True
    try:
        for rep in range(args.reps):
            for topo in args.topos:
                for size in args.sizes:
                    order = args.backends if rep % 2 == 0 else \
                        args.backends[::-1]
                    log("rep %d/%d, %s, %d B: %s" % (
                        rep + 1, args.reps, topo, size, " ".join(order)))
                    for name in order:
                        clean &= run_instance(args, tmp, res, name, topo,
                                              size, rep)
        report(args, res)
    finally:
        if args.keep:
            log("logs in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.check:
        log("checks: %s" % ("all ok" if not args.failed else
                            "%d FAILED" % args.failed))
    return 0 if clean and not args.failed else 1


if __name__ == "__main__":
    sys.exit(main())
