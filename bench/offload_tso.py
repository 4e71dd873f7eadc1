#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""TSO through vswd (issue 12 part 2): a dpdk-testpmd guest sends TSO
frames to a receiving testpmd guest, three ways, interleaved in one run:

  tso-through  the receiver negotiated GUEST_TSO4/6 + GUEST_CSUM (rx
               offloads tcp_lro, tcp_cksum, udp_cksum): the TSO frames
               (--frame bytes, default 16000) cross vswd whole;
  sw-gso       the same sender, a receiver without them: vswd segments
               (MSS 1448) and computes the checksums in software;
  off          both vswd ports with offloads=off: the sender sends
               1514-byte frames (asking for hw checksums, which vswd does
               not offer: testpmd computes them).

Sender: testpmd, port 1 net_pcap (infinite_rx over a pcap of 64 TCP/IPv4
frames, one mbuf each), csum forwarding engine to port 0 (virtio_user)
with `csum set ip hw 0`, `csum set tcp hw 0`, `tso set 1448 0`.
Receiver: testpmd rxonly, 1024 rx descriptors. vswd: one PMD; the rule
in_port=SENDER output:RECEIVER changes between points.

Per point: Gbps delivered to the receiver (vswd enq_bytes over the
window), vswd's PMD busy cycles per byte taken from the sender and per
byte delivered, TSO frames whole / segmented, receiver ring-full and
budget drops; medians of --reps interleaved repetitions (markdown table
on stdout, --csv, --plot).

--check (integration test testpmd-offload): the senders' pcaps without
infinite_rx (64 frames once per point), the receivers forward into pcap
files; asserts exact counts (64 frames whole to the GUEST_TSO receiver,
64 x 12 segments to the other, 64 plain frames with offloads=off), the
payloads and checksums in the pcaps, the per-port software offload
counters in port-show and the metrics, and that nothing was dropped.

