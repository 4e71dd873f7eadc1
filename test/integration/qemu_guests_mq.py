#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""qemu_guests.py --case mq (CI: qemu-mq): guests with 1 and 2 vCPUs, each
with a NIC on a queues=1, a queues=2 (packed rings) and a queues=4 port;
port-show's per-pair state against what the guests use, per pair the
guests' queue counters == vswd's, then `ethtool -L` up and down under TCP
(see qemu_guests.py's docstring)."""
import os
import time

from vswtest.qemu import Nic
from qemu_guests_rig import MAC, NAMES, ping, tcp, tcp_during

MQ_QUEUES = (1, 2, 4)   # one NIC per port size, in each guest
MQ_CPUS = (1, 2)        # guest a, guest b
MQ_NET = "169.254.%d.%d/24"  # (10 + queues, guest)
MQ_PACKED = 2           # the queues=2 NICs have packed rings (packed=on)


def mq_qps(rig, k):
    return rig.vswd.port(rig.ports[k])["queue_pairs"]


def mq_read(rig):
    """Per queue pair, guest and vswd: {(gi, ni, qp): {...}}."""
    out = {}
    for (gi, ni), name in rig.ports.items():
        g = rig.guests[gi]
        gq = g.queue_stats(g.ifname(g.nics[ni]))
        for q in mq_qps(rig, (gi, ni)):
            qp = q["qp"]
            # ethtool -S lists the queues in use only (None: hidden)
            out[(gi, ni, qp)] = {
                "g_tx": gq.get(("tx", qp), {}).get("packets"),
                "g_rx": gq.get(("rx", qp), {}).get("packets"),
                "deq": q["deq_packets"], "enq": q["enq_packets"],
                "not_ready": q["enq_drop_not_ready"]}
    return out


def mq_check_state(rig, tag, want):
    """port-show per pair: want[(gi, ni)] pairs enabled (0..n-1), exactly
    those live, the others `disabled by guest` and re-steered to a live
    one; the guest's own `ethtool -l` agrees."""
    for k, n in sorted(want.items()):
        g = rig.guests[k[0]]
        name = "%s/%s" % (NAMES[k[0]], rig.ports[k])
        qps = mq_qps(rig, k)
        on = [q["qp"] for q in qps if q["enabled"]]
        live = [q["qp"] for q in qps if q["live"]]
        print("%s: %s pairs %s" % (tag, name, ", ".join(
            "%d:%s%s" % (q["qp"], "live" if q["live"] else q["why"],
                         "" if q["tx_to"] == q["qp"] else
                         "->%s" % q["tx_to"]) for q in qps)))
        rig.c.check(on == list(range(n)) and live == on,
                    "%s: %s enabled %s, live %s (want 0..%d)" % (
                        tag, name, on, live, n - 1))
        rig.c.check(all(q["tx_to"] == q["qp"] if q["live"] else
                        (q["tx_to"] in live and
                         q["why"] == "disabled by guest") for q in qps),
                    "%s: %s disabled pairs say why, send to live ones" %
                    (tag, name))
        if len(qps) > 1:
            rig.c.check(g.channels(g.ifname(g.nics[k[1]])) == (len(qps), n),
                        "%s: %s guest ethtool -l: %d of %d" % (
                            tag, name, n, len(qps)))


def mq_scenario(rig, tag, fn, want=None, used=()):
    """rig.scenario (totals) plus, per queue pair: the guest's ethtool -S
    queue counters == vswd's (tx_queue_N == deq on pair N, rx_queue_N ==
    enq on pair N), no send counted as not ready, and with want
    (pairs enabled through the window): nothing on the pairs beyond;
    used: (gi, ni) whose pairs beyond 0 must have carried guest TX."""
    rig.settled()
    q0 = mq_read(rig)
    rig.scenario(tag, fn)
    q1 = mq_read(rig)
    d = {k: {f: None if q1[k][f] is None or q0[k][f] is None else
             q1[k][f] - q0[k][f] for f in q1[k]} for k in q1}
    for (gi, ni, qp), v in sorted(d.items()):
        name = "%s/%s pair %d" % (NAMES[gi], rig.ports[(gi, ni)], qp)
        if v["g_tx"] or v["g_rx"] or v["deq"] or v["enq"]:
            print("%s: %s guest tx %s rx %s | vswd deq %d enq %d" % (
                tag, name, v["g_tx"], v["g_rx"], v["deq"], v["enq"]))
        # a queue the guest hid at either end has no counter to compare
        if v["g_tx"] is not None and v["g_rx"] is not None:
            rig.c.check(v["g_tx"] == v["deq"] and v["g_rx"] == v["enq"],
                        "%s: %s guest queue counters == vswd's" % (tag, name))
        rig.c.check(v["not_ready"] == 0, "%s: %s nothing sent to a pair "
                    "not ready" % (tag, name))
        if want is not None and qp >= want[(gi, ni)]:
            rig.c.check(v["deq"] == 0 and v["enq"] == 0,
                        "%s: %s (disabled) carried nothing" % (tag, name))
    for gi, ni in used:
        rig.c.check(sum(v["deq"] for k, v in d.items()
                        if k[:2] == (gi, ni) and k[2] > 0) > 0,
                    "%s: %s/%s pairs beyond 0 carried guest TX" % (
                        tag, NAMES[gi], rig.ports[(gi, ni)]))


def mq_pings(rig, cpu1=True):
    """Both ways on every NIC pair; guest b also from its second vCPU
    (its packets leave on queue 1 where it has two enabled)."""
    a, b = rig.guests
    for ni in range(len(MQ_QUEUES)):
        ping(a, b.nics[ni].ip, 4, tag="mq")
        ping(b, a.nics[ni].ip, 4, tag="mq")
        if cpu1:
            b.check("taskset -c 1 ping -c 4 -i 0.2 -W 5 %s" % a.nics[ni].ip,
                    60)


def case_mq(rig, args):
    """Guests with 1 and 2 vCPUs, each with a NIC on a queues=1, 2 and 4
    port; then `ethtool -L` up and down under TCP traffic."""
    lines = ["# mq: queues=1, 2, 4 ports; a has 1 vCPU, b 2",
             "pmd-sleep-set %d" % args.pmd_sleep]
    for n in NAMES:
        lines += ["port-add %s-q%d vhost-user queues=%d" % (n, q, q)
                  for q in MQ_QUEUES]
    lines.append("flow-add priority=0,actions=normal")
    rig.start_vswd(lines)
    for gi, n in enumerate(NAMES):
        for ni, q in enumerate(MQ_QUEUES):
            rig.ports[(gi, ni)] = "%s-q%d" % (n, q)
    rig.boot(lambda gi: [
        Nic(os.path.join(rig.run, "%s-q%d.sock" % (NAMES[gi], q)),
            MAC % (gi + 1, ni), MQ_NET % (10 + q, gi + 1), 1500, queues=q,
            dev_opts="packed=on" if q == MQ_PACKED else "")
        for ni, q in enumerate(MQ_QUEUES)], cpus_of=MQ_CPUS)
    rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=60)
    for (gi, ni), name in sorted(rig.ports.items()):
        rings = rig.vswd.port(name).get("rings")
        want = "packed" if MQ_QUEUES[ni] == MQ_PACKED else "split"
        rig.c.check(rings == want, "mq: %s says %s rings (%s)" % (
            name, want, rings))
    a, b = rig.guests
    # a guest uses min(pairs, vCPUs) pairs until ethtool says otherwise
    want = {(gi, ni): min(q, MQ_CPUS[gi]) for gi in range(2)
            for ni, q in enumerate(MQ_QUEUES)}
    mq_check_state(rig, "mq-start", want)

    def first():
        mq_pings(rig)
        for ni in range(len(MQ_QUEUES)):
            for gi, g in enumerate(rig.guests):
                peer = rig.guests[1 - gi].nics[ni]
                g.check("arp -i %s -s %s %s" % (g.ifname(g.nics[ni]),
                                                peer.ip, peer.mac))
    # b's second vCPU sends on its pair 1 (q2, q4): re-steered into a's 0
    mq_scenario(rig, "mq-start", first, want, used=[(1, 1), (1, 2)])
    q4 = MQ_QUEUES.index(4)
    ia, ib = a.ifname(a.nics[q4]), b.ifname(b.nics[q4])

    def changes():
        for g, i, n in ((b, ib, 4), (a, ia, 4), (b, ib, 1), (a, ia, 3)):
            time.sleep(0.3)
            g.set_channels(i, n)
            print("mq-ethtool: %s %s combined %d" % (g.name, i, n))
    mq_scenario(rig, "mq-ethtool", lambda: tcp_during(
        rig, q4, args.mq_mib, changes))
    want[(0, q4)], want[(1, q4)] = 3, 1
    mq_check_state(rig, "mq-ethtool", want)
    mq_scenario(rig, "mq-after", lambda: mq_pings(rig), want)
    b.set_channels(ib, 4)
    want[(1, q4)] = 4
    mq_check_state(rig, "mq-up", want)
    mq_scenario(rig, "mq-up", lambda: mq_pings(rig), want,
                used=[(1, q4)])
    # packed rings with two queue pairs: large pings and TCP both ways,
    # b's traffic from both vCPUs (its pair 1 must carry some)
    qp = MQ_QUEUES.index(MQ_PACKED)

    def packed_mq():
        ping(a, b.nics[qp].ip, 5, 8000, "mq-packed")
        ping(b, a.nics[qp].ip, 5, 8000, "mq-packed")
        b.check("taskset -c 1 ping -c 5 -i 0.2 -W 5 -s 8000 %s" %
                a.nics[qp].ip, 60)
        tcp(rig, a, b, qp, args.mq_packed_mib, "mq-packed")
        tcp(rig, b, a, qp, args.mq_packed_mib, "mq-packed")
    mq_scenario(rig, "mq-packed", packed_mq, want, used=[(1, qp)])
