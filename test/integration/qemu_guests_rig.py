#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""qemu_guests.py's rig (vswd, two QEMU guests, their NICs' counters read
around each scenario and checked against vswd's) and the traffic every
case uses: ping, pinned neighbours, TCP with md5 (also across changes made
while it runs). qemu_guests_mq.py and qemu_guests.py import it."""
import os
import re
import signal
import time

from vswtest import qemu as qemu_guest
from vswtest.checks import identity, vswd_end
from vswtest.qemu import QemuGuest
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
        gs = {(gi, ni): self.guests[gi].nic_counters(self.guests[gi].nics[ni])
              for (gi, ni) in self.ports}
        return gs, self.vswd.snapshot()

    def settled(self, timeout=20.0):
        """Counters unchanged over two reads 0.3 s apart."""
        return qemu_guest.settled(self.read, timeout)

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



# ---- traffic ----

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


def tx_file(src, mib):
    """mib MiB of random data in src's /tmp/tx: its md5."""
    return src.check("dd if=/dev/urandom of=/tmp/tx bs=1M count=%d "
                     "2>/dev/null && md5sum /tmp/tx" % mib, 120).split()[0]


def md5_listen(dst, port):
    """A one-connection listener on dst's port writing the md5 of what it
    receives to /tmp/rx.md5 (rx_md5()); returns once it listens."""
    dst.check("rm -f /tmp/rx.md5; nc -l -p %d -e sh -c 'md5sum "
              ">/tmp/rx.part; mv /tmp/rx.part /tmp/rx.md5' >/dev/null 2>&1 &"
              " n=0; until netstat -ltn | grep -q ':%d '; do usleep 20000;"
              " n=$((n+1)); [ $n -lt 250 ] || exit 1; done" % (port, port))


def rx_md5(dst):
    """The md5 md5_listen() wrote (waits up to 10 s for it)."""
    return dst.check("n=0; until [ -s /tmp/rx.md5 ]; do usleep 20000; "
                     "n=$((n+1)); [ $n -lt 500 ] || exit 1; done; "
                     "cat /tmp/rx.md5", 30).split()[0]


def tcp(rig, src, dst, ni, mib, tag):
    """mib MiB of random data src -> dst over NIC ni; md5 both ends."""
    want = tx_file(src, mib)
    md5_listen(dst, 5001)
    t0 = time.monotonic()
    src.check("nc %s 5001 </tmp/tx" % dst.nics[ni].ip, 180)
    dt = time.monotonic() - t0
    got = rx_md5(dst)
    print("%s: %s -> %s %d MiB in %.2f s: %.0f Mbit/s, md5 %s %s" % (
        tag, src.name, dst.name, mib, dt, mib * 8 * 1.048576 / dt, want,
        "OK" if got == want else "MISMATCH (received %s)" % got))
    rig.c.check(got == want, "%s: %s -> %s md5 of %d MiB" % (
        tag, src.name, dst.name, mib))



def tcp_during(rig, ni, mib, changes, tag="mq-ethtool"):
    """mib MiB a -> b over NIC ni in the background; changes() while it
    runs; md5 of both ends."""
    a, b = rig.guests
    want = tx_file(a, mib)
    md5_listen(b, 5002)
    a.check("rm -f /tmp/tx.rc; (nc %s 5002 </tmp/tx; echo $? >/tmp/tx.rc)"
            " >/dev/null 2>&1 &" % b.nics[ni].ip)
    changes()
    busy = a.run("[ -e /tmp/tx.rc ]")[0] != 0
    print("%s: transfer %s when the changes were done" % (
        tag, "still running" if busy else "already over"))
    rc = a.check("n=0; until [ -s /tmp/tx.rc ]; do usleep 50000; "
                 "n=$((n+1)); [ $n -lt 3000 ] || exit 1; done; "
                 "cat /tmp/tx.rc", 200).strip()
    got = rx_md5(b)
    rig.c.check(rc == "0" and got == want, "%s: %d MiB a -> b "
                "across the changes: nc rc %s, md5 %s" % (
                    tag, mib, rc, "OK" if got == want else "MISMATCH"))
    return busy
