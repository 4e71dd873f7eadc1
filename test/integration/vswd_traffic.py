#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration test: vswd switching between the two virtio_user ports of a
real dpdk-testpmd guest (mergeable RX buffers), one case per run:

  rules    explicit in_port cross-connect rules
  normal   the default config (`normal`, MAC learning)
  jumbo    9000 B multi-segment frames both ways (mergeable RX)
  mq       two queue pairs per port, traffic on both queues
  mq-subset
           the guest uses fewer queue pairs than the port offers
           (virtio_user queues=Q, testpmd --rxq/--txq=N < Q: Q=2 N=1,
           Q=4 N=2): vswd serves exactly the N pairs, re-steers nothing,
           counts both ways per pair against testpmd's xstats
  restart-server / restart-client
           the guest quits mid-traffic and comes back: vswd as vhost-user
           server, or as client of testpmd's server=1 sockets
  churn    flow-del/flow-add 100 times during traffic
  sigterm / shutdown
           graceful stop under traffic (SIGTERM, `vswctl shutdown`)

Traffic is testpmd's io forwarding primed with `start tx_first` (the
packets circulate guest port 0 -> vm1 -> vswd -> vm2 -> guest port 1 ->
port 0 ...), then the guest stops and drains its RX rings in rxonly mode,
so the counters are exact. Per port and end to end, over the same window:

    guest TX = vswd dequeued + dequeue drops
    vswd delivered = guest RX (packets and bytes)
    sent = received + drops counted by vswd (by reason)

Every case ends with a graceful stop of vswd: exit code 0, every mbuf back
("mbuf pool: 0 in use"), sockets unlinked. Each step has a timeout;
processes are ours and stopped by pid in finally blocks.

--devargs adds virtio_user arguments to every guest port (packed_vq=1,
mrg_rxbuf=0: the packed-ring paths); with packed_vq=1 each port must have
negotiated VIRTIO_F_RING_PACKED. --mbuf-size sets the guests' mbufs (big
ones let jumbo frames fit one buffer without mergeable RX).

usage: vswd_traffic.py --build BUILD_DIR --case CASE [--seconds S]
       [--devargs ARGS] [--mbuf-size N]