By hand: PYTHONPATH=test/lib python3 bench/offload_tso.py --build build
"""
import argparse
import csv
import os
import shutil
import subprocess
import statistics
import struct
import sys
import tempfile
import time

from vswtest.payload import write_pcap
from vswtest.testpmd import Guest
from vswtest.vswd import Vswd, snap_delta

BIG = 16000   # TSO frame bytes (Ethernet frame)
MSS = 1448
NFRAMES = 64  # frames in the sender's pcap (--check sends them once)
PORTS = ("s1", "r1", "r2", "s0", "r0")
OFFL = (1 << 0) | (1 << 1) | (1 << 7) | (1 << 8) | (1 << 11) | (1 << 12)


T0 = time.monotonic()


def log(msg):
    print("%6.1f %s" % (time.monotonic() - T0, msg), file=sys.stderr,
          flush=True)


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


def sender(args, tmp, sock, tag, frame_len):
    """Starts a sender guest (not yet ready: guests start in parallel)."""
    pcap = os.path.join(tmp, "%s.pcap" % tag)
    write_pcap(pcap, [tcp_frame(frame_len - 54, i) for i in range(NFRAMES)])
    vdev = "net_pcap0,rx_pcap=%s,infinite_rx=%d" % (pcap, not args.check)
    return Guest(args.testpmd, [sock], tmp, tag, vdevs_extra=[vdev],
                 extra=["--mbuf-size=%d" % (args.frame + 512),
                        "--total-num-mbufs=4096", "--no-flush-rx"])


def sender_setup(g, tag, mss):
    """Checksums and TSO asked of the hardware (vswd): csum fwd with
    `csum set ... hw` and `tso set MSS`. On an offloads=off port testpmd
    computes the checksums itself; it would take `tso set` anyway (22.11
    stores tso_segsz before it refuses) and send TSO-marked frames with
    the TCP checksum left at the pseudo-header sum, so mss is 0 there."""
    for line in ("port stop all", "port config 1 rx_offload scatter off",
                 "csum set ip hw 0", "csum set tcp hw 0",
                 "tso set %d 0" % mss, "port start all",
                 "set fwd csum", "set portlist 1,0"):
        log("%s> %s: %s" % (tag, line, g.cmd(line).strip()[-120:]))


def receiver(args, tmp, sock, tag):
    """rxonly (benchmark), or io forwarding into a pcap file (--check);
    all 1024 ring entries posted (testpmd's default is 512)."""
    extra = ["--rxd=1024"]
    if args.rx_mbuf:
        extra.append("--mbuf-size=%d" % args.rx_mbuf)
    vdevs = ["net_pcap0,tx_pcap=%s" % os.path.join(tmp, "%s.rx.pcap" % tag)]
    return Guest(args.testpmd, [sock], tmp, tag, extra=extra,
                 vdevs_extra=vdevs if args.check else [])


def receiver_setup(args, g, tag, lro):
    """lro: the GUEST_TSO receiver. Its rx offloads TCP_LRO + TCP/UDP
    checksums make virtio request GUEST_TSO4/6 + GUEST_CSUM; not
    --enable-lro --enable-rx-cksum: the latter asks for IPV4_CKSUM too,
    which virtio does not have (dev_info rx_offload_capa), so
    rte_eth_dev_configure() failed and the port kept the features of its
    probe (no offloads at all; session 3's features 0x150008000)."""
    lines = ["port stop all"]
    if args.check:
        lines.append("port config 1 rx_offload scatter off")
    if lro:
        lines += ["port config 0 rx_offload %s on" % o
                  for o in ("tcp_lro", "tcp_cksum", "udp_cksum")]
    lines += ["port start all"]
    lines += (["set fwd io", "set portlist 0,1"] if args.check
              else ["set fwd rxonly"])
    for line in lines:
        log("%s> %s: %s" % (tag, line, g.cmd(line).strip()[-120:]))


def point(args, v, snd, rcv, sname, rname):
    """One timed window (the benchmark)."""
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
    return row(snap_delta(s1, s0), sname, rname, t1 - t0)


def row(x, sname, rname, secs):
    r, s, pmd = x["ports"][rname], x["ports"][sname], x["pmd"]
    busy = pmd["busy_cycles"]
    return {"gbps": r["enq_bytes"] * 8 / secs / 1e9,
            # per byte taken from the sender: what the backend's work
            # costs (a receiver that falls behind costs the copy anyway)
            "cyc_byte": busy / max(s["deq_bytes"], 1),
            "cyc_dbyte": busy / max(r["enq_bytes"], 1),
            "cyc_pkt": busy / max(r["enq_packets"], 1),
            "deq_pkts": s["deq_packets"], "deq_gso": s["deq_gso_packets"],
            "enq_gso": r["enq_gso_packets"], "rx_pkts": r["enq_packets"],
            "enq_bytes": r["enq_bytes"],
            "sw_gso": r.get("sw_gso_packets", pmd.get("sw_gso_packets", 0)),
            "segs": r.get("sw_gso_segments", 0),
            "csum": r.get("sw_csum_packets", 0),
            "drops": pmd.get("drop_offload", 0),
            "full": r["enq_drop_ring_full"],
            "budget": r["enq_drop_budget"],
            "undelivered": pmd.get("drop_tx_undelivered", 0)}


def check_point(args, tmp, v, snd, rcv, sname, rname):
    """The sender's 64 frames once (pcap without infinite_rx): wait until
    vswd has taken them all and its output to the receiver stopped
    moving, and until the receiver's pcap holds what vswd delivered."""
    v.ctl("flow-add priority=10,in_port=%s,actions=output:%s" % (sname,
                                                                 rname))
    s0 = v.snapshot()
    rcv.cmd("start")
    snd.cmd("port stop 1")  # reopens the pcap: its 64 frames again
    snd.cmd("port start 1")
    snd.cmd("start")
    pcap = os.path.join(tmp, "%s.rx.pcap" % rname)
    end, last, x = time.monotonic() + 20, None, None
    while time.monotonic() < end:
        x = snap_delta(v.snapshot(), s0)
        got = x["ports"][rname]["enq_packets"]
        if x["ports"][sname]["deq_packets"] >= NFRAMES and got == last and \
                len(read_pcap(pcap)) >= got:
            break
        last = got
        time.sleep(0.3)
    snd.cmd("stop")
    rcv.cmd("stop")
    v.ctl("flow-del priority=10,in_port=%s" % sname)
    return row(snap_delta(v.snapshot(), s0), sname, rname, 1.0)


def read_pcap(path):
    frames = []
    with open(path, "rb") as f:
        data = f.read()
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack_from("<IIII", data, off)[2]
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


def csum16(b):
    if len(b) & 1:
        b += b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def l4_ok(fr):
    """IPv4 header and TCP checksums of frame fr are complete and right."""
    ip = fr[14:34]
    tl = struct.unpack(">H", ip[2:4])[0]
    seg = fr[34:14 + tl]
    pseudo = ip[12:20] + struct.pack(">BBH", 0, 6, len(seg))
    return csum16(ip) == 0xffff and csum16(pseudo + seg) == 0xffff


def payloads(frames, frame_len):
    """{seq: payload} of the received TCP frames (seq of their first byte);
    None when two disagree."""
    got = {}
    for fr in frames:
        tl = struct.unpack(">H", fr[16:18])[0]
        seq = struct.unpack(">I", fr[38:42])[0]
        pl = fr[54:14 + tl]
        if got.get(seq, pl) != pl:
            return None
        got[seq] = pl
    return got


def expect_payloads(frame_len, mss):
    """What the receiver must hold: the sender's NFRAMES payloads, cut at
    mss (0: whole), keyed by sequence number."""
    want = {}
    for i in range(NFRAMES):
        p = frame_len - 54
        pl = tcp_frame(p, i)[54:]
        step = mss or p
        for o in range(0, p, step):
            want[i * p + o] = pl[o:o + step]
    return want


def metric(page, name, port):
    """The value of name{port="port"} on a metrics page (None: absent)."""
    for ln in page.splitlines():
        if ln.startswith('%s{port="%s"} ' % (name, port)):
            return int(ln.split()[-1])
    return None


def verify(args, tmp, t, s, o, feats, page):
    """The --check assertions; a list of (ok, what)."""
    p = args.frame - 54
    nseg = -(-p // MSS)
    prom = [(metric(page, "vsw_port_sw_gso_frames_total", n),
             metric(page, "vsw_port_sw_gso_segments_total", n))
            for n in ("r1", "r2")]
    r1 = read_pcap(os.path.join(tmp, "r1.rx.pcap"))
    r2 = read_pcap(os.path.join(tmp, "r2.rx.pcap"))
    r0 = read_pcap(os.path.join(tmp, "r0.rx.pcap"))
    return [
        (feats["r1"] & 0x182 == 0x182 and feats["r2"] & OFFL == 0 and
         feats["s1"] & 0x1801 == 0x1801,
         "r1 negotiated GUEST_CSUM+GUEST_TSO4/6, r2 none, s1 "
         "CSUM+HOST_TSO4/6"),
        (t["deq_gso"] == NFRAMES and t["enq_gso"] == NFRAMES and
         t["rx_pkts"] == NFRAMES and t["sw_gso"] == 0 and t["segs"] == 0 and
         len(r1) == NFRAMES and all(len(f) == args.frame for f in r1),
         "tso-through: %d TSO frames crossed as %d packets of %d bytes "
         "(want %d of %d), none segmented in software" % (
             t["deq_gso"], len(r1), len(r1[0]) if r1 else 0, NFRAMES,
             args.frame)),
        (payloads(r1, args.frame) == expect_payloads(args.frame, 0),
         "tso-through: the receiver's payloads are the sender's"),
        (s["deq_gso"] == NFRAMES and s["enq_gso"] == 0 and
         s["rx_pkts"] == NFRAMES * nseg and s["sw_gso"] == NFRAMES and
         s["segs"] == NFRAMES * nseg and len(r2) == NFRAMES * nseg,
         "sw-gso: %d TSO frames segmented in software into %d segments, "
         "%d received (want %d)" % (s["sw_gso"], s["segs"], len(r2),
                                    NFRAMES * nseg)),
        (payloads(r2, args.frame) == expect_payloads(args.frame, MSS) and
         all(l4_ok(f) for f in r2),
         "sw-gso: segments carry the sender's payloads at MSS %d, IP and "
         "TCP checksums right" % MSS),
        (o["deq_gso"] == 0 and o["rx_pkts"] == NFRAMES and
         len(r0) == NFRAMES and all(l4_ok(f) for f in r0) and
         feats["s0"] & OFFL == 0 and feats["r0"] & OFFL == 0,
         "off: offloads=off ports negotiated none, %d plain frames with "
         "right checksums" % len(r0)),
        (prom == [(0, 0), (NFRAMES, NFRAMES * nseg)],
         "metrics: vsw_port_sw_gso_{frames,segments}_total r1 %s, r2 %s" % (
             prom[0], prom[1])),
        (t["drops"] + s["drops"] + o["drops"] == 0 and
         t["undelivered"] + s["undelivered"] + o["undelivered"] == 0,
         "nothing dropped at vswd's output")]


FIELDS = ("rep", "point", "gbps", "cyc_byte", "cyc_dbyte", "cyc_pkt",
          "deq_pkts", "deq_gso", "rx_pkts", "enq_gso", "sw_gso", "segs",
          "full", "budget", "drops", "undelivered")


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for name, rs in rows.items():
            for rep, r in enumerate(rs):
                w.writerow(dict(r, rep=rep, point=name))


def plot(path, rows):
    """Bar panels (medians, every repetition as a point): Gbps and vswd's
    busy cycles per byte taken from the sender and per byte delivered."""
    names = [n for n in rows if rows[n]]
    lines = ["set terminal pngcairo size 1200,420 font ',9' noenhanced",
             "set output '%s'" % path,
             "set multiplot layout 1,3 title 'TSO through vswd "
             "(bench/offload_tso.py): medians, dots = repetitions'",
             "set style fill solid 0.5", "set boxwidth 0.6", "set grid y",
             "set yrange [0:*]", "set xrange [-0.6:%f]" % (len(names) - 0.4),
             "set xtics (%s)" % ", ".join('"%s" %d' % (n, i)
                                          for i, n in enumerate(names))]
    for key, title in (("gbps", "Gbps delivered"),
                       ("cyc_byte", "backend cycles per byte taken"),
                       ("cyc_dbyte", "backend cycles per byte delivered")):
        lines.append("$m << EOD")
        lines += ["%d %g" % (i, statistics.median(r[key] for r in rows[n]))
                  for i, n in enumerate(names)]
        lines += ["EOD", "$r << EOD"]
        lines += ["%d %g" % (i, r[key]) for i, n in enumerate(names)
                  for r in rows[n]]
        lines += ["EOD", "set title '%s'" % title,
                  "plot $m using 1:2 with boxes notitle, "
                  "$r using 1:2 with points pt 7 ps 0.6 notitle"]
    lines.append("unset multiplot")
    r = subprocess.run(["gnuplot"], input="\n".join(lines) + "\n",
                       text=True, capture_output=True, timeout=60)
    if r.returncode != 0:
        log("gnuplot failed: %s" % r.stderr.strip()[-300:])


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--testpmd", default="dpdk-testpmd")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--window", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--csv", help="every repetition's row to this file")
    ap.add_argument("--plot", help="a PNG of the medians (gnuplot)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the directory with logs and pcaps")
    ap.add_argument("--frame", type=int, default=BIG,
                    help="TSO frame bytes (Ethernet frame, <= 65000)")
    ap.add_argument("--rx-mbuf", type=int, default=0,
                    help="receivers' --mbuf-size (their mergeable buffer "
                    "size + 128; 0: testpmd's default, 2176)")
    ap.add_argument("--check", action="store_true",
                    help="integration test: one short rep, assert paths")
    args = ap.parse_args()
    if args.check:
        args.reps, args.window, args.warmup = 1, 1.0, 0.5
    return args


def run_points(args, tmp, v, guests, rows):
    """Starts the guests (into guests: main quits them), then measures
    every point --reps times into rows: (features per port, the metrics
    page with --check)."""
    sock = {n: os.path.join(tmp, "run", "%s.sock" % n) for n in PORTS}
    # s0 asks for the same offloads: offloads=off must refuse them
    for tag, mk in (("s1", lambda: sender(args, tmp, sock["s1"], "s1",
                                          args.frame)),
                    ("s0", lambda: sender(args, tmp, sock["s0"], "s0",
                                          1514)),
                    ("r1", lambda: receiver(args, tmp, sock["r1"], "r1")),
                    ("r2", lambda: receiver(args, tmp, sock["r2"], "r2")),
                    ("r0", lambda: receiver(args, tmp, sock["r0"], "r0"))):
        guests.append(mk())
    for g in guests:
        g.ready()
    s1, s0, r1, r2, r0 = guests
    log("guests up")
    sender_setup(s1, "s1", MSS)
    sender_setup(s0, "s0", 0)
    for g, tag in ((r1, "r1"), (r2, "r2"), (r0, "r0")):
        receiver_setup(args, g, tag, tag == "r1")
    v.wait_up(list(PORTS), 2, timeout=60)
    feats = {n: p["features"] for n, p in v.ports().items()}
    log("features: %s" % ", ".join("%s 0x%x" % (n, feats[n])
                                  for n in PORTS))
    for rep in range(args.reps):
        for name, snd, rcv, sn, rn in (
                ("tso-through", s1, r1, "s1", "r1"),
                ("sw-gso", s1, r2, "s1", "r2"),
                ("off", s0, r0, "s0", "r0")):
            r = (check_point(args, tmp, v, snd, rcv, sn, rn)
                 if args.check else point(args, v, snd, rcv, sn, rn))
            log("rep %d %-11s %6.2f Gbps %6.3f cycles/B (%6.3f per "
                "delivered B) %7.0f cycles/pkt deq %d deq_gso %d "
                "enq %d enq_gso %d sw_gso %d segs %d drop_offload %d "
                "ring_full %d budget %d undelivered %d" % (
                    rep, name, r["gbps"], r["cyc_byte"], r["cyc_dbyte"],
                    r["cyc_pkt"], r["deq_pkts"], r["deq_gso"],
                    r["rx_pkts"], r["enq_gso"], r["sw_gso"], r["segs"],
                    r["drops"], r["full"], r["budget"],
                    r["undelivered"]))
            rows[name].append(r)
    page = v.ctl("metrics") if args.check else ""
    return feats, page


def print_table(rows):
    """The medians per point, a markdown table."""
    print("| point | Gbps | cycles/B taken | cycles/B delivered | "
          "frames taken | TSO whole | sw segmented | segments | "
          "ring full | budget drops |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, rs in rows.items():
        if not rs:
            continue

        def med(k):
            return statistics.median(r[k] for r in rs)
        print("| %s | %.2f | %.2f | %.2f | %d | %d | %d | %d | %d | %d |" % (
            name, med("gbps"), med("cyc_byte"), med("cyc_dbyte"),
            med("deq_pkts"), med("enq_gso"), med("sw_gso"), med("segs"),
            med("full"), med("budget")))


def main():
    args = parse_args()
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
    page = ""
    try:
        v.ready()
        feats, page = run_points(args, tmp, v, guests, rows)
    finally:
        for g in guests:
            g.quit()
        v.stop()
    print_table(rows)
    if args.csv:
        write_csv(args.csv, rows)
    if args.plot:
        plot(args.plot, rows)
    if args.check:
        t, s_, o = rows["tso-through"][0], rows["sw-gso"][0], rows["off"][0]
        for ok, what in verify(args, tmp, t, s_, o, feats, page):
            print("%s %s" % ("ok  " if ok else "FAIL", what))
            if not ok:
                fails.append(what)
    if not fails and not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        log("logs and pcaps kept in %s" % tmp)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
