#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Loopback benchmark: vswd against vsw-xconnect (no classifier),
dpdk-testpmd with two net_vhost ports (io forwarding) and OVS-DPDK
(vswtest.ovs: dpdkvhostuserclient ports, the same rules), same guest,
same run.

Guest: dpdk-testpmd with two virtio_user ports (mrg_rxbuf=1, 2 KiB mbufs,
so frames above ~2 KiB are multi-segment both ways), one of
  pvp      io forwarding primed with `start tx_first 32` (testpmd's txonly
           engine builds the packets, `set txpkts` segment lists): they
           circulate guest port 0 -> backend -> guest port 1 -> port 0 ...
           one flow per direction;
  flowgen  testpmd's flowgen engine (generates N UDP flows per port, receives
           and discards), --flowgen-flows=1 or 1024; single-segment frames
           (--mbuf-size fits 9000 B).
  mac      testpmd's mac engine (source = the sending port's MAC,
           destination = the other port's): a MAC-rewriting guest, so
           `normal` learns both and forwards unicast.
vswd and OVS points: rules `in_port` cross-connect, `in_port,udp`, EMC on
vs off, (mac guest) `normal`, flowgen 1 vs 1024 flows, OVS also SMC;
--copy-impls adds every vswd copy implementation (copy-impl-set).
Full runs: min and median over --reps interleaved repetitions (default 3),
each flagged fast/slow, the machine's state per window (vsw-bench-c2c,
steal, CPUs); --out DIR writes loopback.csv and loopback.png.
Rules and settings change while the loop runs (new rules are added before
the old ones go, so no packet is lost to a rule gap).

Per point: the backend's forwarding rate over a window after a warm-up
(both directions summed) in Mpps and Gbps (frame bytes, no Ethernet
overhead), the drops the backend counted, and its busy cycles per packet:
vswd's PMD busy cycles / packets received (pmd-stats-show deltas, what
pmd-perf-show reports), vsw-xconnect's poller busy cycles / packets,
testpmd's --record-core-cycles. "adj" scales busy cycles by the share of
the window the polling thread was on a CPU (this box is shared).

  ./vswdev bench-loopback [ARGS]                 # full run, a few minutes
  ./vswdev demo                                  # = --quick: default config,
      normal rule, pvp at 64/512/1518/9000 B, table + pmd-stats-show,
      clean shutdown (exit status 1 if vswd did not exit cleanly)

By hand: PYTHONPATH=test/lib python3 bench/vsw-loopback.py --build build
[--quick]. Progress goes to stderr, tables to stdout.
"""
import argparse
import itertools
import os
import re
import shutil
import sys
import tempfile
import time

from bench_report import SLOW, Window, c2c, md_table, plot, states, \
    summary, write_csv
from vswtest.ovs import Ovs, available as ovs_available
from vswtest.proc import sched_wait_ns, wait_path, worker_tid
from vswtest.testpmd import Guest, VhostBackend, segments
from vswtest.vswd import VIRTQ_DEQ_DROPS, Vswd
from vswtest.xconnect import Xconnect

HERE = os.path.dirname(os.path.abspath(__file__))

SIZES = (64, 256, 512, 1024, 1518, 4096, 9000)
QUICK_SIZES = (64, 512, 1518, 9000)
XCONNECT = ("priority=100,in_port=vm1,actions=output:vm2",
            "priority=100,in_port=vm2,actions=output:vm1")
UDP = ("priority=200,in_port=vm1,udp,actions=output:vm2",
       "priority=200,in_port=vm2,udp,actions=output:vm1")
NORMAL = "priority=0,actions=normal"
FLOWGEN_MBUF = 9000 + 128 + 256  # one segment for the largest frame


SEQ = itertools.count(1)  # unique tags: run dirs, logs, EAL file prefixes


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- guests ----

def guest_start(args, be, tmp, tag, mode, flows=1):
    """A guest on be's sockets; be.attach() once the guest is up (OVS
    connects to the guest's sockets: the guest waits for it first)."""
    extra = ["--burst=32"]
    if mode == "flowgen":
        extra += ["--flowgen-flows=%d" % flows,
                  "--mbuf-size=%d" % FLOWGEN_MBUF]
    server = getattr(be, "guest_server", False)
    g = Guest(args.testpmd, be.socks, tmp, "%s%d" % (tag, next(SEQ)),
              server=server, extra=extra)
    try:
        if server:
            be.attach()
        g.ready()
    except Exception:
        g.kill()  # not yet the caller's to clean up
        raise
    g.mode = mode
    if mode == "mac":
        # testpmd's mac engine: source = the sending port's address,
        # destination = its peer: port 0 sends to port 1's address and
        # back, so `normal` learns both and forwards unicast.
        macs = dict(re.findall(r"^Port (\d+): ([0-9A-Fa-f:]{17})$",
                               g.p.buf, re.M))
        for port, peer in (("0", "1"), ("1", "0")):
            g.cmd("set eth-peer %s %s" % (port, macs[peer]))
    return g


