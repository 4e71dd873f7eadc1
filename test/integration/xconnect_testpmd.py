#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration test: vsw-xconnect between two virtio_user ports of a real
dpdk-testpmd guest.

testpmd sends a known number of packets of mixed sizes (64, 1500, 3500,
5500, 7500 and 9000 bytes; multi-segment, mergeable RX buffers) on both
ports with `start tx_first N` in rxonly mode, so every packet crosses
vsw-xconnect exactly once (port 0 -> A -> B -> port 1 and back). Then the
counters of both sides must agree, per direction:

    testpmd TX (accepted) = xconnect dequeued + dequeue drops
    xconnect dequeued     = xconnect delivered + enqueue drops
    xconnect delivered    = testpmd RX (+ RX errors), bytes too

and, end to end, sent = received + counted drops. Two rounds run against
the same vsw-xconnect: the guest quits and comes back between them, so the
second round exercises destroy_device/new_device, ring-base hand-over and
counter folding (server mode: testpmd reconnects; client mode: testpmd is
the server and vsw-xconnect reconnects to it).

Every step has a timeout; processes are ours (Popen) and are killed by pid
in a finally block; sockets and runtime files live in a fresh temp dir.
"""
import argparse
import os
import re
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vswtest import (Proc, check, delta, drain, finish, parse_fwd_stats,  # noqa: E402,F401
                     parse_port_stats, parse_xstats, wait_path)

TXPKTS = "64,1436,2000,2000,2000,1500"  # txsplit rand: 64 .. 9000 B
BURST = 32
QUEUE_SIZE = 1024  # guest rings: a tx_first batch fits in the RX ring


def testpmd_argv(args, tmp, rnd, server):
    vdevs = []
    for i, s in enumerate(("a.sock", "b.sock")):
        v = ("net_virtio_user%d,path=%s,queues=%d,mrg_rxbuf=1,in_order=0,"
             "queue_size=%d" % (i, os.path.join(tmp, s), args.queues,
                                QUEUE_SIZE))
        if server:
            v += ",server=1"
        vdevs.append("--vdev=" + v)
    # stdbuf: testpmd's printf output must reach the pipe before the
    # prompt that cmdline write()s unbuffered, or outputs interleave.
    return ["stdbuf", "-oL", args.testpmd, "--no-huge", "-m", "512", "--no-pci",
            "--file-prefix=vswit%d-tp%d" % (os.getpid(), rnd),
            "--lcores", "0@1,1@0", "--log-level=*:notice"] + vdevs + [
            "--", "-i", "--total-num-mbufs=16384", "--max-pkt-len=9600",
            "--enable-scatter", "--burst=%d" % BURST,
            "--rxq=%d" % args.queues, "--txq=%d" % args.queues]


def xconnect_argv(args, tmp, client):
    argv = [args.xconnect, "--no-huge", "-m", "256", "--no-pci",
            "--no-shconf", "--file-prefix=vswit%d-xc" % os.getpid(),
            "--lcores", "0@0,1@1", "--log-level=*:notice",
            "--log-level=vsw.*:info", "--",
            "--a", os.path.join(tmp, "a.sock"),
            "--b", os.path.join(tmp, "b.sock"),
            "--queues", str(args.queues)]
    if client:
        argv.append("--client")
    return argv


def xc_snapshot(xc):
    """SIGUSR1 -> the next stats block, as {'A': {...}, 'B': {...}, ...}."""
    start = xc.mark()
    xc.p.send_signal(signal.SIGUSR1)
    m = xc.wait_for(r"(?s)^stats begin reason=signal.*?^stats end$", start, 10)
    return parse_xc_block(m.group(0))


def parse_xc_block(block):
    res = {}
    for line in block.splitlines():
        words = line.split()
        if len(words) < 2 or words[0] != "stats":
            continue
        kv = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        key = kv.pop("port", None) or words[1].split("=")[0]
        res[key] = {k: (int(v) if re.fullmatch(r"\d+", v) else v)
                    for k, v in kv.items()}
    return res


def run_round(args, tmp, rnd, xcs, server_tp, failures):
    """One guest lifetime: connect, send, drain, compare, quit. xcs holds
    the vsw-xconnect Proc; in client mode it is started here, once
    testpmd (the server) has created its sockets."""
    tp = Proc("testpmd%d" % rnd, testpmd_argv(args, tmp, rnd, server_tp),
              tmp, stdin=True)
    try:
        if server_tp:  # testpmd creates the sockets, xconnect connects
            # testpmd accepts on a.sock before it even creates b.sock;
            # xconnect retries b.sock until it is there
            wait_path(os.path.join(tmp, "a.sock"), tp)
            if not xcs:
                xcs.append(Proc("xconnect", xconnect_argv(args, tmp, True),
                                tmp))
                xcs[0].wait_for(r"^xconnect ready", 0, 30)
        xc = xcs[0]
        tp.wait_for(r"testpmd> ", 0, 60)
        before = xc_snapshot(xc)
        for cmd in ("set fwd rxonly", "set txpkts " + TXPKTS,
                    "set txsplit rand"):
            tp.cmd(cmd)
        wait_xc_up(xc, rnd, 2 * args.queues)
        fwd = {0: {"TX-dropped": 0}, 1: {"TX-dropped": 0}}
        for _ in range(args.batches):
            # tx_first sends all its bursts before rxonly polls: keep a
            # batch small enough for the receiving guest's RX ring
            tp.cmd("start tx_first %d" % args.bursts, 30)
            drain(tp)
            f = parse_fwd_stats(tp.cmd("stop", 30))
            for p in (0, 1):
                fwd[p]["TX-dropped"] += f[p]["TX-dropped"]
        ps = parse_port_stats(tp.cmd("show port stats all"))
        xs = parse_xstats(tp.cmd("show port xstats all"))
        time.sleep(0.3)
        x = delta(xc_snapshot(xc), before)
        tp.send("quit")
        tp.p.wait(30)
    finally:
        tp.stop()
    compare(rnd, fwd, ps, xs, x, args.batches * args.bursts * BURST *
            args.queues, failures)


def compare(rnd, fwd, ps, xs, x, attempted, failures):
    tag = "round %d" % rnd
    deq_drops = ("deq_drop_bad_desc", "deq_drop_too_large",
                 "deq_drop_no_mbuf", "deq_drop_short_hdr")
    enq_drops = ("enq_drop_ring_full", "enq_drop_not_ready",
                 "enq_drop_too_large", "enq_drop_bad_desc",
                 "enq_drop_short_hdr")
    for src, dst, name in ((0, 1, "A"), (1, 0, "B")):
        other = "B" if name == "A" else "A"
        xa, xb = x[name], x[other]
        d = "%s %s->%s" % (tag, name, other)
        sent = ps[src]["TX-packets"]
        recv = ps[dst]["RX-packets"] + ps[dst]["RX-errors"]
        xdeq = xa["deq_packets"] + sum(xa[k] for k in deq_drops)
        xenq = xb["enq_packets"] + sum(xb[k] for k in enq_drops)
        drops = sum(xa[k] for k in deq_drops) + sum(xb[k] for k in enq_drops)
        print("%s: testpmd sent %d (+%d tx-dropped of %d), xconnect "
              "dequeued %d delivered %d dropped %d, testpmd received %d"
              % (d, sent, fwd[src]["TX-dropped"], attempted,
                 xa["deq_packets"], xb["enq_packets"], drops, recv))
        check(sent + fwd[src]["TX-dropped"] == attempted,
              "%s: testpmd accounted for all %d packets" % (d, attempted),
              failures)
        check(sent == xdeq, "%s: testpmd TX == xconnect dequeued + drops"
              % d, failures)
        check(ps[src]["TX-bytes"] == xa["deq_bytes"],
              "%s: TX bytes == dequeued bytes" % d, failures)
        check(xa["deq_packets"] == xenq,
              "%s: dequeued == delivered + enqueue drops" % d, failures)
        check(xb["enq_packets"] == recv,
              "%s: delivered == testpmd RX" % d, failures)
        check(xb["enq_bytes"] == ps[dst]["RX-bytes"],
              "%s: delivered bytes == testpmd RX bytes" % d, failures)
        check(sent == recv + drops,
              "%s: sent == received + counted drops" % d, failures)
        check(recv >= sent // 2 and recv > 0,
              "%s: most packets arrived (%d of %d)" % (d, recv, sent),
              failures)
        big = sum(v for k, v in xs.get(dst, {}).items()
                  if re.fullmatch(r"rx_q\d+_size_1519_max_packets", k))
        check(big > 0, "%s: jumbo frames (>1518 B) received: %d" % (d, big),
              failures)
        check(x[name]["err_ring_broken"] == 0, "%s: ring intact" % d,
              failures)


def wait_xc_up(xc, rnd, vrings, timeout=30.0):
    """Both ports up (connects counter reached the round number)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        s = xc_snapshot(xc)
        if all(s[p]["running"] == 1 and s[p]["queues_live"] == vrings and
               s[p]["connects"] >= rnd for p in ("A", "B")):
            return
        time.sleep(0.2)
    raise RuntimeError("xconnect ports not up for round %d" % rnd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--xconnect", required=True)
    ap.add_argument("--testpmd", default=shutil.which("dpdk-testpmd"))
    ap.add_argument("--mode", choices=("server", "client"), default="server")
    ap.add_argument("--bursts", type=int, default=6,
                    help="tx_first bursts (of 32) per batch")
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--queues", type=int, default=1,
                    help="queue pairs per port (MQ when > 1)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = ap.parse_args()
    if not args.testpmd or not os.access(args.testpmd, os.X_OK):
        print("dpdk-testpmd not found: skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="vsw-it-")
    client = args.mode == "client"
    failures = []
    xcs = []
    print("mode %s, temp dir %s" % (args.mode, tmp))
    try:
        if not client:
            xcs.append(Proc("xconnect", xconnect_argv(args, tmp, False), tmp))
            xcs[0].wait_for(r"^xconnect ready", 0, 30)
        for rnd in range(1, args.rounds + 1):
            run_round(args, tmp, rnd, xcs, client, failures)
        xc = xcs[0]
        start = xc.mark()
        rc = xc.stop(signal.SIGTERM)
        final = parse_xc_block(xc.wait_for(
            r"(?s)^stats begin reason=exit.*?^stats end$", start, 5).group(0))
        check(rc == 0, "xconnect exited cleanly (rc %s, all mbufs back)"
              % rc, failures)
        check(final["mempool"]["avail"] == final["mempool"]["size"],
              "mempool full at exit", failures)
        for p in ("A", "B"):
            check(final[p]["connects"] == args.rounds,
                  "port %s: %d guest lifetimes seen" % (p, args.rounds),
                  failures)
    except Exception as e:  # report, clean up, fail
        failures.append(str(e))
        print("ERROR: %s" % e)
    finally:
        for xc in xcs:
            xc.stop(signal.SIGKILL)
    return finish(tmp, failures, args.keep)


if __name__ == "__main__":
    sys.exit(main())
