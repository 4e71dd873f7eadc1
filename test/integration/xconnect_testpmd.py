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
import shutil
import signal
import sys
import tempfile
import time

from vswtest.checks import Checks
from vswtest.proc import wait_path
from vswtest.testpmd import Guest, jumbo_rx, parse_fwd_stats
from vswtest.vswd import VIRTQ_DEQ_DROPS, VIRTQ_ENQ_DROPS, delta
from vswtest.xconnect import Xconnect

TXPKTS = "64,1436,2000,2000,2000,1500"  # txsplit rand: 64 .. 9000 B
BURST = 32
QUEUE_SIZE = 1024  # guest rings: a tx_first batch fits in the RX ring


def start_xconnect(args, tmp, client):
    return Xconnect(args.xconnect, os.path.join(tmp, "a.sock"),
                    os.path.join(tmp, "b.sock"), tmp, "xc",
                    queues=args.queues, client=client, info=True)


def run_round(args, tmp, rnd, xcs, server_tp, c):
    """One guest lifetime: connect, send, drain, compare, quit. xcs holds
    the vsw-xconnect; in client mode it is started here, once testpmd
    (the server) has created its sockets."""
    socks = [os.path.join(tmp, s) for s in ("a.sock", "b.sock")]
    g = Guest(args.testpmd, socks, tmp, "tp%d" % rnd, queues=args.queues,
              server=server_tp, queue_size=QUEUE_SIZE,
              extra=["--burst=%d" % BURST], devargs=args.devargs)
    try:
        if server_tp:  # testpmd creates the sockets, xconnect connects
            # testpmd accepts on a.sock before it even creates b.sock;
            # xconnect retries b.sock until it is there
            wait_path(socks[0], g.p)
            if not xcs:
                xcs.append(start_xconnect(args, tmp, True))
        xc = xcs[0]
        g.ready()
        before = xc.snapshot()
        for cmd in ("set fwd rxonly", "set txpkts " + TXPKTS,
                    "set txsplit rand"):
            g.cmd(cmd)
        xc.wait_up(rnd, 2 * args.queues)
        fwd = {0: {"TX-dropped": 0}, 1: {"TX-dropped": 0}}
        for _ in range(args.batches):
            # tx_first sends all its bursts before rxonly polls: keep a
            # batch small enough for the receiving guest's RX ring
            g.cmd("start tx_first %d" % args.bursts, 30)
            g.settle(15)
            f = parse_fwd_stats(g.cmd("stop", 30))
            for p in (0, 1):
                fwd[p]["TX-dropped"] += f[p]["TX-dropped"]
        ps = g.port_stats()
        xs = g.xstats()
        time.sleep(0.3)
        x = delta(xc.snapshot(), before)
        g.p.send("quit")
        g.p.p.wait(30)
    finally:
        g.stop()
    compare(rnd, fwd, ps, xs, x, args.batches * args.bursts * BURST *
            args.queues, c)


def compare(rnd, fwd, ps, xs, x, attempted, c):
    tag = "round %d" % rnd
    deq_drops, enq_drops = VIRTQ_DEQ_DROPS, VIRTQ_ENQ_DROPS
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
        c.check(sent + fwd[src]["TX-dropped"] == attempted,
                "%s: testpmd accounted for all %d packets" % (d, attempted))
        c.check(sent == xdeq, "%s: testpmd TX == xconnect dequeued + drops"
                % d)
        c.check(ps[src]["TX-bytes"] == xa["deq_bytes"],
                "%s: TX bytes == dequeued bytes" % d)
        c.check(xa["deq_packets"] == xenq,
                "%s: dequeued == delivered + enqueue drops" % d)
        c.check(xb["enq_packets"] == recv,
                "%s: delivered == testpmd RX" % d)
        c.check(xb["enq_bytes"] == ps[dst]["RX-bytes"],
                "%s: delivered bytes == testpmd RX bytes" % d)
        c.check(sent == recv + drops,
                "%s: sent == received + counted drops" % d)
        c.check(recv >= sent // 2 and recv > 0,
                "%s: most packets arrived (%d of %d)" % (d, recv, sent))
        big = jumbo_rx(xs, dst)
        c.check(big > 0, "%s: jumbo frames (>1518 B) received: %d" % (d, big))
        c.check(x[name]["err_ring_broken"] == 0, "%s: ring intact" % d)


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
    ap.add_argument("--devargs", default="",
                    help="extra virtio_user arguments (packed_vq=1, ...)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = ap.parse_args()
    if not args.testpmd or not os.access(args.testpmd, os.X_OK):
        print("dpdk-testpmd not found: skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="vsw-it-")
    client = args.mode == "client"
    c = Checks()
    xcs = []
    print("mode %s, temp dir %s" % (args.mode, tmp))
    try:
        if not client:
            xcs.append(start_xconnect(args, tmp, False))
        for rnd in range(1, args.rounds + 1):
            run_round(args, tmp, rnd, xcs, client, c)
        rc, final = xcs[0].exit_stats(signal.SIGTERM)
        c.check(rc == 0, "xconnect exited cleanly (rc %s, all mbufs back)"
                % rc)
        c.check(final["mempool"]["avail"] == final["mempool"]["size"],
                "mempool full at exit")
        for p in ("A", "B"):
            c.check(final[p]["connects"] == args.rounds,
                    "port %s: %d guest lifetimes seen" % (p, args.rounds))
    except Exception as e:  # report, clean up, fail
        c.fail("ERROR: %s" % e)
    finally:
        for xc in xcs:
            xc.stop(signal.SIGKILL)
    return c.finish(tmp, args.keep)


if __name__ == "__main__":
    sys.exit(main())