def guest_size(g, size, tx_first):
    """(Re)start the guest's traffic at size bytes."""
    g.cmd("stop")
    g.drain()
    if g.mode == "flowgen":
        g.cmd("set txpkts %d" % size)
        g.cmd("set fwd flowgen")
        g.cmd("start")
    else:
        g.cmd("set txpkts " + segments(size))
        g.cmd("set fwd " + ("mac" if g.mode == "mac" else "io"))
        g.cmd("start tx_first %d" % tx_first)


# ---- backends: snap() -> {t, pkts, busy, drops} ----

class VswdBackend:
    name = "vswd"

    def __init__(self, args, tmp, tag, config=True, build=None):
        tag = "%s%d" % (tag, next(SEQ))
        run = os.path.join(tmp, "run-" + tag)
        os.makedirs(run)
        cfg = None
        if config:
            cfg = os.path.join(tmp, tag + ".conf")
            with open(cfg, "w") as f:
                f.write("port-add vm1 vhost-user\nport-add vm2 vhost-user\n")
                f.write("".join("flow-add %s\n" % r for r in XCONNECT))
        self.v = Vswd(build or args.build, run, tmp, tag, config=cfg)
        self.p = self.v.p
        self.v.ready()
        self.socks = [os.path.join(run, n + ".sock") for n in ("vm1", "vm2")]
        self.rules = "in_port" if config else "normal"

    def up(self):
        self.v.wait_up(("vm1", "vm2"), 2)

    def snap(self):
        pmd = self.v.pmd_stats()
        t = time.monotonic()
        drops = sum(v for k, v in pmd.items() if k.startswith("drop_"))
        for p in self.v.ports().values():
            drops += sum(p["virtq"][k] for k in VIRTQ_DEQ_DROPS)
        return {"t": t, "pkts": pmd["rx_packets"],
                "busy": pmd["busy_cycles"], "drops": drops,
                "iters": pmd["busy_iterations"]}

    def set_rules(self, kind):
        """in_port (XCONNECT), in_port,udp (UDP over XCONNECT) or normal;
        rules are added before the ones they replace go (no gap)."""
        if kind == self.rules:
            return
        if self.rules == "in_port,udp":
            for r in UDP:
                self.v.ctl("flow-del " + r.split(",actions=")[0])
        elif self.rules == "normal":
            for r in XCONNECT:
                self.v.ctl("flow-add " + r)
            self.v.ctl("flow-del priority=0")
        if kind == "in_port,udp":
            for r in UDP:
                self.v.ctl("flow-add " + r)
        elif kind == "normal":
            self.v.ctl("flow-add " + NORMAL)
            for r in XCONNECT:
                self.v.ctl("flow-del " + r.split(",actions=")[0])
        self.rules = kind

    def stop(self):
        """Graceful shutdown; (ok, pool line)."""
        r = self.v.shutdown()
        pool = r["pool"] or "no mbuf pool line"
        ok = r["status"] == 0 and r["rc"] == 0 and r["in_use"] == 0
        return ok, "exit %s, %s" % (r["rc"], pool)


