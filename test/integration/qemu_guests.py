#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration test: two Linux guests (QEMU, TCG, Debian's 6.1 kernel, see
vswtest/qemu.py) switched by vswd with the `normal` rule.

One pair of boots serves every scenario: each guest has three NICs, one per
vhost-user mode and one with packed virtqueues, on separate subnets and on
six vswd ports in one L2 domain:

    guest a  nic0 169.254.1.1 --- a-srv  vswd  b-srv --- nic0 169.254.1.2  guest b
             nic1 169.254.2.1 --- a-cli        b-cli --- nic1 169.254.2.2
             nic2 169.254.3.1 --- a-pk         b-pk  --- nic2 169.254.3.2

    *-srv  vswd is the vhost-user server (QEMU connects)
    *-cli  vswd is the client (QEMU owns the socket: server=on,wait=off)
    *-pk   server mode, QEMU's virtio-net-pci packed=on: port-show must say
           packed rings there (split on the others)

Scenarios, per mode ("packed" the third; the subnet picks the NIC pair):
    ping   a -> b and b -> a, ARP resolved through the switch's flood
    jumbo  8000-byte pings at MTU 9000 (8042-byte frames)
    tcp    --mib MiB of random data a -> b, then b -> a (busybox nc),
           md5 of what was received == md5 of what was sent

Around each scenario the counters of all four ports settle and are read:
per port, guest tx_packets/tx_bytes (/sys/class/net/IF/statistics) ==
vswd deq_packets (+ dequeue drops)/deq_bytes, vswd enq_packets/enq_bytes ==
guest rx_packets/rx_bytes, and over the switch sent = received + counted
drops (vswtest.checks.identity). Floods reach the NICs of the other pair:
the per-port identities hold for them too. Neighbours are pinned after the
first ping, so no ARP refresh lands between two reads.

vswd runs at nice 19: its PMD busy-polls a core, and the guests' TCG vCPU
threads must win that core when they have work (the PMD still runs
whenever a guest waits for a packet).