"""
import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import time

from vswtest.checks import Checks, identity, vswd_end
from vswtest.payload import Verdict, frame, read_pcap, sweep_sizes, \
    write_pcap
from vswtest.testpmd import Guest, jumbo_rx, segments
from vswtest.vswd import Vswd, snap_delta

CASES = ("rules", "normal", "jumbo", "mq", "mq-subset", "restart-server",
         "restart-client", "churn", "sigterm", "shutdown")
MIXED = "64,1436,2000,2000,2000,1500"  # with txsplit rand: 64 .. 9000 B
XCONNECT = ("priority=100,in_port=vm1,actions=output:vm2",
            "priority=100,in_port=vm2,actions=output:vm1")


class Case:
    def __init__(self, args, tmp, checks):
        self.args = args
        self.tmp = tmp
        self.run = os.path.join(tmp, "run")
        self.checks = checks
        self.name = args.case
        self.queues = 2 if args.case == "mq" else 1
        self.client = args.case == "restart-client"
        self.vswd = None
        self.guests = []
        self.gsocks = [os.path.join(self.run if not self.client else tmp,
                                    "%s.sock" % n) for n in ("vm1", "vm2")]

    def check(self, cond, what):
        return self.checks.check(cond, what)

    def run_case(self, case_fn):
        """Run case_fn(self); an exception is a failure. Whatever it left
        running is killed; returns the exit status of the report."""
        try:
            case_fn(self)
        except Exception as e:  # report, clean up, fail
            self.checks.fail("ERROR: %s" % e)
        finally:
            for g in self.guests:
                g.kill()
            if self.vswd is not None:
                self.vswd.stop(signal.SIGKILL)
        return self.checks.finish(self.tmp, self.args.keep)

    def config(self):
        """Start-up commands for vswd (None: its default config)."""
        if self.name == "normal":
            return None
        lines = ["# %s" % self.name]
        # contents-1k's guest rings are 4096 entries: above the default
        # max-ring-size (1024)
        opts = " max-ring-size=4096" if self.name == "jumbo" else ""
        for n, s in zip(("vm1", "vm2"), self.gsocks):
            if self.client:
                lines.append("port-add %s vhost-user-client path=%s%s" %
                             (n, s, opts))
            else:
                lines.append("port-add %s vhost-user queues=%d%s" %
                             (n, self.queues, opts))
        if self.name == "churn":
            # the churned rules fall back to this one while deleted
            lines.append("flow-add priority=0,actions=normal")
        lines += ["flow-add " + r for r in XCONNECT]
        path = os.path.join(self.tmp, "vswd.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def start_vswd(self):
        os.makedirs(self.run, exist_ok=True)
        self.vswd = Vswd(self.args.build, self.run, self.tmp, self.name,
                         config=self.config())
        self.vswd.ready()

    def start_guest(self, life, used=None):
        if self.client:  # a killed server guest leaves its sockets behind
            for s in self.gsocks:
                if os.path.exists(s):
                    os.unlink(s)
        g = Guest(self.args.testpmd, self.gsocks, self.tmp,
                  "%s%d" % (self.name, life), queues=self.queues,
                  server=self.client, devargs=self.args.devargs,
                  extra=mbuf_extra(self.args) + ([] if used is None else [
                      "--rxq=%d" % used, "--txq=%d" % used]))
        self.guests.append(g)
        g.ready()
        self.vswd.wait_up(("vm1", "vm2"), 2 * (used or self.queues))
        self.check_packed()
        return g

    def check_packed(self):
        """With packed_vq=1 the ports run packed rings (bit 34)."""
        if "packed_vq=1" not in self.args.devargs:
            return
        for n, p in self.vswd.ports().items():
            self.check(p["features"] & (1 << 34),
                       "%s negotiated VIRTIO_F_RING_PACKED (%#x)" %
                       (n, p["features"]))

    def traffic(self, g, seconds, size=None, during=None):
        """io-forwarding loop for `seconds`, then drain; returns the guest's
        port stats and vswd's counter deltas over the window."""
        g.cmd("clear port stats all")
        before = self.vswd.snapshot()
        g.cmd("set fwd io")
        if size:
            g.cmd("set txpkts " + segments(size))
        else:
            g.cmd("set txpkts " + MIXED)
            g.cmd("set txsplit rand")
        g.cmd("start tx_first %d" % self.args.tx_first)
        end = time.monotonic() + seconds
        if during:
            during(g)
        time.sleep(max(0.0, end - time.monotonic()))
        g.cmd("stop")
        g.drain()
        gs = g.port_stats()
        time.sleep(0.2)
        x = snap_delta(self.vswd.snapshot(), before)
        return gs, x

    def identity(self, tag, gs, x):
        pairs = {0: "vm1", 1: "vm2"}
        sent, recv, _ = identity(self.checks, tag, gs, pairs, x)
        self.check(recv > 0 and recv >= sent // 2,
                   "%s: traffic flowed (%d of %d received)" % (tag, recv,
                                                               sent))
        return sent, recv

    def finish(self, how="shutdown"):
        """Validators silent, graceful stop: exit 0, all mbufs back,
        sockets unlinked."""
        v, self.vswd = self.vswd, None
        vswd_end(self.checks, v, how)


def mbuf_extra(args):
    return ["--mbuf-size=%d" % args.mbuf_size] if args.mbuf_size else []


def pcap_streams(c, tag, sizes):
    """One input pcap file per queue, each frame of sizes twice in a
    shuffled order; returns (frames per queue, the net_pcap vdev that
    reads them and writes what comes back)."""
    rng = random.Random(7)
    streams, vdev = {}, "net_pcap0"
    for q in range(c.queues):
        order = sizes * 2
        rng.shuffle(order)
        frames = [frame(q, i, n) for i, n in enumerate(order)]
        streams[q] = len(frames)
        path = os.path.join(c.tmp, "%s-in%d.pcap" % (tag, q))
        write_pcap(path, frames)
        vdev += ",rx_pcap=%s,tx_pcap=%s" % (
            path, os.path.join(c.tmp, "%s-out%d.pcap" % (tag, q)))
    return streams, vdev