class OtherBackend:
    """vsw-xconnect or testpmd net_vhost, sockets a.sock and b.sock in
    tmp."""

    def __init__(self, cls, args, tmp, tag):
        tag = "%s%d" % (tag, next(SEQ))
        self.socks = [os.path.join(tmp, s) for s in ("a.sock", "b.sock")]
        if cls is Xconnect:
            self.be = Xconnect(args.xconnect, self.socks[0], self.socks[1],
                               tmp, "v" + tag)
        else:
            self.be = VhostBackend(args.testpmd, self.socks, tmp, tag)
        self.name = "xconnect" if cls is Xconnect else "testpmd-vhost"
        self.p = self.be.p
        for s in self.socks:
            wait_path(s, self.be.p)

    def up(self):
        time.sleep(1.0)

    def snap(self):
        s = self.be.snap()
        s["drops"] = 0  # not counted by these backends (ring full retries)
        return s

    def stop(self):
        self.be.stop()
        return True, ""


class OvsBackend:
    """OVS-DPDK: vm1, vm2 as dpdkvhostuserclient ports (OpenFlow ports 1
    and 2) to the guest's sockets (the guest is the vhost-user server)."""
    name = "ovs"
    guest_server = True
    RULES = {
        "in_port": ["priority=100,in_port=1,actions=output:2",
                    "priority=100,in_port=2,actions=output:1"],
        "in_port,udp": ["priority=200,in_port=1,udp,actions=output:2",
                        "priority=200,in_port=2,udp,actions=output:1",
                        "priority=100,in_port=1,actions=output:2",
                        "priority=100,in_port=2,actions=output:1"],
        "normal": ["priority=0,actions=NORMAL"],
    }

    def __init__(self, args, tmp, tag, size):
        tag = "%s%d" % (tag, next(SEQ))
        self.socks = [os.path.join(tmp, "%s-vm%d.sock" % (tag, i))
                      for i in (1, 2)]
        self.mtu = 9000 if size > 1518 else None
        self.o = Ovs(os.path.join(tmp, "run-" + tag), tmp, tag)
        self.p = self.o.p
        self.rules = self.emc = None

    def attach(self):
        for i, sock in enumerate(self.socks):
            self.o.add_vhost("vm%d" % (i + 1), sock, i + 1, self.mtu)

    def up(self):
        self.o.wait_up(("vm1", "vm2"))
        self.set_point("in_port", "on")

    def set_point(self, rules, emc):
        if rules != self.rules:
            self.o.flows(self.RULES[rules])  # replace-flows: no gap
            self.rules = rules
        if emc != self.emc:
            self.o.set_config({
                "emc-insert-inv-prob": "100" if emc == "on" else "0",
                "smc-enable": "true" if emc.endswith("smc") else "false"})
            self.o.purge()
            self.emc = emc

    def pmd_tid(self):
        t = self.o.pmd_tids()
        return t[0] if t else None

    def snap(self):
        pmd = self.o.pmd_stats()
        t = time.monotonic()
        drops = sum(p["tx_dropped"] + p["rx_dropped"]
                    for p in self.o.port_stats().values())
        return {"t": t, "pkts": pmd.get("rx_packets", 0),
                "busy": pmd.get("busy_cycles", 0), "drops": drops}

    def stop(self):
        rc = self.o.stop()
        return rc == 0, "exit %s" % rc


def measure(args, be, size):
    time.sleep(args.warmup)
    pid = be.p.p.pid
    tid = be.pmd_tid() if hasattr(be, "pmd_tid") else worker_tid(pid)
    win = Window({"be": (pid, tid)})
    a = be.snap()
    ra = sched_wait_ns(pid, tid)[0] if tid else 0
    time.sleep(args.seconds)
    b = be.snap()
    rb = sched_wait_ns(pid, tid)[0] if tid else 0
    dt = b["t"] - a["t"]
    pkts = b["pkts"] - a["pkts"]
    r = {"mpps": pkts / dt / 1e6, "drops": b["drops"] - a["drops"],
         "cpp": (b["busy"] - a["busy"]) / pkts if pkts else float("nan")}
    r["gbps"] = r["mpps"] * size * 8 / 1e3
    oncpu = min(1.0, (rb - ra) / (dt * 1e9)) if rb > ra else 1.0
    r["oncpu"] = oncpu * 100
    r["acpp"] = r["cpp"] * oncpu
    # packets per busy poll iteration (vswd): the guest's burst sizes
    iters = b.get("iters", 0) - a.get("iters", 0)
    r["burst"] = pkts / iters if iters else float("nan")
    r.update(win.end())
    r.update(args.machine)
    return r