--case mq-subset: 1-vCPU guests on queues=2 ports; the guest enables one
pair of two: the ports come up, pings pass (issue 12's reproduction).

--case mq (CI: qemu-mq): guest a has 1 vCPU, b 2; each has a NIC on a
queues=1, a queues=2 (packed=on: packed rings) and a queues=4 port (one
boot, several scenarios; mq-packed: 8000-byte pings and TCP md5 both ways
over the packed pair, b sending from both vCPUs).
port-show's per-pair state (enabled, live, why, tx_to) against what the
guest uses (min(pairs, vCPUs), then `ethtool -L`), and per pair the
guest's `ethtool -S` queue counters == vswd's, no send counted as not
ready, disabled pairs carry nothing; b's second vCPU sends on its pair 1,
which vswd re-steers into a's only pair; then `ethtool -L` up and down on
both guests during a TCP transfer (md5), and up again.

--case restart (CI: qemu-restart): QEMU is the vhost-user server, vswd's
client ports are kept in its --state file; vswd is killed with SIGKILL
during a TCP transfer and a ping and started again: it reconnects, the
transfer's md5 matches, the new vswd's counters add up.

mq and restart run vswd with the PMD idle back-off (--pmd-sleep, default
200 us) as well as nice 19: TCG guests with 2 vCPUs need both cores.

Exit 77 (skipped) when qemu-system-x86_64 is not installed.

--case offload (issue 12, part 2): nic0 of both guests negotiates CSUM and
TSO (frames up to 64 KiB cross vswd whole), guest b's nic1 has every
offload off in QEMU (vswd segments and checksums for it); TCP both ways
with md5 on each pair, and vswd's counters say which path was taken.

usage: qemu_guests.py --build BUILD_DIR [--case default|mq-subset|offload]
                      [--mib N] [--vswd-nice N] [--keep]
"""
import argparse
import os
import re
import signal
import sys
import tempfile
import time

from vswtest import qemu as qemu_guest
from vswtest.checks import Checks, identity, vswd_end
from vswtest.qemu import Nic, QemuGuest
from vswtest.vswd import Vswd, snap_delta

VSWD_NICE = 19
MODES = ("server", "client", "packed")
SUBNET = {"server": "169.254.1", "client": "169.254.2", "packed": "169.254.3"}
MAC = "52:54:00:12:%02x:%02x"  # (guest, nic)
NAMES = ("a", "b")


class Rig:
    """vswd, the guests, and counter snapshots over all their NICs."""

    def __init__(self, args, tmp, checks):
        self.args, self.tmp, self.c = args, tmp, checks
        self.run = os.path.join(tmp, "run")
        os.makedirs(self.run)
        self.vswd = None
        self.guests = []
        self.ports = {}  # (guest index, nic index) -> vswd port name
        self.times = []

    def start_vswd(self, lines, tag="qemu", vswd_args=()):
        path = os.path.join(self.tmp, "vswd.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        # --trace-vhost: the vhost-user messages and vsw's vring states
        eal = (["--log-level=lib.vhost.config:info",
                "--log-level=vsw.vport:debug"]
               if getattr(self.args, "trace_vhost", False) else [])
        self.vswd = Vswd(self.args.build, self.run, self.tmp, tag,
                         config=path, nice=self.args.vswd_nice, eal=eal,
                         args=vswd_args)
        self.vswd.ready()

    def boot(self, nics_of, cpus=1, cpus_of=None):
        """One QEMU per guest (started together, from this thread), then
        wait for both agents. cpus_of: vCPUs per guest (else cpus)."""
        img = qemu_guest.image()
        print("guest image: %s %s (%s)" % (img["package"], img["version"],
                                           img["kernel_file"]))
        t0 = time.monotonic()
        for gi, name in enumerate(NAMES):
            self.guests.append(QemuGuest(
                name, img, nics_of(gi), self.tmp,
                cpus=cpus_of[gi] if cpus_of else cpus))
        for g in self.guests:
            g.wait_ready()
            print("%s: booted in %.1f s (kernel uptime %.1f s at /init's "
                  "agent)" % (g.name, g.boot_s, g.uptime))
        self.times.append(("boot (both guests)", time.monotonic() - t0))

    def pairs(self):
        return {(gi, ni): name for (gi, ni), name in self.ports.items()}

    def read(self):
        """Guest counters in check_identity's terms, and vswd's."""
        gs = {}
        for (gi, ni) in self.ports:
            g = self.guests[gi]
            s = g.stats(g.ifname(g.nics[ni]))
            gs[(gi, ni)] = {"TX-packets": s["tx_packets"],
                            "TX-bytes": s["tx_bytes"],
                            "RX-packets": s["rx_packets"],
                            "RX-bytes": s["rx_bytes"],
                            "errors": s["rx_errors"] + s["rx_dropped"] +
                            s["tx_errors"] + s["tx_dropped"]}
        return gs, self.vswd.snapshot()

    def settled(self, timeout=20.0):
        """Counters unchanged over two reads 0.3 s apart."""
        last, end = None, time.monotonic() + timeout
        while time.monotonic() < end:
            gs, snap = self.read()
            key = (sorted(gs.items()), sorted(
                (n, p["deq_packets"], p["enq_packets"])
                for n, p in snap["ports"].items()))
            if key == last:
                return gs, snap
            last = key
            time.sleep(0.3)
        raise RuntimeError("counters never settled")

    def scenario(self, tag, fn):
        """Run fn between two counter reads; check the identities."""
        print("-- %s" % tag)
        g0, v0 = self.settled()
        t0 = time.monotonic()
        try:
            fn()
        except Exception as e:  # noqa: BLE001 -- reported, counters still checked
            self.c.fail("%s: %s" % (tag, e))
        dt = time.monotonic() - t0
        g1, v1 = self.settled()
        gd = {k: {n: g1[k][n] - g0[k][n] for n in g1[k]} for k in g1}
        names = {k: "%s/%s" % (NAMES[k[0]], v) for k, v in self.ports.items()}
        pairs = {names[k]: v for k, v in self.ports.items()}
        identity(self.c, tag, {names[k]: d for k, d in gd.items()}, pairs,
                 snap_delta(v1, v0))
        for k, d in gd.items():
            self.c.check(d["errors"] == 0, "%s: %s guest rx/tx errors and "
                         "drops 0" % (tag, names[k]))
        self.times.append((tag, dt))

    def stop(self):
        for g in self.guests:
            rc = g.shutdown()
            self.c.check(g.p.p.poll() is not None, "%s: QEMU gone (rc %s)"
                         % (g.name, rc))
        self.guests = []
        v, self.vswd = self.vswd, None
        if v is not None:
            vswd_end(self.c, v, "shutdown")

    def kill(self):
        for g in self.guests:
            g.kill()
        if self.vswd is not None:
            self.vswd.stop(signal.SIGKILL)


# ---- scenarios ----

def ping(src, dst_ip, count, size=56, tag=""):
    """Ping and parse: (received, avg RTT ms); every reply must come."""
    out = src.check("ping -c %d -i 0.2 -W 5 -s %d %s" % (count, size,
                                                        dst_ip), 60)
    m = re.search(r"(\d+) packets transmitted, (\d+) packets received", out)
    rtt = re.search(r"min/avg/max = ([\d.]+)/([\d.]+)/([\d.]+)", out)
    sent, got = int(m.group(1)), int(m.group(2))
    print("%s: %s -> %s %d B: %d/%d replies, rtt min/avg/max %s ms" % (
        tag, src.name, dst_ip, size, got, sent,
        "/".join(rtt.groups()) if rtt else "-"))
    if got != sent:
        raise RuntimeError("%s: %d of %d pings answered" % (tag, got, sent))


def pin_neighbours(rig, mode):
    """Permanent neighbour entries on the mode's NICs (as learnt)."""
    ni = MODES.index(mode)
    for gi, g in enumerate(rig.guests):
        peer = rig.guests[1 - gi]
        ip, ifc = peer.nics[ni].ip, g.ifname(g.nics[ni])
        out = g.check("arp -i %s -s %s %s && ip neigh show %s dev %s" % (
            ifc, ip, peer.nics[ni].mac, ip, ifc))
        if "PERMANENT" not in out:
            raise RuntimeError("%s: neighbour %s not pinned: %s" % (
                g.name, ip, out.strip()))


def tcp(rig, src, dst, ni, mib, tag):
    """mib MiB of random data src -> dst over NIC ni; md5 both ends."""
    want = src.check("dd if=/dev/urandom of=/tmp/tx bs=1M count=%d "
                     "2>/dev/null && md5sum /tmp/tx" % mib, 120).split()[0]
    dst.check("rm -f /tmp/rx.md5; nc -l -p 5001 -e sh -c 'md5sum "
              ">/tmp/rx.part; mv /tmp/rx.part /tmp/rx.md5' >/dev/null 2>&1 &"
              " n=0; until netstat -ltn | grep -q ':5001 '; do usleep 20000;"
              " n=$((n+1)); [ $n -lt 250 ] || exit 1; done")
    t0 = time.monotonic()
    src.check("nc %s 5001 </tmp/tx" % dst.nics[ni].ip, 180)
    dt = time.monotonic() - t0
    got = dst.check("n=0; until [ -s /tmp/rx.md5 ]; do usleep 20000; "
                    "n=$((n+1)); [ $n -lt 500 ] || exit 1; done; "
                    "cat /tmp/rx.md5", 30).split()[0]
    print("%s: %s -> %s %d MiB in %.2f s: %.0f Mbit/s, md5 %s %s" % (
        tag, src.name, dst.name, mib, dt, mib * 8 * 1.048576 / dt, want,
        "OK" if got == want else "MISMATCH (received %s)" % got))
    rig.c.check(got == want, "%s: %s -> %s md5 of %d MiB" % (
        tag, src.name, dst.name, mib))


def case_default(rig, args):
    lines = ["# qemu-guests: two server-mode and two client-mode ports, "
             "two server-mode ports for packed rings"]
    for n in NAMES:
        lines.append("port-add %s-srv vhost-user" % n)
    for n in NAMES:
        lines.append("port-add %s-cli vhost-user-client path=%s" % (
            n, os.path.join(rig.tmp, "%s-cli.sock" % n)))
    for n in NAMES:
        lines.append("port-add %s-pk vhost-user" % n)
    lines.append("flow-add priority=0,actions=normal")
    rig.start_vswd(lines)
    for gi, n in enumerate(NAMES):
        rig.ports[(gi, 0)] = "%s-srv" % n
        rig.ports[(gi, 1)] = "%s-cli" % n
        rig.ports[(gi, 2)] = "%s-pk" % n

    def nics(gi):
        return [Nic(os.path.join(rig.run, "%s-srv.sock" % NAMES[gi]),
                    MAC % (gi + 1, 0), "%s.%d/24" % (SUBNET["server"], gi + 1),
                    9000),
                Nic(os.path.join(rig.tmp, "%s-cli.sock" % NAMES[gi]),
                    MAC % (gi + 1, 1), "%s.%d/24" % (SUBNET["client"], gi + 1),
                    9000, server=True),
                Nic(os.path.join(rig.run, "%s-pk.sock" % NAMES[gi]),
                    MAC % (gi + 1, 2), "%s.%d/24" % (SUBNET["packed"], gi + 1),
                    9000, dev_opts="packed=on")]
    rig.boot(nics)
    rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=60)
    for name in rig.ports.values():
        rings = rig.vswd.port(name).get("rings")
        want = "packed" if name.endswith("-pk") else "split"
        rig.c.check(rings == want, "%s: port-show says %s rings (%s)" % (
            name, want, rings))
    a, b = rig.guests
    for mode in MODES:
        ni = MODES.index(mode)
        if mode not in args.modes:
            continue

        def do_ping():
            ping(a, b.nics[ni].ip, 10, tag=mode + "-ping")
            ping(b, a.nics[ni].ip, 5, tag=mode + "-ping")
            pin_neighbours(rig, mode)
        rig.scenario(mode + "-ping", do_ping)
        rig.scenario(mode + "-jumbo", lambda: (
            ping(a, b.nics[ni].ip, 10, 8000, mode + "-jumbo"),
            ping(b, a.nics[ni].ip, 10, 8000, mode + "-jumbo")))
        rig.scenario(mode + "-tcp", lambda: (
            tcp(rig, a, b, ni, args.mib, mode + "-tcp"),
            tcp(rig, b, a, ni, args.mib, mode + "-tcp")))


