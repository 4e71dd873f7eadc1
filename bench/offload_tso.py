#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""TSO through vswd (issue 12 part 2): a dpdk-testpmd guest sends TSO
frames to a receiving testpmd guest, three ways, interleaved in one run:

  tso-through  the receiver negotiated GUEST_TSO (testpmd --enable-lro):
               16000-byte TSO frames cross vswd whole, no checksum work;
  sw-gso       the same sender, a receiver without GUEST_TSO: vswd
               segments (MSS 1448) and checksums in software;
  off          both vswd ports with offloads=off: the sender sends
               1514-byte frames (asking for hw checksums and TSO, which
               vswd does not offer: testpmd computes them), the same bytes.

Sender: testpmd, port 1 net_pcap (infinite_rx over a pcap of TCP/IPv4
frames, one mbuf each), csum forwarding engine to port 0 (virtio_user)
with `csum set ip hw 0`, `csum set tcp hw 0`, `tso set 1448 0`.
Receiver: testpmd rxonly. vswd: one PMD; the rule in_port=SENDER
output:RECEIVER changes between points.

Per point: Gbps delivered to the receiver (vswd enq_bytes over the
window), vswd's backend busy cycles per byte and per delivered packet,
TSO frames and software segments seen; medians of --reps interleaved
repetitions. --check (the integration test): one short repetition, and
asserts which path each point took (TSO frames reached the LRO receiver
whole, the other got segments, nothing dropped).