def best_key(r):
    """The least disturbed run: the most time on a CPU (in 10% bands),
    then the fewest cycles (noise only adds them); a window with no
    packets (nan) sorts last."""
    acpp = r["acpp"] if r["acpp"] == r["acpp"] else float("inf")
    return (-(r["oncpu"] // 10) if acpp != float("inf") else 1, acpp)


def fmt_row(size, label, r):
    # '*': the poller was off a CPU for over half the window (other load)
    return ("%6d  %-34s %8.3f %8.2f %10d %9.1f %9.1f %5.1f%s" % (
        size, label, r["mpps"], r["gbps"], r["drops"], r["cpp"], r["acpp"],
        r["oncpu"], "*" if r["oncpu"] < 50 else " ") + (
        "" if "c2c" not in r else "  burst %4.1f c2c %d steal %.1f%% "
        "cpu %s" % (r.get("burst", float("nan")), r["c2c"], r["steal"],
                    r.get("cpu_be", "?"))))


HEADER = ("%6s  %-34s %8s %8s %10s %9s %9s %6s" % (
    "size", "backend / point", "Mpps", "Gbps", "drops", "cyc/pkt",
    "adj c/p", "onCPU%"))


def with_guest(args, tmp, be, tag, mode, body, flows=1):
    """A guest on be's sockets runs body(g), then quits (or is killed if
    body failed); the backend is stopped in any case. Returns be.stop()."""
    g = None
    try:
        g = guest_start(args, be, tmp, tag, mode, flows)
        be.up()
        body(g)
        g.quit()
        g = None
    finally:
        if g is not None:
            g.kill()
        stopped = be.stop()
    return stopped


# ---- quick: the demo ----

def quick(args, tmp):
    be = VswdBackend(args, tmp, "quick", config=False)
    rows = []

    def body(g):
        for size in args.sizes:
            log("size %d: %s s warm-up, %s s measurement" % (
                size, args.warmup, args.seconds))
            guest_size(g, size, args.tx_first)
            r = measure(args, be, size)
            rows.append((size, r))
            log(fmt_row(size, "vswd normal", r))
        g.cmd("stop")
        g.drain()
        print("vswd loopback (guest io forwarding, start tx_first %d; "
              "both directions; rule: normal)" % args.tx_first)
        print("%6s %8s %8s %10s %9s %7s" % ("size", "Mpps", "Gbps", "drops",
                                             "cyc/pkt", "onCPU%"))
        for size, r in rows:
            print("%6d %8.3f %8.2f %10d %9.1f %7.1f" % (
                size, r["mpps"], r["gbps"], r["drops"], r["acpp"],
                r["oncpu"]))
        print("(cyc/pkt: vswd PMD busy TSC cycles per packet received, "
              "scaled by onCPU%, the share of the window the PMD thread "
              "ran)")
        print()
        print("$ vswctl pmd-stats-show")
        print(be.v.ctl("pmd-stats-show"), end="")

    log("vswd started with the default config (vm1, vm2, normal); "
        "guest: dpdk-testpmd, 2 virtio_user ports, mrg_rxbuf=1")
    ok, how = with_guest(args, tmp, be, "quick", "pvp", body)
    print()
    print("vswd shutdown: %s (%s)" % ("clean" if ok else "NOT CLEAN", how))
    return 0 if ok else 1


# ---- full ----

def wanted(args, rules, emc):
    """--points: the switches' (rules, EMC) points to measure."""
    return args.points is None or "%s/%s" % (rules, emc) in args.points


def run_vswd_pvp(args, tmp, res, sizes, mode="pvp", build=None,
                 name="vswd"):
    """mode pvp: io guest, in_port and in_port,udp rules (and normal,
    with --copy-impls every copy implementation); mac: the MAC-rewriting
    guest, normal. build/name: another vswd build (--ref-build), its
    points labelled name."""
    be = VswdBackend(args, tmp, "pvp", build=build)

    def body(g):
        impls = [i["name"] for i in be.v.ctl("copy-impl-show --json")
                 ["implementations"] if i["available"]]
        for size in sizes:
            guest_size(g, size, args.tx_first)
            rules = ("in_port", "in_port,udp") if mode == "pvp" else \
                ("normal",)
            points = [(r, e, "auto") for r in rules for e in ("on", "off")
                      if wanted(args, r, e)]
            if args.copy_impls and mode == "pvp":
                points += [("in_port", "on", i) for i in impls]
            for rules, emc, impl in points:
                be.set_rules(rules)
                be.v.ctl("emc-set " + emc)
                be.v.ctl("copy-impl-set " + impl)
                label = "%s %s emc %s" % (name, rules, emc) + (
                    "" if impl == "auto" else " copy " + impl)
                r = measure(args, be, size)
                res.setdefault((size, mode, label), []).append(r)
                log(fmt_row(size, mode + " " + label, r))
            be.v.ctl("copy-impl-set auto")
            be.v.ctl("emc-set on")

    log("%s shutdown: %s" % (name, with_guest(args, tmp, be, "v" + mode,
                                              mode, body)[1]))


def run_vswd_flowgen(args, tmp, res, sizes, flows):
    be = VswdBackend(args, tmp, "fg%d" % flows)

    def body(g):
        for size in sizes:
            guest_size(g, size, args.tx_first)
            for rules in ("in_port", "in_port,udp"):
                be.set_rules(rules)
                for emc in ("on", "off"):
                    be.v.ctl("emc-set " + emc)
                    label = "vswd %s emc %s" % (rules, emc)
                    r = measure(args, be, size)
                    res.setdefault((size, "flowgen%d" % flows, label),
                                   []).append(r)
                    log(fmt_row(size, "flowgen %d %s" % (flows, label), r))
            be.v.ctl("emc-set on")

    log("vswd shutdown: %s" % with_guest(
        args, tmp, be, "vfg%d" % flows, "flowgen", body, flows)[1])


def run_ovs(args, tmp, res, sizes, mode, flows=1):
    """OVS-DPDK with the guest in mode (pvp, mac or flowgen)."""
    be = OvsBackend(args, tmp, "ovs%s%d" % (mode, flows), max(sizes))
    if mode == "mac":
        points = [("normal", "on"), ("normal", "off")]
    else:
        points = [("in_port", "on"), ("in_port,udp", "on"),
                  ("in_port,udp", "off")]
        if flows > 1:
            points.append(("in_port,udp", "off+smc"))
        points = [(r, e) for r, e in points if wanted(args, r, e)]
    key = mode if mode != "flowgen" else "flowgen%d" % flows

    def body(g):
        for size in sizes:
            guest_size(g, size, args.tx_first)
            for rules, emc in points:
                be.set_point(rules, emc)
                label = "ovs %s emc %s" % (rules, emc)
                r = measure(args, be, size)
                res.setdefault((size, key, label), []).append(r)
                log(fmt_row(size, "%s %s" % (key, label), r))

    log("ovs stop: %s" % with_guest(args, tmp, be, "o" + key,
                                    mode, body, flows)[1])


def run_other(args, tmp, res, sizes, cls, mode, flows=1):
    be = OtherBackend(cls, args, tmp, "%s%s%d" % (cls.name, mode, flows))
    key = mode if mode != "flowgen" else "flowgen%d" % flows

    def body(g):
        for size in sizes:
            guest_size(g, size, args.tx_first)
            r = measure(args, be, size)
            res.setdefault((size, key, be.name), []).append(r)
            log(fmt_row(size, key + " " + be.name, r))

    with_guest(args, tmp, be, "o%s%s%d" % (cls.name, mode, flows), mode,
               body, flows)


MODES = ("pvp", "mac", "flowgen1", "flowgen1024")


def full(args, tmp):
    res = {}
    # Per size, every backend runs in turn with fresh processes (the
    # order reversed every other repetition), so each size's figures come
    # from the same few minutes of this shared machine's load.
    X, V = Xconnect, VhostBackend
    runs = [  # (backend, guest mode, run)
        ("xconnect", "pvp",
         lambda sz: run_other(args, tmp, res, sz, X, "pvp")),
        ("ref", "pvp",
         lambda sz: run_vswd_pvp(args, tmp, res, sz, build=args.ref_build,
                                 name="ref")),
        ("cap", "pvp",
         lambda sz: run_vswd_pvp(args, tmp, res, sz, build=args.cap_build,
                                 name="cap")),
        ("testpmd", "pvp",
         lambda sz: run_other(args, tmp, res, sz, V, "pvp")),
        ("vswd", "pvp", lambda sz: run_vswd_pvp(args, tmp, res, sz)),
        ("vswd", "mac", lambda sz: run_vswd_pvp(args, tmp, res, sz, "mac")),
        ("vswd", "flowgen1",
         lambda sz: run_vswd_flowgen(args, tmp, res, sz, 1)),
        ("vswd", "flowgen1024",
         lambda sz: run_vswd_flowgen(args, tmp, res, sz, 1024)),
        ("xconnect", "flowgen1024",
         lambda sz: run_other(args, tmp, res, sz, X, "flowgen", 1024)),
        ("ovs", "pvp", lambda sz: run_ovs(args, tmp, res, sz, "pvp")),
        ("ovs", "mac", lambda sz: run_ovs(args, tmp, res, sz, "mac")),
        ("ovs", "flowgen1",
         lambda sz: run_ovs(args, tmp, res, sz, "flowgen", 1)),
        ("ovs", "flowgen1024",
         lambda sz: run_ovs(args, tmp, res, sz, "flowgen", 1024)),
    ]
    runs = [fn for name, mode, fn in runs
            if name in args.backends.split(",") + ["ref"] * bool(
                args.ref_build) + ["cap"] * bool(args.cap_build) and
            (name != "ovs" or args.ovs) and
            mode in args.modes.split(",")]
    for size in args.sizes:
        for rep in range(args.reps):
            log("size %d, repetition %d of %d" % (size, rep + 1, args.reps))
            for run in (runs if rep % 2 == 0 else runs[::-1]):
                args.machine = c2c(args.build)
                args.machine["rep"] = rep
                run([size])
    report(args, res)
    return 0


def report(args, res):
    """Per guest mode and size: min and median of the adjusted cycles per
    packet over the repetitions, each repetition's state (F/S), ratios of
    the medians to testpmd net_vhost and to OVS's same point."""
    print("# Loopback benchmark: the backend forwards both directions on "
          "one PMD core; %d repetition(s), interleaved; load at start %s" %
          (args.reps, args.load))
    print()
    print("c/p = backend busy TSC cycles per packet received, scaled by "
          "the share of the window the poller was on a CPU; states: F/S "
          "per repetition (S: above %.1fx the point's minimum); /tp, /ovs: "
          "median c/p over testpmd net_vhost io's (pvp guest) and over "
          "OVS's same rules and EMC setting." % SLOW)
    csv_rows, panels = [], []
    for mode in MODES:
        keys = [k for k in res if k[1] == mode]
        if not keys:
            continue
        print()
        print("## guest %s" % {"pvp": "io loop (pvp)",
                                "mac": "mac engine (MAC-rewriting), normal",
                                "flowgen1": "flowgen, 1 flow",
                                "flowgen1024": "flowgen, 1024 flows"}[mode])
        print()
        rows, series = [], {}
        for k in sorted(keys, key=lambda k: (k[0], k[2])):
            size, _, lbl = k
            reps = res[k]
            sm = summary(reps, "acpp")
            tp = res.get((size, "pvp", "testpmd-vhost"))
            tpm = summary(tp, "acpp")["med"] if tp else float("nan")
            ov = None
            if lbl.startswith(("vswd ", "ref ", "cap ")):
                ov = res.get((size, mode, "ovs " + lbl.split(" ", 1)[1]))
            ovm = summary(ov, "acpp")["med"] if ov else float("nan")
            rows.append(["%d" % size, lbl, max(r["mpps"] for r in reps),
                         sm["min"], sm["med"], sm["med"] / tpm,
                         sm["med"] / ovm, states(reps, "acpp"),
                         min(r["oncpu"] for r in reps),
                         sum(r["drops"] for r in reps)])
            series.setdefault(lbl, []).append((size, sm["med"]))
            csv_rows += [dict(r, size=size, mode=mode, point=lbl)
                         for r in reps]
        print(md_table(["size", "backend / point", "Mpps max", "c/p min",
                        "c/p med", "/tp", "/ovs", "states", "onCPU% min",
                        "drops"], rows))
        panels.append((mode, series))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, "loopback.csv")
        write_csv(path, csv_rows, [
            "rep", "mode", "size", "point", "mpps", "gbps", "cpp", "acpp",
            "oncpu", "drops", "burst", "steal", "load", "c2c", "c2c_p90", "work",
            "cpu_be", "nvcsw_be"])
        png = os.path.join(args.out, "loopback.png")
        err = plot(png, "loopback: backend busy cycles per packet (median)",
                   [p for p in panels if p[0] in ("pvp", "flowgen1024")],
                   "TSC cycles / packet")
        log("csv %s; plot %s" % (path, err or png))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--testpmd", default=shutil.which("dpdk-testpmd"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes")
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tx-first", type=int, default=32,
                    help="bursts of 32 per guest port in flight (pvp)")
    ap.add_argument("--keep", action="store_true", help="keep logs")
    ap.add_argument("--copy-impls", action="store_true",
                    help="vswd pvp: every copy implementation too")
    ap.add_argument("--no-ovs", dest="ovs", action="store_false",
                    help="leave OVS-DPDK out")
    ap.add_argument("--backends", default="xconnect,testpmd,vswd,ovs",
                    help="full run: which backends")
    ap.add_argument("--out", help="directory for loopback.csv/.png")
    ap.add_argument("--ref-build", help="full run: a second vswd build "
                    "(e.g. main's) in the pvp rotation, points 'ref ...'")
    ap.add_argument("--cap-build", help="full run: a vswd build with "
                    "-DVSW_BENCH_COPY_CAP=N (each data copy cut to N "
                    "bytes) in the pvp rotation, points 'cap ...': the "
                    "loop's cost without its copies")
    ap.add_argument("--points", type=lambda v: v.split(";"),
                    help="full run: only these switch points, "
                    "RULES/EMC separated by ';' (e.g. "
                    "'in_port/on;in_port,udp/off'): fewer points, more "
                    "repetitions in the same time")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="full run: guest modes (pvp,mac,flowgen1,...)")
    args = ap.parse_args()
    args.load = "%.1f" % os.getloadavg()[0]
    args.machine = {}
    if args.ovs:
        ok, why = ovs_available()
        if not ok:
            log("ovs left out: " + why)
            args.ovs = False
    args.build = os.path.abspath(args.build)
    if args.ref_build:
        args.ref_build = os.path.abspath(args.ref_build)
    if args.cap_build:
        args.cap_build = os.path.abspath(args.cap_build)
    args.xconnect = os.path.join(args.build, "bench", "vsw-xconnect")
    if args.sizes:
        args.sizes = [int(s) for s in args.sizes.split(",")]
    else:
        args.sizes = QUICK_SIZES if args.quick else SIZES
    if args.seconds is None:
        args.seconds = 2.0 if args.quick else 2.0
    if not args.testpmd:
        log("dpdk-testpmd not found")
        return 1
    for exe in ("switch/vswd/vswd", "switch/vswctl/vswctl", "bench/vsw-xconnect"):
        if not os.access(os.path.join(args.build, exe), os.X_OK):
            log("%s not built in %s" % (exe, args.build))
            return 1
    tmp = tempfile.mkdtemp(prefix="vsw-loopback-")
    try:
        return quick(args, tmp) if args.quick else full(args, tmp)
    finally:
        if args.keep:
            log("logs in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