def case_mq_subset(rig, args):
    """Issue 12 part 1: a 1-vCPU guest enables one of two queue pairs."""
    rig.start_vswd(["# mq-subset: queues=2 ports, 1-vCPU guests"] +
                   ["port-add %s-mq vhost-user queues=2" % n for n in NAMES] +
                   ["flow-add priority=0,actions=normal"])
    for gi, n in enumerate(NAMES):
        rig.ports[(gi, 0)] = "%s-mq" % n
    rig.boot(lambda gi: [Nic(os.path.join(rig.run, "%s-mq.sock" % NAMES[gi]),
                             MAC % (gi + 1, 0), "169.254.3.%d/24" % (gi + 1),
                             1500, queues=2)], cpus=1)
    time.sleep(3)
    a, b = rig.guests
    print(rig.vswd.ctl("port-show"))
    for g in rig.guests:
        print("%s: %s" % (g.name, g.run("cat /sys/class/net/eth0/"
                                        "{operstate,carrier} 2>&1; ls "
                                        "/sys/class/net/eth0/queues")[1]))
    try:
        rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=20)
        rig.c.check(True, "mq-subset: ports up with one pair of two enabled")
    except RuntimeError as e:
        rig.c.fail("mq-subset: %s" % e)
    rig.scenario("mq-subset-ping", lambda: ping(a, b.nics[0].ip, 5,
                                                tag="mq-subset-ping"))
    print(rig.vswd.ctl("port-show"))