def pcap_guest(c, tag, vdev, mbuf_size, queue_size):
    """The guest that forwards pcap -> port 0, port 1 -> pcap (chained,
    io), ready to start."""
    # --no-flush-rx: testpmd would otherwise read (and free) the pcap
    # frames before forwarding starts
    extra = ["--port-topology=chained", "--no-flush-rx"]
    if mbuf_size:
        extra.append("--mbuf-size=%d" % mbuf_size)
    if queue_size > 1024:  # the rings' buffers come from this pool
        extra.append("--total-num-mbufs=%d" % (16 * queue_size))
    g = Guest(c.args.testpmd, c.gsocks, c.tmp, "%s-%s" % (c.name, tag),
              queues=c.queues, extra=extra, vdevs_extra=[vdev],
              queue_size=queue_size, devargs=c.args.devargs,
              eal=getattr(c.args, "eal", ()))
    c.guests.append(g)
    g.ready()
    # net_pcap has no scatter offload (it chains mbufs anyway): the global
    # --enable-scatter fails its start-up; restart it without
    g.cmd("port stop 2")
    g.cmd("port config 2 rx_offload scatter off")
    g.cmd("port start 2")
    c.vswd.wait_up(("vm1", "vm2"), 2 * c.queues)
    g.cmd("set portlist 2,0,1")
    g.cmd("set fwd io")
    g.cmd("clear port stats all")
    return g


def pcap_forward(c, g, total):
    """Forward until the guest has read total frames from its pcap files
    (or 20 s); returns (the guest's port stats, vswd's counter delta).
    The guest quits, which closes the pcap files."""
    before = c.vswd.snapshot()
    g.cmd("start")
    end = time.monotonic() + 20
    while time.monotonic() < end:
        st = g.port_stats()
        if st.get(2, {}).get("RX-packets", 0) >= total:
            break
        time.sleep(0.2)
    g.settle()
    g.cmd("stop")
    gs = g.port_stats()
    time.sleep(0.2)
    x = snap_delta(c.vswd.snapshot(), before)
    g.quit()
    return gs, x