By hand: PYTHONPATH=test/lib python3 bench/offload_tso.py --build build
"""
import argparse
import os
import statistics
import struct
import sys
import tempfile
import time

from vswtest.testpmd import Guest
from vswtest.vswd import Vswd, snap_delta

BIG = 16000   # TSO frame bytes (Ethernet frame)
MSS = 1448
PORTS = ("s1", "r1", "r2", "s0", "r0")
OFFL = (1 << 0) | (1 << 1) | (1 << 7) | (1 << 8) | (1 << 11) | (1 << 12)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def tcp_frame(payload, seq):
    ip_len = 20 + 20 + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, ip_len, seq & 0xffff, 0x4000,
                     64, 6, 0, b"\x0a\x00\x00\x01", b"\x0a\x00\x00\x02")
    s = 0
    for i in range(0, 20, 2):
        s += ip[i] << 8 | ip[i + 1]
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    ip = ip[:10] + struct.pack(">H", ~s & 0xffff) + ip[12:]
    tcp = struct.pack(">HHIIBBHHH", 40000, 5001, seq * payload, 1, 0x50,
                      0x10, 65535, 0, 0)
    eth = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + \
        b"\x08\x00"
    return eth + ip + tcp + bytes((seq + i) & 0xff for i in range(payload))


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)))
            f.write(fr)


def sender(args, tmp, sock, tag, frame_len, tso):
    pcap = os.path.join(tmp, "%s.pcap" % tag)
    write_pcap(pcap, [tcp_frame(frame_len - 54, i) for i in range(64)])
    vdev = "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap
    g = Guest(args.testpmd, [sock], tmp, tag, vdevs_extra=[vdev],
              extra=["--mbuf-size=%d" % (BIG + 512),
                     "--total-num-mbufs=4096", "--no-flush-rx"])
    g.ready()
    for line in ("port stop all", "port config 1 rx_offload scatter off",
                 "csum set ip %s 0" % ("hw" if tso else "sw"),
                 "csum set tcp %s 0" % ("hw" if tso else "sw"),
                 "tso set %d 0" % (MSS if tso else 0), "port start all",
                 "set fwd csum", "set portlist 1,0"):
        log("%s> %s: %s" % (tag, line, g.cmd(line).strip()[-120:]))
    return g


def receiver(args, tmp, sock, tag, lro):
    g = Guest(args.testpmd, [sock], tmp, tag,
              extra=["--enable-lro", "--enable-rx-cksum"] if lro else [])
    g.ready()
    g.cmd("set fwd rxonly")
    return g


def point(args, v, snd, rcv, sname, rname):
    v.ctl("flow-add priority=10,in_port=%s,actions=output:%s" % (sname,
                                                                 rname))
    rcv.cmd("start")
    snd.cmd("start")
    time.sleep(args.warmup)
    s0, t0 = v.snapshot(), time.monotonic()
    time.sleep(args.window)
    s1, t1 = v.snapshot(), time.monotonic()
    snd.cmd("stop")
    time.sleep(0.3)
    rcv.cmd("stop")
    v.ctl("flow-del priority=10,in_port=%s" % sname)
    x = snap_delta(s1, s0)
    r, s, pmd = x["ports"][rname], x["ports"][sname], x["pmd"]
    nbytes = max(r["enq_bytes"], 1)
    return {"gbps": r["enq_bytes"] * 8 / (t1 - t0) / 1e9,
            "cyc_byte": pmd["busy_cycles"] / nbytes,
            "cyc_pkt": pmd["busy_cycles"] / max(r["enq_packets"], 1),
            "deq_gso": s["deq_gso_packets"], "enq_gso": r["enq_gso_packets"],
            "sw_gso": pmd.get("sw_gso_packets", 0),
            "segs": pmd.get("sw_gso_extra_segments", 0),
            "drops": pmd.get("drop_offload", 0),
            "full": pmd.get("drop_tx_undelivered", 0),
            "rx_pkts": r["enq_packets"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--testpmd", default="dpdk-testpmd")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--window", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--check", action="store_true",
                    help="integration test: one short rep, assert paths")
    args = ap.parse_args()
    if args.check:
        args.reps, args.window, args.warmup = 1, 1.0, 0.5
    tmp = tempfile.mkdtemp(prefix="vsw-offload-")
    run = os.path.join(tmp, "run")
    os.makedirs(run)
    conf = os.path.join(tmp, "vswd.conf")
    with open(conf, "w") as f:
        for n in PORTS:
            f.write("port-add %s vhost-user%s\n" % (
                n, " offloads=off" if n.endswith("0") else ""))
    v = Vswd(args.build, run, tmp, "offload", config=conf,
             eal=["--no-huge", "-m", "1024", "-l", "0,1"])
    guests = []
    feats = {}
    rows = {"tso-through": [], "sw-gso": [], "off": []}
    fails = []
    try:
        v.ready()
        sock = {n: os.path.join(run, "%s.sock" % n) for n in PORTS}
        s1 = sender(args, tmp, sock["s1"], "s1", BIG, True)
        # asks for the same offloads: offloads=off must refuse them
        s0 = sender(args, tmp, sock["s0"], "s0", 1514, True)
        r1 = receiver(args, tmp, sock["r1"], "r1", True)
        r2 = receiver(args, tmp, sock["r2"], "r2", False)
        r0 = receiver(args, tmp, sock["r0"], "r0", False)
        guests = [s1, s0, r1, r2, r0]
        v.wait_up(list(PORTS), 2, timeout=60)
        feats = {n: p["features"] for n, p in v.ports().items()}
        log("features: %s" % ", ".join("%s 0x%x" % (n, feats[n])
                                      for n in PORTS))
        for rep in range(args.reps):
            for name, snd, rcv, sn, rn in (
                    ("tso-through", s1, r1, "s1", "r1"),
                    ("sw-gso", s1, r2, "s1", "r2"),
                    ("off", s0, r0, "s0", "r0")):
                r = point(args, v, snd, rcv, sn, rn)
                log("rep %d %-11s %6.2f Gbps %6.3f cycles/B %7.0f cycles/"
                    "pkt deq_gso %d enq_gso %d sw_gso %d (+%d) drop_offload %d "
                    "undelivered %d" % (
                        rep, name, r["gbps"], r["cyc_byte"], r["cyc_pkt"],
                        r["deq_gso"], r["enq_gso"], r["sw_gso"], r["segs"],
                        r["drops"], r["full"]))
                rows[name].append(r)
    finally:
        for g in guests:
            g.quit()
        v.stop()
    print("%-12s %8s %10s %11s %9s %9s %9s" % (
        "point", "Gbps", "cycles/B", "cycles/pkt", "deq_gso", "enq_gso",
        "sw_gso"))
    for name, rs in rows.items():
        if not rs:
            continue

        def med(k):
            return statistics.median(r[k] for r in rs)
        print("%-12s %8.2f %10.3f %11.0f %9d %9d %9d" % (
            name, med("gbps"), med("cyc_byte"), med("cyc_pkt"),
            med("deq_gso"), med("enq_gso"), med("sw_gso")))
    if args.check:
        t, s, o = rows["tso-through"][0], rows["sw-gso"][0], rows["off"][0]
        for ok, what in (
                (t["deq_gso"] > 0 and t["enq_gso"] > 0 and t["sw_gso"] == 0,
                 "tso-through: TSO frames reached the LRO receiver whole"),
                (s["deq_gso"] > 0 and s["enq_gso"] == 0 and s["sw_gso"] > 0
                 and s["segs"] > 0,
                 "sw-gso: vswd segmented for the receiver without TSO"),
                (o["deq_gso"] == 0 and o["rx_pkts"] > 0 and
                 feats["s0"] & OFFL == 0 and feats["r0"] & OFFL == 0 and
                 feats["s1"] & (1 << 11) and feats["r1"] & (1 << 7),
                 "off: offloads=off ports negotiated none, plain frames "
                 "delivered"),
                (t["drops"] + s["drops"] + o["drops"] == 0,
                 "no offload drops at vswd's output")):
            print("%s %s" % ("ok  " if ok else "FAIL", what))
            if not ok:
                fails.append(what)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