# ---- issue 12 part 2: checksum/TSO offloads ----

# QEMU's device options that take every offload away from one NIC
NO_OFFLOADS = ("csum=off,guest_csum=off,host_tso4=off,host_tso6=off,"
               "guest_tso4=off,guest_tso6=off")


def case_offload(rig, args):
    """Both guests negotiate the offloads on nic0 (TSO frames cross vswd
    whole); guest b's nic1 has none (QEMU device options), so vswd segments
    and checksums what a's nic1 sends it. TCP both ways with md5 on each
    pair; vswd's counters show which path the frames took."""
    rig.start_vswd(["# offload: nic0 both offloading, b's nic1 not"] +
                   ["port-add %s%d vhost-user" % (n, i) for i in (0, 1)
                    for n in NAMES] + ["flow-add priority=0,actions=normal"])
    for gi, n in enumerate(NAMES):
        for ni in (0, 1):
            rig.ports[(gi, ni)] = "%s%d" % (n, ni)

    def nics(gi):
        return [Nic(os.path.join(rig.run, "%s%d.sock" % (NAMES[gi], ni)),
                    MAC % (gi + 1, ni), "169.254.%d.%d/24" % (4 + ni, gi + 1),
                    1500, dev_opts=NO_OFFLOADS if (gi, ni) == (1, 1) else "")
                for ni in (0, 1)]
    rig.boot(nics)
    rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=60)
    a, b = rig.guests
    feats = {n: p["features"] for n, p in rig.vswd.ports().items()}
    gso_bits = (1 << 7) | (1 << 11)  # GUEST_TSO4, HOST_TSO4
    for n, f in sorted(feats.items()):
        print("offload: %s features 0x%x" % (n, f))
    rig.c.check(all(feats[n] & gso_bits == gso_bits for n in
                    ("a0", "b0", "a1")) and feats["b1"] & gso_bits == 0,
                "offload: TSO negotiated on a0, b0, a1, not on b1")

    def ping_pin():
        for ni in (0, 1):
            ping(a, b.nics[ni].ip, 3, tag="offload-ping")
            ping(b, a.nics[ni].ip, 3, tag="offload-ping")
            pin_neighbours(rig, MODES[ni])
    rig.scenario("offload-ping", ping_pin)
    for ni, tag in ((0, "offload-tso-through"), (1, "offload-sw-gso")):
        v0 = rig.vswd.snapshot()
        rig.scenario(tag, lambda: (tcp(rig, a, b, ni, args.mib, tag),
                                   tcp(rig, b, a, ni, args.mib, tag)))
        x = snap_delta(rig.vswd.snapshot(), v0)
        p, pmd = x["ports"], x["pmd"]
        print("%s: a%d deq_gso %d csum %d | b%d enq_gso %d | b%d deq_gso %d"
              " | sw_gso %d (+%d segments) sw_csum %d drop_offload %d" % (
                  tag, ni, p["a%d" % ni]["deq_gso_packets"],
                  p["a%d" % ni]["deq_csum_partial"], ni,
                  p["b%d" % ni]["enq_gso_packets"], ni,
                  p["b%d" % ni]["deq_gso_packets"],
                  pmd.get("sw_gso_packets", 0),
                  pmd.get("sw_gso_extra_segments", 0),
                  pmd.get("sw_csum_packets", 0),
                  pmd.get("drop_offload", 0)))
        rig.c.check(p["a%d" % ni]["deq_gso_packets"] > 0,
                    "%s: a sent TSO frames" % tag)
        rig.c.check(pmd.get("drop_offload", 0) == 0,
                    "%s: no offload drops" % tag)
        if ni == 0:
            rig.c.check(p["b0"]["enq_gso_packets"] > 0 and
                        p["a0"]["enq_gso_packets"] > 0,
                        "%s: both receivers got GSO frames whole" % tag)
            rig.c.check(pmd.get("sw_gso_packets", 0) == 0,
                        "%s: no software segmentation" % tag)
        else:
            rig.c.check(p["b1"]["enq_gso_packets"] == 0 and
                        p["b1"]["deq_gso_packets"] == 0,
                        "%s: b1 neither got nor sent GSO frames" % tag)
            rig.c.check(pmd.get("sw_gso_packets", 0) > 0,
                        "%s: vswd segmented for b1" % tag)


