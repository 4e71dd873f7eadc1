#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration test: live migration of a DPDK guest (QEMU, TCG) on vsw,
whose RX buffers only the device writes: the proof that vsw's dirty log
covers the RX buffers it fills (issue 13; qemu_migrate.py's Linux guest
cannot show it: its driver writes the buffer pages again itself).

    peer (veth, this script) -- nic (net_af_packet) -- vswd -- vm1-s0
                                                          `-- vm1-s1
    vm1: dpdk-testpmd on its virtio-net-pci NIC (uio_pci_generic),
         forwarding "noisy" with a delay FIFO, mbufs with pinned external
         data buffers (--mp-alloc=xbuf)

The guest image is build_dpdk_image.py's. testpmd sends every frame back
unchanged (io forwarding through the FIFO: --noisy-tx-sw-buffer-size
frames held), and vswd's rules send it to the peer (in_port rules; from
the peer to both vm1 ports, the one without a running guest drops). The
guest never writes the data buffers: xbuf puts them in memory of their
own, away from the mbuf headers testpmd writes, and io forwarding reads
them only. So at the switch-over the FIFO holds frames that vsw wrote and
only vsw's dirty log can have told QEMU about: without it (the mutant
virtq-log-no-rx-buffers) their pages on the destination hold what QEMU's
first RAM pass saw, and the destination's testpmd sends those.

The peer sends sequenced frames (ethertype 0x88b5: a nonce, the sequence
number, then SHAKE-128 of both) at --pps, faster than the FIFO drains
under TCG, and checks every frame that comes back: one whose payload is
not its sequence's, a repeat, one of another stream or an unknown frame
fails the round; loss is allowed and counted (ring full, the blackout).
A round that carries fewer than --min-carried frames across the
switch-over (sent before it, returned after it) proved nothing about the
RX buffers' log; at least one round of the run must carry that many
(QEMU 7.2 at 512 MiB + 8 KiB, see GUEST_MEM, sometimes holds few).

vm1 migrates --rounds times between vm1-s0 and vm1-s1 (QEMU -incoming on
a unix socket, as qemu_migrate.py). Exit 77 (skipped) without QEMU or
dpdk-testpmd.

usage: qemu_migrate_dpdk.py --build BUILD_DIR [--rounds N] [--keep]
"""
import argparse
import hashlib
import os
import random
import socket
import struct
import sys
import tempfile
import threading
import time

from qemu_migrate import ram_stats
from vswtest import netns
from vswtest import qemu as qemu_guest
from vswtest.checks import Checks, vswd_end
from vswtest.qemu import Nic, QemuGuest, Qmp
from vswtest.vswd import Vswd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "qemu"))
import build_dpdk_image  # noqa: E402

MEM_MIB = 512
# QEMU -m 512 MiB + 8 KiB: a RAM block that is no multiple of 256 KiB keeps
# QEMU 7.2 off its 64-page dirty-bitmap fast path, which (before upstream
# 03bfc2188f) can leave the guest CPU's own stores unrecorded: stale guest
# pages on the destination (qemu_migrate.py --ram-extra-kib, doc/testing.md)
GUEST_MEM = "%dk" % ((MEM_MIB << 10) + 8)
HUGEPAGES = 96  # 192 MiB of 2 MiB pages for testpmd's pools
MAC1 = "52:54:00:13:01:01"
IP1 = "169.254.9.1/24"  # the kernel's, until the NIC goes to DPDK
PORTS = ("vm1-s0", "vm1-s1")
ETH_TYPE = 0x88b5  # IEEE local experimental
ETH_RARP = 0x8035  # vswd's SEND_RARP announcement, flooded by the rule
PACKET_OUTGOING = 4
# DPDK 22.11 (Debian) is built for corei7 (SSE4.2); -cpu max does not
# boot this kernel under TCG (IO-APIC timer check)
CPU = ["-cpu", "Nehalem"]


def body(nonce, seq, size):
    return hashlib.shake_128(struct.pack("<QQ", nonce, seq)).digest(size)


class Peer:
    """Sends the sequenced frames on one veth end and checks the frames
    that come back on it (two threads; the socket calls free the GIL)."""

    def __init__(self, ifname, pps, size):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                               socket.htons(0x0003))  # ETH_P_ALL
        self.s.bind((ifname, 0))
        self.s.settimeout(0.2)
        self.mac = self.s.getsockname()[4]
        self.pps, self.size = pps, size
        self.lock = threading.Lock()
        self.running = False

    def start(self, nonce):
        self.nonce = nonce
        self.next_seq = 0
        self.seen = set()
        self.bad = []   # (kind, detail)
        self.rarps = 0
        self.switch_seq = None  # next_seq at the switch-over
        self.carried = 0
        self.stop_ev = threading.Event()
        self.stop_sending = False
        self.running = True
        self.tx = threading.Thread(target=self._send, daemon=True)
        self.rx = threading.Thread(target=self._recv, daemon=True)
        self.rx.start()
        self.tx.start()

    def switched(self):
        with self.lock:
            self.switch_seq = self.next_seq

    def stop(self, drain_s=2.0):
        """Stop sending; keep checking for drain_s (the FIFO drains)."""
        self.stop_sending = True
        self.tx.join()
        time.sleep(drain_s)
        self.stop_ev.set()
        self.rx.join()
        self.running = False

    def _send(self):
        dst = bytes.fromhex(MAC1.replace(":", ""))
        hdr = dst + self.mac + struct.pack("!H", ETH_TYPE)
        t0 = time.monotonic()
        while not self.stop_sending:
            due = int((time.monotonic() - t0) * self.pps)
            with self.lock:
                first = self.next_seq
            for seq in range(first, due):
                f = hdr + struct.pack("<QQ", self.nonce, seq) + body(
                    self.nonce, seq, self.size - 16)
                with self.lock:  # counted before it can come back
                    self.next_seq = seq + 1
                self.s.send(f)
            time.sleep(0.002)

    def _bad(self, kind, detail):
        if len(self.bad) < 1000:
            self.bad.append((kind, detail))

    def _recv(self):
        while not self.stop_ev.is_set():
            try:
                f, addr = self.s.recvfrom(65536)
            except socket.timeout:
                continue
            if addr[2] == PACKET_OUTGOING:
                continue
            et = struct.unpack_from("!H", f, 12)[0] if len(f) >= 14 else 0
            if et == ETH_RARP:
                self.rarps += 1
                continue
            if et != ETH_TYPE or len(f) != 14 + self.size:
                self._bad("foreign", "%d B, type %#06x: %s" % (
                    len(f), et, f[:32].hex()))
                continue
            nonce, seq = struct.unpack_from("<QQ", f, 14)
            with self.lock:
                sent, sw = self.next_seq, self.switch_seq
            if nonce != self.nonce:
                self._bad("other stream", "nonce %#x seq %d" % (nonce, seq))
            elif seq >= sent:
                self._bad("never sent", "seq %d (%d sent)" % (seq, sent))
            elif f[30:] != body(nonce, seq, self.size - 16):
                self._bad("payload not its sequence's", "seq %d" % seq)
            elif seq in self.seen:
                self._bad("repeat", "seq %d" % seq)
            else:
                self.seen.add(seq)
                if sw is not None and seq < sw:
                    self.carried += 1

    def close(self):
        self.s.close()


class Rig:
    def __init__(self, args, tmp, c):
        self.args, self.tmp, self.c = args, tmp, c
        self.run = os.path.join(tmp, "run")
        os.makedirs(self.run)
        self.vswd = self.vm1 = self.qmp = self.peer = None
        self.net = netns.Rig()
        self.at = 0
        self.gen = 0
        self.times = []

    def nic(self, i):
        return Nic(os.path.join(self.run, PORTS[i] + ".sock"), MAC1, IP1)

    def extra(self):
        # QEMU asks the backend to announce (SEND_RARP): testpmd would not
        return CPU + ["-global", "virtio-net-pci.guest_announce=off"]

    def start(self):
        a, b = "mdp%d" % os.getpid(), "mdv%d" % os.getpid()
        self.net.veth(a, b)
        for i in (a, b):  # up, no IPv6 chatter, whole frames
            self.net.nic(i)
        self.peer = Peer(a, self.args.pps, self.args.size)
        lines = ["# qemu-migrate-dpdk"]
        lines += ["port-add %s vhost-user" % n for n in PORTS]
        lines += ["port-add nic dpdk devargs=net_af_packet0,iface=%s" % b,
                  "flow-add priority=100,in_port=nic,actions=%s" % ",".join(
                      "output:%s" % n for n in PORTS)]
        lines += ["flow-add priority=100,in_port=%s,actions=output:nic" % n
                  for n in PORTS]
        path = os.path.join(self.tmp, "vswd.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.vswd = Vswd(self.args.build, self.run, self.tmp, "migdpdk",
                         config=path, args=["--allow-devargs-files"])
        self.vswd.ready()
        self.img = build_dpdk_image.ensure()
        t0 = time.monotonic()
        qp = os.path.join(self.tmp, "qemu-vm1-0.qmp")
        self.vm1 = QemuGuest("vm1-0", self.img, [self.nic(0)], self.tmp,
                             mem=GUEST_MEM, extra=self.extra() +
                             qemu_guest.qmp_args(qp))
        self.vm1.wait_ready()
        self.qmp = Qmp(qp)
        self.times.append(("boot", time.monotonic() - t0))
        self.vswd.wait_up([PORTS[0]], 2, timeout=60)
        t0 = time.monotonic()
        print(self.vm1.check(build_dpdk_image.dpdk_setup(HUGEPAGES), 60)
              .strip())
        ifc = self.vm1.ifname(self.vm1.nics[0])
        pci = self.vm1.check(build_dpdk_image.bind_nic(ifc), 30).strip()
        print("vm1: %s (%s) bound to uio_pci_generic" % (pci, ifc))
        self.vm1.check(
            "dpdk-testpmd --lcores 0@0,1@0 -n 1 --file-prefix vm1 "
            "--no-telemetry -a %s -- --forward-mode=noisy "
            "--noisy-tx-sw-buffer-size=%d --noisy-tx-sw-buffer-flushtime=%d "
            "--mp-alloc=xbuf --total-num-mbufs=%d --rxd=256 --txd=256 "
            "--auto-start --stats-period 1000 >/tmp/testpmd.out 2>&1 &"
            % (pci, self.args.fifo, self.args.flush_ms, self.args.mbufs))
        out = self.vm1.check(
            "n=0; until grep -q 'Press enter\\|Port 0: .*Link up\\|"
            "Checking link statuses... *Done\\|noisy' /tmp/testpmd.out; do "
            "sleep 1; n=$((n+1)); pidof dpdk-testpmd >/dev/null && "
            "[ $n -lt 90 ] || { cat /tmp/testpmd.out; exit 1; }; done; "
            "sleep 2; cat /tmp/testpmd.out", 120)
        print("vm1 testpmd:\n  " + "\n  ".join(out.strip().splitlines()[-8:]))
        self.times.append(("testpmd up", time.monotonic() - t0))

    def forwarded(self, seconds=3.0):
        """Frames the peer got back over a short stream before the rounds:
        testpmd forwards, and how fast the FIFO drains."""
        self.peer.start(random.getrandbits(63))
        time.sleep(seconds)
        self.peer.stop()
        got = len(self.peer.seen)
        print("warm-up: %d frames sent at %d/s, %d back, %d bad" % (
            self.peer.next_seq, self.args.pps, got, len(self.peer.bad)))
        self.c.check(got > 0 and not self.peer.bad, "warm-up: frames come "
                     "back through testpmd, none bad (%d back, %s)" % (
                         got, self.peer.bad[:3]))

    def migrate_once(self, r):
        src, src_qmp = self.vm1, self.qmp
        nxt = (self.at + 1) % len(PORTS)
        self.gen += 1
        uri = "unix:%s" % os.path.join(self.tmp, "mig-%d.sock" % self.gen)
        tag = "round %d %s->%s" % (r, PORTS[self.at], PORTS[nxt])
        print("-- %s" % tag)
        t0 = time.monotonic()
        dst = qemu_guest.incoming_guest(
            "vm1-%d" % self.gen, self.img, [self.nic(nxt)], self.tmp, uri,
            mem=GUEST_MEM, extra=self.extra())
        dst_qmp = Qmp(dst.qmp_path)
        self.vswd.wait_connected(PORTS[nxt], tag)
        base = self.vswd.port(PORTS[self.at])
        nonce = (self.gen << 40) | random.getrandbits(40)
        self.peer.start(nonce)
        time.sleep(self.args.lead_s)
        st = qemu_guest.migrate(src_qmp, uri,
                                bandwidth=self.args.mig_mibps << 20)
        self.peer.switched()
        qemu_guest.attach_agent(dst)
        qemu_guest.retire(src, src_qmp)
        self.vm1, self.qmp, self.at = dst, dst_qmp, nxt
        time.sleep(self.args.tail_s)
        self.peer.stop()
        p = self.vswd.port(PORTS[nxt - 1])
        pages = p["log_pages"] - base["log_pages"]
        print("%s: migration %d ms (downtime %s ms), %s; source logged %d "
              "pages" % (tag, st.get("total-time", -1), st.get("downtime",
                                                               "?"),
                         ram_stats(st), pages))
        pr = self.peer
        kinds = {}
        for k, d in pr.bad:
            kinds[k] = kinds.get(k, 0) + 1
        print("%s: peer sent %d frames of %d B at %d/s (%d before the "
              "switch-over): %d back, %d lost, %d carried across, %d bad %s"
              % (tag, pr.next_seq, 14 + self.args.size, self.args.pps,
                 pr.switch_seq, len(pr.seen), pr.next_seq - len(pr.seen),
                 pr.carried, len(pr.bad), kinds or ""))
        for k, d in pr.bad[:10]:
            print("%s:   %s: %s" % (tag, k, d))
        self.c.check(not pr.bad, "%s: every frame back is its sequence's, "
                     "once (%d bad: %s)" % (tag, len(pr.bad), kinds))
        self.carried.append(pr.carried)
        self.c.check(pages > 0, "%s: the source port logged dirty pages "
                     "(%d)" % (tag, pages))
        self.times.append((tag, time.monotonic() - t0))

    def stop(self):
        if self.vm1 is not None:
            self.vm1.kill()
            self.vm1 = None
        v, self.vswd = self.vswd, None
        if v is not None:
            vswd_end(self.c, v, "shutdown")

    def kill(self):
        if self.vm1 is not None:
            self.vm1.kill()
        if self.vswd is not None:
            self.vswd.stop()
        if self.peer is not None:
            self.peer.close()
        self.net.down()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--pps", type=int, default=3000,
                    help="frames per second the peer sends")
    ap.add_argument("--size", type=int, default=1024,
                    help="bytes after the Ethernet header per frame")
    ap.add_argument("--fifo", type=int, default=512,
                    help="testpmd's noisy FIFO: frames the guest holds")
    ap.add_argument("--flush-ms", type=int, default=1000,
                    help="testpmd drains its FIFO after this long idle")
    ap.add_argument("--mbufs", type=int, default=4096)
    ap.add_argument("--lead-s", type=float, default=1.0,
                    help="the stream runs this long before the migration")
    ap.add_argument("--tail-s", type=float, default=2.0,
                    help="and this long after it")
    ap.add_argument("--min-carried", type=int, default=64,
                    help="frames one round at least must carry across "
                    "the switch-over")
    ap.add_argument("--mig-mibps", type=int, default=256,
                    help="migration bandwidth cap, MiB/s")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    if qemu_guest.qemu_binary() is None:
        print("qemu-system-x86_64 not installed: skipped")
        return 77
    if not os.path.exists(build_dpdk_image.TESTPMD):
        print("%s not installed: skipped" % build_dpdk_image.TESTPMD)
        return 77
    qemu_guest.exit_on_sigterm()
    tmp = tempfile.mkdtemp(prefix="vsw-migdpdk-")
    c = Checks()
    print("temp dir %s, %d rounds" % (tmp, args.rounds))
    rig = Rig(args, tmp, c)
    t0 = time.monotonic()
    try:
        rig.start()
        rig.forwarded()
        rig.carried = []
        for r in range(args.rounds):
            rig.migrate_once(r)
        c.check(max(rig.carried) >= args.min_carried,
                "a round held >= %d frames across the switch-over (per "
                "round: %s): the run tested the RX buffers' log" % (
                    args.min_carried, rig.carried))
        rig.stop()
    except Exception as e:  # noqa: BLE001 -- report, clean up, fail
        c.fail("ERROR: %s" % e)
    finally:
        rig.kill()
    return c.finish_timed(rig.times, t0, tmp, args.keep)


if __name__ == "__main__":
    sys.exit(main())
