#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration test: live migration of a Linux guest (QEMU, TCG) on vsw,
under traffic, back and forth between vswd ports.

    vm2  169.254.7.2 --- vm2 (server)   vswd   vm1-s0 / vm1-s1 (server)
                                              vm1-c0 / vm1-c1 (client)
                                               `--- vm1 169.254.7.1, on
                                                    one of the four

Port mapping: one vswd port per QEMU. The destination QEMU is started
(`-incoming unix:...`) while the source still runs and owns its vhost-user
connection, so it cannot take over the source's port (a port serves one
connection); between hosts the destination's vswd has its own port anyway.
Rules follow the MAC: the rule is `normal`, and the destination port
learns vm1's MAC from the RARP vswd injects on SEND_RARP (vm1 runs with
guest_announce=off, so QEMU asks the backend; --announce guest lets the
guest send its own gratuitous ARPs instead).

vm1 ping-pongs through the four ports (s0 -> s1 -> c0 -> c1 -> s0 ...:
every pair of modes, server -> server, server -> client, client -> client,
client -> server). Each round, while it migrates:
  - TCP: --mib (8) MiB of random data vm1 -> vm2 and vm2 -> vm1 at once
    (busybox nc), md5 at both ends must match;
  - ping vm2 -> vm1 every 20 ms: no duplicates; the longest run of lost
    replies (the blackout) is bounded (--max-gap-ms) and reported, with
    the total lost (also RX-ring-full drops of the busy TCG guest);
  - counters over the round: vm1's guest counters (continuous across the
    QEMUs: its kernel migrates) == the sum over vm1's four ports (TX ==
    dequeued + dequeue drops, RX == delivered, bytes too): nothing vswd
    took from a ring is lost or delivered twice across GET_VRING_BASE /
    SET_VRING_BASE; vm2 likewise; over the switch, sent (the injected
    RARPs counted as vm1's) == received + counted drops; vm2's rx_dropped
    == the RARPs flooded to it (no handler for 0x8035 in its kernel);
  - rounds 0, 3, 6, 9 (--compare-every) start the destination paused
    (-S): the source's and the destination's guest RAM are compared page
    by page (QMP pmemsave) before it continues. A page vswd wrote and did
    not log differs: this is what the dirty log is for.

Exit 77 (skipped) when qemu-system-x86_64 is not installed.

usage: qemu_migrate.py --build BUILD_DIR [--rounds N] [--mib N]
                       [--announce rarp|guest] [--keep]
"""
import argparse
import os
import random
import re
import sys
import tempfile
import time

from vswtest import qemu as qemu_guest
from vswtest.checks import Checks, identity, vswd_end
from vswtest.qemu import Nic, QemuGuest, Qmp
from vswtest.vswd import VIRTQ_DEQ_DROPS, Vswd, snap_delta

VSWD_NICE = 19
MEM_MIB = 256
MAC1, MAC2 = "52:54:00:13:00:01", "52:54:00:13:00:02"
IP1, IP2 = "169.254.7.1", "169.254.7.2"
VM1_PORTS = ("vm1-s0", "vm1-s1", "vm1-c0", "vm1-c1")
PING_MS = 20
UDP_PORT = 5002
# the streams are under way: bytes, not packets (with TSO negotiated a
# 64 KiB segment is one packet, and 8 MiB is a few hundred of them)
GATE_BYTES = 1 << 20


class Rig:
    def __init__(self, args, tmp, c):
        self.args, self.tmp, self.c = args, tmp, c
        self.run = os.path.join(tmp, "run")
        os.makedirs(self.run)
        self.vswd = None
        self.vm1 = self.vm2 = None
        self.qmp = None
        self.at = 0  # index into VM1_PORTS
        self.gen = 0
        self.times = []
        self.lost = []

    def nic1(self, i):
        name = VM1_PORTS[i]
        if name.startswith("vm1-s"):
            return Nic(os.path.join(self.run, name + ".sock"), MAC1,
                       IP1 + "/24")
        return Nic(os.path.join(self.tmp, name + ".sock"), MAC1,
                   IP1 + "/24", server=True)

    def extra(self):
        if self.args.announce == "guest":
            return []
        # QEMU then asks the backend to announce (SEND_RARP)
        return ["-global", "virtio-net-pci.guest_announce=off"]

    def start(self):
        lines = ["# qemu-migrate"]
        # QEMU's defaults: checksum/TSO offloads negotiated (--port-opts
        # " offloads=off" for the plain data path)
        for n in VM1_PORTS:
            if n.startswith("vm1-s"):
                lines.append("port-add %s vhost-user%s" % (n, self.args.port_opts))
            else:
                lines.append("port-add %s vhost-user-client%s path=%s" % (
                    n, self.args.port_opts, os.path.join(self.tmp, n + ".sock")))
        lines += ["port-add vm2 vhost-user%s" % self.args.port_opts,
                  "flow-add priority=0,actions=normal"]
        path = os.path.join(self.tmp, "vswd.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.vswd = Vswd(self.args.build, self.run, self.tmp, "migrate",
                         config=path, nice=VSWD_NICE,
                         eal=["--log-level=vsw.vport:info"] + self.args.eal)
        self.vswd.ready()
        img = qemu_guest.image()
        self.img = img
        t0 = time.monotonic()
        qp = os.path.join(self.tmp, "qemu-vm1-0.qmp")
        self.vm1 = QemuGuest("vm1-0", img, [self.nic1(0)], self.tmp,
                             mem=guest_mem(self.args), extra=self.extra() +
                             qemu_guest.qmp_args(qp))
        self.vm2 = QemuGuest("vm2", img, [Nic(
            os.path.join(self.run, "vm2.sock"), MAC2, IP2 + "/24")],
            self.tmp, mem=guest_mem(self.args))
        for g in (self.vm1, self.vm2):
            g.wait_ready()
        self.qmp = Qmp(qp)
        self.times.append(("boot (both guests)", time.monotonic() - t0))
        self.vswd.wait_up([VM1_PORTS[0], "vm2"], 2, timeout=60)
        out = self.vm1.check("ping -c 3 -i 0.2 -W 5 %s" % IP2, 30)
        print(out.strip().split("\n")[-2])
        for g in (self.vm1, self.vm2):
            print("%s: %s" % (g.name, g.check(
                "dd if=/dev/urandom of=/tmp/tx bs=1M count=%d 2>/dev/null"
                " && md5sum /tmp/tx" % self.args.mib, 120).strip()))
        self.md5 = {g.name[:3]: g.check("md5sum /tmp/tx").split()[0]
                    for g in (self.vm1, self.vm2)}

    # ---- counters ----

    def read(self):
        gs = {key: g.nic_counters(g.nics[0])
              for key, g in (("vm1", self.vm1), ("vm2", self.vm2))}
        return gs, self.vswd.snapshot()

    def settled(self, timeout=20.0):
        return qemu_guest.settled(self.read, timeout)

    def check_counters(self, tag, g0, v0, g1, v1):
        """vm1 is one guest on four ports: merge them, the RARPs vswd
        injected taken out of the switch's rx (no guest sent them)."""
        x = snap_delta(v1, v0)
        merged = {}
        for n in VM1_PORTS:
            for k, v in x["ports"][n].items():
                if isinstance(v, int):
                    merged[k] = merged.get(k, 0) + v
        rarps = merged.get("rarp_sent", 0)
        gd = {k: {n: g1[k][n] - g0[k][n] for n in g1[k]} for k in g1}
        self.c.check(gd["vm1"]["TX-packets"] == merged["deq_packets"] + sum(
            merged[k] for k in VIRTQ_DEQ_DROPS), "%s: vm1 guest TX %d == "
            "dequeued on its ports + dequeue drops" % (
                tag, gd["vm1"]["TX-packets"]))
        # the switch received the injected RARPs from vm1's port: count
        # them as vm1's for identity()
        merged["deq_packets"] += rarps
        gd["vm1"]["TX-packets"] += rarps
        x["ports"]["vm1*"] = merged
        identity(self.c, tag, gd, {"vm1": "vm1*", "vm2": "vm2"}, x)
        for k, d in gd.items():
            # vm2 drops the flooded RARPs (no handler): rx_dropped
            self.c.check(d["errors"] == (rarps if k == "vm2" else 0),
                         "%s: %s guest rx/tx errors and drops %d (RARPs "
                         "flooded to vm2: %d)" % (tag, k, d["errors"], rarps))
        want = merged.get("rarp_received", 0)
        self.c.check((rarps == 0) == (want == 0) and rarps <= want,
                     "%s: SEND_RARP %d, RARPs injected %d (one per RX burst "
                     "after them)" % (tag, want, rarps))
        return x

    # ---- a round ----

    @staticmethod
    def moved(p, base):
        """Bytes to and from vm1 on a port since base (its virtq)."""
        return (p["enq_bytes"] - base["enq_bytes"],
                p["deq_bytes"] - base["deq_bytes"])

    def traffic_start(self):
        for g in (self.vm1, self.vm2):
            g.check("rm -f /tmp/rx.md5 /tmp/ping.out; nc -l -p 5001 -e sh "
                    "-c 'md5sum >/tmp/rx.part; mv /tmp/rx.part /tmp/rx.md5'"
                    " >/dev/null 2>&1 & n=0; until netstat -ltn | grep -q "
                    "':5001 '; do usleep 20000; n=$((n+1)); [ $n -lt 250 ] "
                    "|| exit 1; done")
        self.vm2.check("ping -i 0.%03d -w %d %s >/tmp/ping.out 2>&1 &" % (
            PING_MS, self.args.ping_s, IP1))
        self.udp_start()
        self.vm1.check("nc %s 5001 </tmp/tx >/dev/null 2>&1 &" % IP2)
        self.vm2.check("nc %s 5001 </tmp/tx >/dev/null 2>&1 &" % IP1)

    def udp_start(self):
        """vm2 -> vm1: a sequence-numbered UDP stream at a steady rate for
        the whole round (test/qemu/udpseq.c), so RX buffers are in flight
        at the switch-over: written by vswd after QEMU's last dirty-log
        sync, not yet taken by vm1's driver when its vCPU stops. Without
        their pages in the log the destination has their old contents,
        most often an older, self-consistent frame: TCP drops it as a
        duplicate, udpseq sees its sequence go backwards (or another
        round's stream, or a payload not its sequence's)."""
        self.nonce = (self.gen << 32) | random.getrandbits(32)
        secs = self.args.ping_s  # as long as the pings: no longer round
        self.vm1.check("rm -f /tmp/udp.out; udpseq recv %d %d %d >/tmp/"
                       "udp.out 2>&1 & n=0; until grep -q listening /tmp/"
                       "udp.out 2>/dev/null; do usleep 20000; n=$((n+1)); "
                       "[ $n -lt 250 ] || exit 1; done" % (
                           UDP_PORT, secs + 10, self.nonce))
        self.vm2.check("udpseq send %s %d %d %d %d %d >/tmp/udps.out 2>&1 &"
                       % (IP1, UDP_PORT, self.args.udp_pps, secs,
                          self.args.udp_size, self.nonce))

    def udp_check(self, tag):
        out = self.vm1.check("n=0; until grep -q received /tmp/udp.out; do "
                             "usleep 50000; n=$((n+1)); [ $n -lt 600 ] || "
                             "exit 1; done; cat /tmp/udp.out", 60)
        sent = self.vm2.check("n=0; until grep -q sent /tmp/udps.out; do "
                              "usleep 50000; n=$((n+1)); [ $n -lt 200 ] || "
                              "exit 1; done; cat /tmp/udps.out", 30)
        for line in out.splitlines():
            if "BAD" in line:
                print("%s: %s" % (tag, line.strip()))
        m = re.search(r"received (\d+) lost (\d+) bad (\d+)", out)
        n = re.search(r"sent (\d+)", sent)
        got, lost, bad = (int(m.group(i)) for i in (1, 2, 3))
        print("%s: UDP vm2 -> vm1 %d datagrams of %d B at %d/s: %d received"
              ", %d lost, %d stale or corrupt" % (
                  tag, int(n.group(1)), self.args.udp_size,
                  self.args.udp_pps, got, lost, bad))
        self.c.check(bad == 0 and got > 0, "%s: UDP stream into vm1 across "
                     "the migration: no datagram stale, repeated or not its "
                     "sequence's (%d bad, %d received)" % (tag, bad, got))

    def traffic_check(self, tag):
        for src, dst in ((self.vm1, self.vm2), (self.vm2, self.vm1)):
            got = dst.check("n=0; until [ -s /tmp/rx.md5 ]; do usleep "
                            "50000; n=$((n+1)); [ $n -lt 1200 ] || exit 1; "
                            "done; cat /tmp/rx.md5", 90).split()[0]
            want = self.md5[src.name[:3]]
            print("%s: %s -> %s %d MiB md5 %s %s" % (
                tag, src.name, dst.name, self.args.mib, want,
                "OK" if got == want else "MISMATCH (%s)" % got))
            self.c.check(got == want, "%s: %s -> %s md5 of %d MiB across "
                         "the migration" % (tag, src.name, dst.name,
                                            self.args.mib))
        self.udp_check(tag)
        out = self.vm2.check("n=0; until grep -q 'packets received' "
                             "/tmp/ping.out; do usleep 50000; n=$((n+1)); "
                             "[ $n -lt 600 ] || exit 1; done; cat "
                             "/tmp/ping.out", 60)
        m = re.search(r"(\d+) packets transmitted, (\d+) packets received"
                      r"(?:, \+?(\d+) duplicates)?", out)
        sent, got = int(m.group(1)), int(m.group(2))
        dups = int(m.group(3) or 0)
        seqs = sorted(int(q) for q in re.findall(r"seq=(\d+)", out))
        gaps = [(a + 1, b - 1) for a, b in zip(seqs, seqs[1:]) if b > a + 1]
        gap = 0
        if gaps:
            a, b = max(gaps, key=lambda g: g[1] - g[0])
            gap = b - a + 1
            print("%s: longest ping gap seq %d..%d (%d ms from %d ms after "
                  "the pings started)" % (tag, a, b, gap * PING_MS,
                                          a * PING_MS))
        return sent, got, dups, gap

    def migrate_once(self, r, paused):
        """One round: vm1 migrates from its port to the next one under
        traffic (paused: the destination starts stopped and both ends' RAM
        is compared), then the round's checks."""
        nxt = (self.at + 1) % len(VM1_PORTS)
        self.gen += 1
        uri = "unix:%s" % os.path.join(self.tmp, "mig-%d.sock" % self.gen)
        tag = "round %d %s->%s%s" % (r, VM1_PORTS[self.at], VM1_PORTS[nxt],
                                     " paused" if paused else "")
        print("-- %s" % tag)
        ts = time.monotonic()
        g0, v0 = self.settled()
        t0 = time.monotonic()
        print("%s: settled in %.1f s" % (tag, t0 - ts))
        dst = qemu_guest.incoming_guest(
            "vm1-%d" % self.gen, self.img, [self.nic1(nxt)], self.tmp, uri,
            paused=paused, mem=guest_mem(self.args), extra=self.extra())
        dst_qmp = Qmp(dst.qmp_path)
        # the destination's vhost-user connection is up before we start
        self.vswd.wait_connected(VM1_PORTS[nxt], tag)
        t_ping, p = self.traffic_gate(tag, v0["ports"][VM1_PORTS[self.at]])
        st, seen = self.migrate_logged(tag, uri, v0, t_ping, p)
        if paused:
            qemu_guest.wait_status(dst_qmp, "paused")
            diff = ram_compare(tag, self.qmp, dst_qmp, self.tmp, r,
                               self.args)
            self.c.check(not diff, "%s: destination RAM == source RAM "
                         "after the migration (%d pages differ)" % (
                             tag, len(diff)))
            dst_qmp.cmd("cont")
        qemu_guest.attach_agent(dst)
        qemu_guest.retire(self.vm1, self.qmp)
        self.vm1, self.qmp, self.at = dst, dst_qmp, nxt
        print("%s: migration %d ms (downtime %s ms), %d MiB sent; source "
              "logged %d pages" % (
                  tag, st.get("total-time", -1), st.get("downtime", "?"),
                  st.get("ram", {}).get("transferred", 0) >> 20,
                  seen["pages"]))
        print("%s: RAM passes: %s" % (tag, ram_stats(st)))
        self.c.check(seen["pages"] > 0 and seen["logging"] == 2,
                     "%s: the source port logged dirty pages (%d), both "
                     "vrings logging during the migration (%d)" % (
                         tag, seen["pages"], seen["logging"]))
        self.check_pings(tag, paused)
        self.check_round(tag, g0, v0)
        self.times.append((tag, time.monotonic() - t0))

    def traffic_gate(self, tag, base):
        """Start the round's traffic and wait until both streams are
        under way on vm1's port (busybox under TCG starts them slowly):
        vswd writing vm1's RX buffers while its RAM is being copied is
        what the dirty log is for. Returns (when the pings started, the
        port's virtq counters at the gate)."""
        self.traffic_start()
        t_ping = time.monotonic()
        time.sleep(self.args.lead_s)
        end = time.monotonic() + 20
        while True:
            p = self.vswd.port(VM1_PORTS[self.at])["virtq"]
            moved = self.moved(p, base)
            if min(moved) >= GATE_BYTES:
                return t_ping, p
            if time.monotonic() > end:
                raise RuntimeError("%s: no traffic before the migration "
                                   "(%d, %d bytes)" % ((tag,) + moved))
            time.sleep(0.05)

    def migrate_logged(self, tag, uri, v0, t_ping, gate):
        """Migrate vm1 to uri, watching its source port log; returns
        (query-migrate's answer, {logging: the most vrings seen logging,
        pages: pages the port logged since v0})."""
        seen = {"logging": 0}
        src_port = VM1_PORTS[self.at]

        def poll():
            p = self.vswd.port(src_port)
            seen["logging"] = max(seen["logging"], p["vrings_logging"])
        t_mig = time.monotonic()
        st = qemu_guest.migrate(self.qmp, uri, poll=poll,
                                bandwidth=self.args.mig_mibps << 20)
        print("%s: migration from %d to %d ms after the pings started" % (
            tag, (t_mig - t_ping) * 1000, (time.monotonic() - t_ping) * 1000))
        port = self.vswd.port(src_port)
        seen["pages"] = port["log_pages"] - v0["ports"][src_port]["log_pages"]
        during = self.moved(port["virtq"], gate)
        print("%s: on the source port from the traffic gate to the "
              "switch-over: %d bytes to vm1, %d from it" % ((tag,) + during))
        return st, seen

    def check_pings(self, tag, paused):
        """The round's traffic checked (traffic_check); the pings: no
        duplicates and, unpaused, a bounded blackout."""
        t_done = time.monotonic()
        sent, got, dups, gap = self.traffic_check(tag)
        print("%s: traffic done %.1f s after the migration" % (
            tag, time.monotonic() - t_done))
        lost = sent - got
        print("%s: pings vm2 -> vm1 every %d ms: %d sent, %d answered, %d "
              "lost (%d ms), %d duplicates" % (tag, PING_MS, sent, got, lost,
                                              lost * PING_MS, dups))
        if not paused:
            # the blackout: the longest run of lost pings (the rest are
            # RX-ring-full drops of a busy TCG guest, counted by vswd)
            self.lost.append((gap, lost))
            self.c.check(gap * PING_MS <= self.args.max_gap_ms,
                         "%s: pings lost for at most %d ms in a row (%d)" % (
                             tag, self.args.max_gap_ms, gap * PING_MS))
        self.c.check(dups == 0, "%s: no duplicate ping replies" % tag)

    def check_round(self, tag, g0, v0):
        """The counters over the round (from g0, v0), and vm1's new port
        live and not logging."""
        g1, v1 = self.settled()
        x = self.check_counters(tag, g0, v0, g1, v1)
        p = self.vswd.port(VM1_PORTS[self.at])
        self.c.check(not p["dirty_log"] and p["vrings_live"] == 2,
                     "%s: destination port live, not logging" % tag)
        print("%s: vm1 ports deq %s enq %s, rarp %d" % (
            tag, [x["ports"][n]["deq_packets"] for n in VM1_PORTS],
            [x["ports"][n]["enq_packets"] for n in VM1_PORTS],
            x["ports"]["vm1*"].get("rarp_sent", 0)))

    def stop(self):
        for g in (self.vm1, self.vm2):
            if g is not None:
                g.shutdown()
        v, self.vswd = self.vswd, None
        if v is not None:
            vswd_end(self.c, v, "shutdown")

    def kill(self):
        for g in (self.vm1, self.vm2):
            if g is not None:
                g.kill()
        if self.vswd is not None:
            self.vswd.stop()


def guest_mem(args):
    """QEMU's -m: MEM_MIB, plus --ram-extra-kib (then not a multiple of
    256 KiB, see --ram-extra-kib)."""
    if args.ram_extra_kib == 0:
        return MEM_MIB
    return "%dk" % ((MEM_MIB << 10) + args.ram_extra_kib)


def ram_stats(st):
    """What the RAM passes sent (query-migrate): pages with data, zero
    pages, dirty-bitmap syncs."""
    r = st.get("ram", {})
    return "%d pages sent with data, %d zero, %d syncs" % (
        r.get("normal", -1), r.get("duplicate", -1),
        r.get("dirty-sync-count", -1))


def ram_compare(tag, src_qmp, dst_qmp, tmp, r, args):
    """Both ends' guest RAM page by page (the destination paused): the
    indexes of the pages that differ."""
    size, keep = (MEM_MIB << 20) + (args.ram_extra_kib << 10), args.keep
    a = qemu_guest.ram_digest(src_qmp, size, os.path.join(
        tmp, "ram-src-%d.bin" % r), keep=keep)
    b = qemu_guest.ram_digest(dst_qmp, size, os.path.join(
        tmp, "ram-dst-%d.bin" % r), keep=keep)
    diff = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
    if len(a) != len(b):
        diff.append(-1)
    print("%s: guest RAM compared, %d of %d pages differ%s" % (
        tag, len(diff), len(a), (" (at %s%s)" % (" ".join(
            "%#x" % (i * 4096) for i in diff[:16]),
            " ..." if len(diff) > 16 else "")) if diff else ""))
    return diff


def control(args, tmp, c):
    """--control: the same guest with no NIC at all (no vswd, no
    vhost-user), busy writing memory, migrated --rounds times with the
    destination paused and both ends' RAM compared: whether a mismatch
    needs vsw at all."""
    img = qemu_guest.image()
    qp = os.path.join(tmp, "qemu-vm1-0.qmp")
    vm = QemuGuest("vm1-0", img, [], tmp, mem=guest_mem(args),
                   extra=qemu_guest.qmp_args(qp))
    vm.wait_ready()
    qmp = Qmp(qp)
    try:
        # the load migrates with the guest: it runs all along. "spin": a
        # shell counting in a loop (no syscall, no fork: the same few
        # heap pages stored to through the same TLB entries for the whole
        # migration); "idle": none
        if args.control_load == "busy":
            vm.check("dd if=/dev/urandom of=/tmp/tx bs=1M count=%d 2>/dev/"
                     "null; (while :; do md5sum /tmp/tx; cp /tmp/tx /tmp/"
                     "ty; done) >/dev/null 2>&1 &" % args.mib, 120)
        elif args.control_load == "spin":
            vm.check("(i=0; while :; do i=$((i+1)); done) >/dev/null 2>&1 &")
        elif args.control_load == "heap":
            # ~12 MiB of awk array rewritten in place, no syscall: many
            # pages dirty at every sync, stored to through TLB entries
            # that no context switch flushes
            vm.check("awk 'BEGIN { for (;;) { for (i = 0; i < 200000; "
                     "i++) a[i] = i + n; n++ } }' >/dev/null 2>&1 &")
        for r in range(args.rounds):
            time.sleep(args.lead_s)
            uri = "unix:%s" % os.path.join(tmp, "mig-%d.sock" % (r + 1))
            dst = qemu_guest.incoming_guest(
                "vm1-%d" % (r + 1), img, [], tmp, uri, paused=True,
                mem=guest_mem(args))
            dst_qmp = Qmp(dst.qmp_path)
            st = qemu_guest.migrate(qmp, uri,
                                    bandwidth=args.mig_mibps << 20)
            qemu_guest.wait_status(dst_qmp, "paused")
            tag = "control round %d" % r
            print("%s: migration %d ms (downtime %s ms), %s" % (
                tag, st.get("total-time", -1), st.get("downtime", "?"),
                ram_stats(st)))
            diff = ram_compare(tag, qmp, dst_qmp, tmp, r, args)
            c.check(not diff, "%s: destination RAM == source RAM (%d pages"
                    " differ)" % (tag, len(diff)))
            dst_qmp.cmd("cont")
            qemu_guest.attach_agent(dst)
            qemu_guest.retire(vm, qmp)
            vm, qmp = dst, dst_qmp
    finally:
        vm.kill()


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--mib", type=int, default=8)
    ap.add_argument("--compare-every", type=int, default=3,
                    help="rounds 0, N, 2N ... start the destination paused "
                    "and compare both ends' RAM (about 10 s each); 0: never")
    ap.add_argument("--announce", choices=("rarp", "guest"), default="rarp")
    ap.add_argument("--ping-s", type=int, default=8,
                    help="seconds of pings per round")
    ap.add_argument("--lead-s", type=float, default=0.5,
                    help="traffic runs this long before the migration")
    ap.add_argument("--max-gap-ms", type=int, default=3000,
                    help="the longest run of lost pings a migration may "
                    "cause, in ms")
    ap.add_argument("--mig-mibps", type=int, default=64,
                    help="migration bandwidth cap, MiB/s: the RAM pass "
                    "(~75 MiB) then takes ~1 s, all of it with logging on "
                    "under traffic (uncapped it took ~70 ms: the source "
                    "port could log nothing before the switch-over)")
    ap.add_argument("--udp-pps", type=int, default=2000,
                    help="datagrams per second of the UDP stream vm2 -> vm1")
    ap.add_argument("--udp-size", type=int, default=1024,
                    help="bytes of UDP payload per datagram")
    ap.add_argument("--port-opts", default="",
                    help="options for every port-add (' offloads=off')")
    ap.add_argument("--control", action="store_true",
                    help="no vswd: a guest without a NIC, migrated --rounds "
                    "times, RAM compared each time (is a mismatch vsw's?)")
    ap.add_argument("--control-load", choices=("busy", "spin", "heap",
                                               "idle"),
                    default="busy", help="--control: the guest copies and "
                    "hashes files all along, counts in a shell loop, "
                    "rewrites a 12 MiB awk array, or runs nothing")
    ap.add_argument("--ram-extra-kib", type=int, default=0,
                    help="guest RAM is 256 MiB + this (a multiple of 8): "
                    "8 makes its RAM block no multiple of 256 KiB, so "
                    "QEMU < 9.0 syncs its dirty bitmap page by page, the "
                    "path that re-arms TCG's dirty tracking (its 64-page "
                    "fast path does not: QEMU commit 03bfc2188f, lost guest "
                    "stores under TCG, doc/testing.md)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--eal", action="append", default=[],
                    help="more EAL options for vswd (log levels)")
    return ap.parse_args()


def main():
    args = parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    if qemu_guest.qemu_binary() is None:
        print("qemu-system-x86_64 not installed: skipped")
        return 77
    qemu_guest.exit_on_sigterm()
    tmp = tempfile.mkdtemp(prefix="vsw-migrate-")
    c = Checks()
    print("temp dir %s, %d rounds, announce by %s" % (tmp, args.rounds,
                                                     args.announce))
    if args.control:
        try:
            control(args, tmp, c)
        except Exception as e:  # noqa: BLE001 -- report, clean up, fail
            c.fail("ERROR: %s" % e)
        for f in c.failures:
            print("failed: %s" % f)
        return c.finish(tmp, args.keep)
    rig = Rig(args, tmp, c)
    t0 = time.monotonic()
    try:
        rig.start()
        for r in range(args.rounds):
            rig.migrate_once(r, paused=(args.compare_every > 0
                                        and r % args.compare_every == 0))
        rig.stop()
    except Exception as e:  # noqa: BLE001 -- report, clean up, fail
        c.fail("ERROR: %s" % e)
    finally:
        rig.kill()
    if rig.lost:
        print("unpaused migrations: longest ping blackout %s ms (max %d ms);"
              " pings lost in all %s" % (
                  [g * PING_MS for g, _ in rig.lost],
                  max(g for g, _ in rig.lost) * PING_MS,
                  [n for _, n in rig.lost]))
    return c.finish_timed(rig.times, t0, tmp, args.keep)


if __name__ == "__main__":
    sys.exit(main())