# ---- multiqueue: any subset of queue pairs (issue 12 part 1) ----

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


def mq_tcp_during(rig, ni, mib, changes, tag="mq-ethtool"):
    """mib MiB a -> b over NIC ni in the background; changes() while it
    runs; md5 of both ends."""
    a, b = rig.guests
    want = a.check("dd if=/dev/urandom of=/tmp/tx bs=1M count=%d "
                   "2>/dev/null && md5sum /tmp/tx" % mib, 120).split()[0]
    b.check("rm -f /tmp/rx.md5; nc -l -p 5002 -e sh -c 'md5sum "
            ">/tmp/rx.part; mv /tmp/rx.part /tmp/rx.md5' >/dev/null 2>&1 &"
            " n=0; until netstat -ltn | grep -q ':5002 '; do usleep 20000;"
            " n=$((n+1)); [ $n -lt 250 ] || exit 1; done")
    a.check("rm -f /tmp/tx.rc; (nc %s 5002 </tmp/tx; echo $? >/tmp/tx.rc)"
            " >/dev/null 2>&1 &" % b.nics[ni].ip)
    changes()
    busy = a.run("[ -e /tmp/tx.rc ]")[0] != 0
    print("%s: transfer %s when the changes were done" % (
        tag, "still running" if busy else "already over"))
    rc = a.check("n=0; until [ -s /tmp/tx.rc ]; do usleep 50000; "
                 "n=$((n+1)); [ $n -lt 3000 ] || exit 1; done; "
                 "cat /tmp/tx.rc", 200).strip()
    got = b.check("n=0; until [ -s /tmp/rx.md5 ]; do usleep 20000; "
                  "n=$((n+1)); [ $n -lt 500 ] || exit 1; done; "
                  "cat /tmp/rx.md5", 30).split()[0]
    rig.c.check(rc == "0" and got == want, "%s: %d MiB a -> b "
                "across the changes: nc rc %s, md5 %s" % (
                    tag, mib, rc, "OK" if got == want else "MISMATCH"))
    return busy


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
    mq_scenario(rig, "mq-ethtool", lambda: mq_tcp_during(
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


# ---- vswd killed -9 and restarted from its state (issue 12 part 3) ----

def case_restart(rig, args):
    """QEMU is the vhost-user server, vswd's ports are clients kept in its
    --state file: vswd is killed with SIGKILL in the middle of a TCP
    transfer (and a ping) and started again with --state and a --config
    without the ports (they come back from the state); it reconnects, the transfer completes with the right md5,
    and the counters of the new vswd add up against the guests'."""
    state = os.path.join(rig.tmp, "vswd.state")
    lines = ["# restart: client-mode ports, kept in the state file",
             "pmd-sleep-set %d" % args.pmd_sleep]
    for n in NAMES:
        lines.append("port-add %s-cli vhost-user-client path=%s" % (
            n, os.path.join(rig.tmp, "%s-cli.sock" % n)))
    lines.append("flow-add priority=0,actions=normal")
    rig.start_vswd(lines, "first", ["--state", state])
    for gi, n in enumerate(NAMES):
        rig.ports[(gi, 0)] = "%s-cli" % n
    rig.boot(lambda gi: [Nic(os.path.join(rig.tmp, "%s-cli.sock" % NAMES[gi]),
                             MAC % (gi + 1, 1), "%s.%d/24" % (
                                 SUBNET["client"], gi + 1), 1500,
                             server=True)])
    rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=60)
    a, b = rig.guests

    def first():
        ping(a, b.nics[0].ip, 5, tag="restart")
        ping(b, a.nics[0].ip, 5, tag="restart")
        pin_neighbours(rig, "server")  # NIC 0 of each guest
    rig.scenario("restart-before", first)
    old = rig.vswd.p.p.pid

    def kill_and_restart():
        b.check("ping -c 40 -i 0.2 -W 1 %s >/tmp/ping.out 2>&1 &" %
                a.nics[0].ip)
        time.sleep(1.5)
        rig.vswd.stop(signal.SIGKILL)
        print("restart: vswd %d killed (SIGKILL)" % old)
        t0 = time.monotonic()
        # a config without the ports: they come back from the state file
        rig.start_vswd(["# restart: everything from the state file"],
                       "second", ["--state", state])
        rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=60)
        print("restart: new vswd %d serving both ports %.1f s later" % (
            rig.vswd.p.p.pid, time.monotonic() - t0))
        rig.times.append(("restart (kill to up)", time.monotonic() - t0))
    try:
        mq_tcp_during(rig, 0, args.mib, kill_and_restart, "restart")
    except Exception as e:  # noqa: BLE001 -- reported, the rest still runs
        rig.c.fail("restart: %s" % e)
    out = b.check("n=0; while pidof ping >/dev/null; do usleep 100000; "
                  "n=$((n+1)); [ $n -lt 200 ] || break; done; "
                  "cat /tmp/ping.out", 40)
    m = re.search(r"(\d+) packets transmitted, (\d+) packets received", out)
    print("restart: ping across the restart: %s" % (
        "%s of %s answered" % (m.group(2), m.group(1)) if m else out[-200:]))
    rig.c.check(rig.vswd.p.p.pid != old and
                "starting from state file" in rig.vswd.p.buf,
                "restart: the new vswd started from its state file")
    ps = rig.vswd.ports()
    rig.c.check(sorted(ps) == sorted(rig.ports.values()) and
                all(p["connects"] == 1 for p in ps.values()),
                "restart: both ports back from the state, reconnected once")
    # the new vswd's counters against the guests', both ways
    rig.scenario("restart-after", lambda: (
        ping(a, b.nics[0].ip, 5, tag="restart-after"),
        ping(b, a.nics[0].ip, 5, tag="restart-after"),
        tcp(rig, b, a, 0, max(1, args.mib // 2), "restart-after")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", choices=("default", "mq-subset", "offload",
                                       "mq", "restart"),
                    default="default")
    ap.add_argument("--mq-mib", type=int, default=12,
                    help="MiB of the TCP transfer across ethtool -L")
    ap.add_argument("--mq-packed-mib", type=int, default=4,
                    help="mq: MiB each way over the packed queues=2 NICs")
    ap.add_argument("--pmd-sleep", type=int, default=200,
                    help="mq: vswd's PMD idle back-off (pmd-sleep-set, us)")
    ap.add_argument("--modes", default="server,client,packed",
                    help="vhost-user modes of vswd's ports to test")
    ap.add_argument("--mib", type=int, default=8,
                    help="MiB per TCP transfer")
    ap.add_argument("--vswd-nice", type=int, default=VSWD_NICE,
                    help="nice value of vswd (0: compete as an equal)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--trace-vhost", action="store_true",
                    help="log the vhost-user messages (vswd's log)")
    args = ap.parse_args()
    args.modes = args.modes.split(",")
    sys.stdout.reconfigure(line_buffering=True)  # progress in the log
    if qemu_guest.qemu_binary() is None:
        print("qemu-system-x86_64 not installed: skipped")
        return 77
    qemu_guest.exit_on_sigterm()
    tmp = tempfile.mkdtemp(prefix="vsw-qemu-")
    c = Checks()
    print("case %s, temp dir %s" % (args.case, tmp))
    rig = Rig(args, tmp, c)
    t0 = time.monotonic()
    try:
        if args.case == "mq-subset":
            case_mq_subset(rig, args)
        elif args.case == "offload":
            case_offload(rig, args)
        elif args.case == "mq":
            case_mq(rig, args)
        elif args.case == "restart":
            case_restart(rig, args)
        else:
            case_default(rig, args)
        rig.stop()
    except Exception as e:  # noqa: BLE001 -- report, clean up, fail
        c.fail("ERROR: %s" % e)
    finally:
        rig.kill()
    return c.finish_timed(rig.times, t0, tmp, args.keep, width=22)


if __name__ == "__main__":
    sys.exit(main())