def check_contents(c, tag, v, gs, x, buf):
    """The verdict v on what came back, against the guest's stats gs and
    vswd's counters x; buf: the guest's RX buffer size."""
    c.check(gs[2]["RX-packets"] == v.sent,
            "%s: guest read every frame from its pcap files (%d of %d)" %
            (tag, gs[2]["RX-packets"], v.sent))
    sent, recv, drops = identity(c.checks, tag, {0: gs[0], 1: gs[1]},
                                 {0: "vm1", 1: "vm2"}, x)
    guest_drops = gs[2]["RX-packets"] - gs[0]["TX-packets"]
    c.check(v.bad == 0 and v.dup == 0 and v.reordered == 0,
            "%s: every frame received intact, once, in order "
            "(bad %d dup %d reordered %d)" % (tag, v.bad, v.dup,
                                              v.reordered))
    c.check(v.good == gs[1]["RX-packets"] and
            gs[2]["TX-packets"] == gs[1]["RX-packets"],
            "%s: what the guest received is what it captured, all good "
            "(%d good, %d received, %d captured)" % (
                tag, v.good, gs[1]["RX-packets"], gs[2]["TX-packets"]))
    c.check(v.missing == guest_drops + drops,
            "%s: missing %d = guest TX drops %d + vswd's counted drops %d" %
            (tag, v.missing, guest_drops, drops))
    # the point is the buffer counts: every count up to 9000 B's arrived
    counts = {(n + 12 + buf - 1) // buf for n in v.good_lens}
    want = set(range(1, (9000 + 12 + buf - 1) // buf + 1))
    c.check(want <= counts, "%s: frames of 1..%d guest buffers arrived "
            "intact (%d of %d frames; buffer counts %s)" % (
                tag, max(want), v.good, v.sent, sorted(counts)))


def contents(c, tag, mbuf_size=None, queue_size=1024):
    """Packet contents end to end. testpmd cannot check payloads, so a
    second guest reads frames that carry their own proof (vswtest.payload:
    sequence number, length, CRC-32) from a pcap file per queue (net_pcap
    port 2), sends them on port 0 (vm1), and writes what port 1 (vm2)
    receives to a pcap file per queue: pcap q -> port 0 q -> vswd ->
    port 1 q -> pcap q (chained topology, io forwarding). Every frame
    received must be intact and unique, in order per stream and queue, and
    every frame not received a drop counted by the guest (TX) or vswd.
    The sizes sweep the buffer-count boundaries of the guest's RX buffers
    (data room + the 12 B header in the headroom) and 2 KiB buffers,
    38 .. 9000 B; a smaller mbuf_size makes 9000 B frames span 9+
    buffers."""
    data_room = (mbuf_size or 2176) - 128
    sizes = sweep_sizes([data_room + 12, 2048])
    streams, vdev = pcap_streams(c, tag, sizes)
    g = pcap_guest(c, tag, vdev, mbuf_size, queue_size)
    gs, x = pcap_forward(c, g, sum(streams.values()))
    v = Verdict(streams)
    for q in range(c.queues):
        for fr in read_pcap(os.path.join(c.tmp, "%s-out%d.pcap" % (tag, q))):
            v.rx(fr, "q%d " % q)
    print("%s: %d sizes %d..%d B, guest buffers %d B: %s" % (
        tag, len(sizes), sizes[0], sizes[-1], data_room + 12, v))
    check_contents(c, tag, v, gs, x, data_room + 12)


def case_simple(c):
    """rules, normal, jumbo, mq."""
    c.start_vswd()
    g = c.start_guest(1)
    size = 9000 if c.name == "jumbo" else None
    gs, x = c.traffic(g, c.args.seconds, size)
    c.identity(c.name, gs, x)
    if c.name == "jumbo":
        for p, name in ((0, "vm1"), (1, "vm2")):
            c.check(gs[p]["RX-bytes"] == 9000 * gs[p]["RX-packets"],
                    "jumbo: guest port %d received only 9000 B frames "
                    "(%d B in %d)" % (p, gs[p]["RX-bytes"],
                                      gs[p]["RX-packets"]))
            feats = c.vswd.ports()[name]["features"]
            c.check(feats & (1 << 15),
                    "jumbo: %s negotiated VIRTIO_NET_F_MRG_RXBUF (%#x): "
                    "2 KiB guest buffers, so 9000 B arrive merged" %
                    (name, feats))
    if c.name in ("jumbo", "rules", "normal"):
        xs = g.xstats()
        for p in (0, 1):
            big = jumbo_rx(xs, p)
            c.check(big > 0, "%s: guest port %d received jumbo frames: %d" %
                    (c.name, p, big))
    if c.name == "mq":
        # The guest sends on both queues (tx_first primes every stream);
        # vswd polls both, and with one PMD and two queue pairs it keeps
        # each packet on the queue number it came in on (the switch core
        # picks the tx queue), so the guest receives on both queues too.
        xs = g.xstats()
        for p in (0, 1):
            for q in range(c.queues):
                n = xs.get(p, {}).get("tx_q%d_good_packets" % q, 0)
                c.check(n > 0, "mq: guest port %d sent %d on queue %d" %
                        (p, n, q))
                n = xs.get(p, {}).get("rx_q%d_good_packets" % q, 0)
                c.check(n > 0, "mq: guest port %d received %d on queue %d" %
                        (p, n, q))
        rxq = c.vswd.ctl("pmd-rxq-show --json")["rxqs"]
        c.check(len(rxq) == 4, "mq: vswd polls 4 rx queues (%d)" % len(rxq))
    if c.name == "rules":
        hits = [r["n_packets"] for r in c.vswd.ctl("flow-dump --json")
                ["rules"]]
        c.check(len(hits) == 2 and all(h > 0 for h in hits),
                "rules: both cross-connect rules hit (%s)" % hits)
    g.quit()
    if c.name == "jumbo" and "packed_vq=1" in c.args.devargs:
        # 9000 B in 1152 B mbufs leave the guest's TX as 10-slot chains
        # beside indirect ones: DPDK 22.11's packed TX then writes an
        # indirect buffer's id into the table, not the ring slot, and
        # completions go to the wrong buffers (a guest driver bug, any
        # backend); 2 KiB mbufs keep its TX single-slot
        contents(c, "contents-2k")
    elif c.name == "jumbo":  # 9000 B in 1152 B mbufs: up to 9 buffers
        contents(c, "contents-2k")
        contents(c, "contents-1k", mbuf_size=1152, queue_size=4096)
    elif c.name == "mq":
        contents(c, "contents-mq")
    c.finish()


def mq_pairs(c):
    """{port: [queue_pairs entries]} from port-show."""
    return {n: p["queue_pairs"] for n, p in c.vswd.ports().items()}


def case_mq_subset(c):
    """testpmd uses `used` of the `offered` queue pairs of each port."""
    for offered, used in ((2, 1), (4, 2)):
        tag = "mq-subset %d of %d" % (used, offered)
        c.queues = offered
        c.start_vswd()
        g = c.start_guest(offered, used)
        for n, qps in sorted(mq_pairs(c).items()):
            print("%s: %s %s" % (tag, n, ", ".join(
                "%d:%s" % (q["qp"], "live" if q["live"] else q["why"])
                for q in qps)))
            c.check([q["qp"] for q in qps if q["live"]] == list(range(used))
                    and [q["qp"] for q in qps if q["enabled"]] ==
                    list(range(used)),
                    "%s: %s serves pairs 0..%d only" % (tag, n, used - 1))
        q0 = mq_pairs(c)
        gs, x = c.traffic(g, c.args.seconds / 2)
        q1 = mq_pairs(c)
        c.identity(tag, gs, x)
        xs = g.xstats()
        for p, n in ((0, "vm1"), (1, "vm2")):
            for a, b in zip(q0[n], q1[n]):
                q = a["qp"]
                d = {k: b[k] - a[k] for k in ("deq_packets", "enq_packets",
                                              "enq_drop_not_ready")}
                gtx = xs.get(p, {}).get("tx_q%d_good_packets" % q, 0)
                grx = xs.get(p, {}).get("rx_q%d_good_packets" % q, 0)
                print("%s: %s pair %d: guest tx %d rx %d | vswd deq %d "
                      "enq %d" % (tag, n, q, gtx, grx, d["deq_packets"],
                                  d["enq_packets"]))
                # stats were cleared at the window's start (traffic())
                c.check(d["deq_packets"] == gtx and d["enq_packets"] == grx,
                        "%s: %s pair %d guest queue counters == vswd's" %
                        (tag, n, q))
                c.check(d["enq_drop_not_ready"] == 0,
                        "%s: %s pair %d nothing sent to a pair not ready" %
                        (tag, n, q))
                c.check(q < used or d["deq_packets"] + d["enq_packets"] == 0,
                        "%s: %s pair %d (unused) carried nothing" %
                        (tag, n, q))
                c.check(q >= used or (gtx > 0 and grx > 0),
                        "%s: %s pair %d carried traffic both ways" %
                        (tag, n, q))
        g.quit()
        c.finish()


def case_restart(c):
    """The guest quits mid-traffic (twice), comes back, traffic resumes."""
    c.start_vswd()
    pid = c.vswd.p.p.pid
    for life in (1, 2, 3):
        g = c.start_guest(life)
        if life < 3:
            g.cmd("clear port stats all")
            g.cmd("set fwd io")
            g.cmd("set txpkts " + MIXED)
            g.cmd("set txsplit rand")
            g.cmd("start tx_first %d" % c.args.tx_first)
            time.sleep(c.args.seconds / 3)
            # mid-traffic: quit while forwarding (first life), or kill -9
            # (second): vswd sees the connection drop either way
            if life == 1:
                g.quit()
            else:
                g.kill()
            c.vswd.ports()  # still serving
            continue
        gs, x = c.traffic(g, c.args.seconds / 3)
        c.identity("after restart", gs, x)
        g.quit()
    c.check(c.vswd.p.p.poll() is None and c.vswd.p.p.pid == pid,
            "vswd survived %d guest lifetimes" % 3)
    conns = {n: p["connects"] for n, p in c.vswd.ports().items()}
    c.check(all(v == 3 for v in conns.values()),
            "each port saw 3 connections: %s" % conns)
    c.finish()


def case_churn(c):
    """flow-del/flow-add 100 times during traffic."""
    c.start_vswd()
    g = c.start_guest(1)
    n = {"del": 0, "add": 0, "drop": 0}

    def churn(_g):
        v = c.vswd
        for i in range(100):
            for r in XCONNECT:
                match = r.split(",actions=")[0]
                v.ctl("flow-del " + match)
                n["del"] += 1
                v.ctl("flow-add " + r)
                n["add"] += 1
            if i % 10 == 0:  # a short-lived drop rule: counted drops
                v.ctl("flow-add priority=200,in_port=vm1,udp,actions=drop")
                v.ctl("flow-del priority=200,in_port=vm1,udp")
                n["drop"] += 1

    t0 = time.monotonic()
    gs, x = c.traffic(g, c.args.seconds, during=churn)
    print("churn: %d del, %d add, %d drop rules in %.1f s" % (
        n["del"], n["add"], n["drop"], time.monotonic() - t0))
    c.identity("churn", gs, x)
    rules = c.vswd.ctl("flow-dump --json")["rules"]
    c.check(len(rules) == 3, "churn: 3 rules left (%d)" % len(rules))
    # forwarding still exact after the churn
    gs, x = c.traffic(g, 1.0)
    c.identity("after churn", gs, x)
    c.check(x["pmd"].get("drop_action", 0) == 0 and
            x["pmd"].get("drop_no_rule", 0) == 0,
            "after churn: no rule drops")
    g.quit()
    c.finish()


def case_stop_under_traffic(c):
    """sigterm / shutdown while the guest forwards."""
    c.start_vswd()
    g = c.start_guest(1)
    g.cmd("set fwd io")
    g.cmd("set txpkts " + MIXED)
    g.cmd("set txsplit rand")
    g.cmd("start tx_first %d" % c.args.tx_first)
    time.sleep(c.args.seconds)
    before = c.vswd.pmd_stats()["rx_packets"]
    time.sleep(0.5)
    c.check(c.vswd.pmd_stats()["rx_packets"] > before, "traffic flowing")
    c.finish("sigterm" if c.name == "sigterm" else "shutdown")
    c.check(g.p.p.poll() is None, "guest survived the backend's exit")
    g.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--testpmd", default=shutil.which("dpdk-testpmd"))
    ap.add_argument("--case", choices=CASES, required=True)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--tx-first", type=int, default=8,
                    help="bursts of 32 per guest port in flight")
    ap.add_argument("--devargs", default="",
                    help="extra virtio_user arguments (packed_vq=1, ...)")
    ap.add_argument("--mbuf-size", type=int, default=0)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = ap.parse_args()
    if not args.testpmd or not os.access(args.testpmd, os.X_OK):
        print("dpdk-testpmd not found: skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="vswd-it-")
    checks = Checks()
    print("case %s, temp dir %s" % (args.case, tmp))
    c = Case(args, tmp, checks)
    if args.case.startswith("restart"):
        return c.run_case(case_restart)
    if args.case == "mq-subset":
        return c.run_case(case_mq_subset)
    if args.case == "churn":
        return c.run_case(case_churn)
    if args.case in ("sigterm", "shutdown"):
        return c.run_case(case_stop_under_traffic)
    return c.run_case(case_simple)


if __name__ == "__main__":
    sys.exit(main())
