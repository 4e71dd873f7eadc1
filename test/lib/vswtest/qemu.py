#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Linux guests under QEMU (TCG) for the integration tests: the guest image
(test/qemu/build_image.py: Debian's kernel, busybox, virtio-net modules,
test/qemu/init.sh), booting, running commands in the guest, stopping.

    img = image()                          # built once, then cached
    from vswtest.qemu import Nic, QemuGuest, image
    g = QemuGuest("a", img, [Nic(sock, mac, "169.254.1.1/24", 9000)], tmp)
    g.wait_ready()                         # /init's agent answered
    rc, out = g.run("ping -c 3 169.254.1.2")
    g.stats("eth0")                        # /sys/class/net/eth0/statistics
    g.shutdown()                           # poweroff, then SIGTERM/SIGKILL

QEMU runs as `setpriv --pdeathsig KILL [nice -n N] [taskset -c CPUS]
qemu-system-x86_64 ...`: if the test process dies, the kernel kills QEMU
(so start guests from the main thread: the signal follows the thread that
forked). Every guest not yet stopped is killed at exit too. Consoles go to
the Proc log (LOG_DIR/qemu-NAME.log); the command agent talks over a unix
socket that QEMU connects to as its second serial port.

Fixed device options: `vectors=0` on virtio-net-pci (legacy INTx): Debian's
QEMU 7.2 segfaults under TCG when the guest enables MSI-X on a vhost-user
virtio-net device. Guest memory is a shared memfd backing NUMA node 0, as
vhost-user needs.
"""
import atexit
import os
import re
import shutil
import signal
import socket
import sys
import threading
import time

from vswtest.proc import Proc

# the image builder lives with the guest's /init in test/qemu
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "qemu"))
import build_image  # noqa: E402

QEMU = "qemu-system-x86_64"
# no IPv6 chatter on the test links; a panic ends QEMU (-no-reboot)
BASE_CMDLINE = ("console=ttyS0 panic=-1 nokaslr ipv6.disable=1 quiet "
                "loglevel=3")


def qemu_binary():
    """Path of qemu-system-x86_64, or None when it is not installed."""
    return shutil.which(QEMU)


def image(cache=None, log=print):
    """The guest image's manifest (kernel, initrd, kver), built if needed."""
    return build_image.ensure(cache, log=log)


class GuestError(RuntimeError):
    pass


class Nic:
    """One virtio-net-pci device on a vhost-user socket. server=True: QEMU
    owns the socket (`server=on,wait=off`) and the switch connects to it."""

    def __init__(self, sock, mac, addr, mtu=1500, server=False, queues=1,
                 reconnect=0, dev_opts=""):
        self.sock, self.mac, self.addr, self.mtu = sock, mac, addr, mtu
        self.server, self.queues, self.reconnect = server, queues, reconnect
        self.dev_opts = dev_opts  # more virtio-net-pci options ("csum=off")
        self.ip = addr.split("/")[0]

    def qemu_args(self, i):
        ch = "socket,id=c%d,path=%s" % (i, self.sock)
        if self.server:
            ch += ",server=on,wait=off"
        elif self.reconnect:
            ch += ",reconnect=%d" % self.reconnect
        nd = "vhost-user,id=n%d,chardev=c%d" % (i, i)
        dev = "virtio-net-pci,netdev=n%d,vectors=0,mac=%s" % (i, self.mac)
        if self.queues > 1:
            nd += ",queues=%d" % self.queues
            dev += ",mq=on"
        if self.dev_opts:
            dev += "," + self.dev_opts
        return ["-chardev", ch, "-netdev", nd, "-device", dev]

    def cmdline(self, i):
        return "vsw.nic%d=%s,%s,%d" % (i, self.mac, self.addr, self.mtu)


_live = set()


@atexit.register
def _kill_all():
    for g in list(_live):
        g.kill()


def exit_on_sigterm():
    """Turn SIGTERM (meson's timeout) into SystemExit, so finally blocks
    run and stop the guests; SIGKILL is covered by --pdeathsig."""
    def on_term(sig, frame):
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGTERM, on_term)


class QemuGuest:
    def __init__(self, name, img, nics, log_dir, cpus=1, mem=256, nice=0,
                 cpu_list=None, extra=()):
        self.name, self.nics = name, list(nics)
        self.agent_path = os.path.join(log_dir, "qemu-%s.agent" % name)
        if os.path.exists(self.agent_path):
            os.unlink(self.agent_path)
        self.lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.lsock.bind(self.agent_path)
        self.lsock.listen(1)
        self.conn = None
        self.abuf = ""
        self.alock = threading.Condition()
        self.seq = 0
        self.ifnames = {}
        # mem: MiB, or a size string with a unit ("262152k")
        cmdline = " ".join([BASE_CMDLINE, "vsw.agent=ttyS1"] +
                           [n.cmdline(i) for i, n in enumerate(self.nics)])
        argv = ["setpriv", "--pdeathsig", "KILL"]
        if nice:
            argv += ["nice", "-n", str(nice)]
        if cpu_list is not None:
            argv += ["taskset", "-c", cpu_list]
        argv += [qemu_binary() or QEMU, "-name", name,
                 "-nodefaults", "-no-user-config", "-display", "none",
                 "-machine", "q35", "-accel", "tcg", "-smp", str(cpus),
                 "-m", str(mem), "-object",
                 "memory-backend-memfd,id=mem,size=%s,share=on" % (
                     "%dM" % mem if isinstance(mem, int) else mem),
                 "-numa", "node,memdev=mem",
                 "-kernel", img["kernel"], "-initrd", img["initrd"],
                 "-append", cmdline, "-no-reboot",
                 "-chardev", "stdio,id=con,signal=off",
                 "-serial", "chardev:con",
                 "-chardev", "socket,id=agent,path=%s" % self.agent_path,
                 "-serial", "chardev:agent"]
        for i, n in enumerate(self.nics):
            argv += n.qemu_args(i)
        argv += list(extra)
        self.argv = argv
        self.t0 = time.monotonic()
        self.boot_s = None
        self.p = Proc("qemu-" + name, argv, log_dir)
        _live.add(self)

    # ---- agent ----

    def _reader(self):
        while True:
            try:
                data = self.conn.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            with self.alock:
                self.abuf += data.decode(errors="replace")
                self.alock.notify_all()

    def _wait_agent(self, rx, timeout):
        end = time.monotonic() + timeout
        with self.alock:
            while True:
                m = rx.search(self.abuf)
                if m:
                    return m
                left = end - time.monotonic()
                if left <= 0 or self.p.p.poll() is not None:
                    raise GuestError(
                        "%s: no %r from the agent in %.0f s (qemu %s); "
                        "agent tail %r; console tail:\n%s" % (
                            self.name, rx.pattern, timeout,
                            "exited %s" % self.p.p.returncode
                            if self.p.p.poll() is not None else "running",
                            self.abuf[-300:], self.p.buf[-2000:]))
                self.alock.wait(min(left, 0.2))

    def wait_ready(self, timeout=180):
        """Wait for QEMU to connect the agent port and /init's agent to
        announce itself; returns the boot time in seconds."""
        self.lsock.settimeout(timeout)
        try:
            self.conn, _ = self.lsock.accept()
        except socket.timeout:
            raise GuestError("%s: QEMU never connected the agent port; "
                             "log:\n%s" % (self.name, self.p.buf[-2000:]))
        threading.Thread(target=self._reader, daemon=True).start()
        left = timeout - (time.monotonic() - self.t0)
        m = self._wait_agent(re.compile(r"@@READY (\S+) (\S+)\n"), left)
        self.kver, self.uptime = m.group(1), float(m.group(2))
        self.boot_s = time.monotonic() - self.t0
        return self.boot_s

    def run(self, cmd, timeout=60):
        """Run a shell command in the guest: (exit status, output)."""
        if "\n" in cmd:
            raise ValueError("one line per command")
        self.seq += 1
        seq = self.seq
        self.conn.sendall(("%d %d %s\n" % (seq, timeout, cmd)).encode())
        rx = re.compile(r"@@BEGIN %d\n(.*?)\n@@END %d (\d+)\n" % (seq, seq),
                        re.S)
        m = self._wait_agent(rx, timeout + 30)
        with self.alock:
            self.abuf = self.abuf[m.end():]
        return int(m.group(2)), m.group(1)

    def check(self, cmd, timeout=60):
        """run() that must exit 0; returns the output."""
        rc, out = self.run(cmd, timeout)
        if rc != 0:
            raise GuestError("%s: `%s` exit %d: %s" % (self.name, cmd, rc,
                                                        out[-1000:]))
        return out

    def ifname(self, nic):
        """The guest's interface name for a Nic (found by MAC)."""
        if nic.mac not in self.ifnames:
            out = self.check("grep -l '^%s$' /sys/class/net/*/address"
                             % nic.mac)
            self.ifnames[nic.mac] = out.strip().split("/")[4]
        return self.ifnames[nic.mac]

    def stats(self, ifname):
        """/sys/class/net/IFNAME/statistics as {name: int}."""
        out = self.check("cd /sys/class/net/%s/statistics && grep . *"
                         % ifname)
        return {k: int(v) for k, v in
                (line.split(":", 1) for line in out.split("\n") if line)}

    def nic_counters(self, nic):
        """A NIC's counters in vswtest.checks.identity()'s terms."""
        s = self.stats(self.ifname(nic))
        return {"TX-packets": s["tx_packets"], "TX-bytes": s["tx_bytes"],
                "RX-packets": s["rx_packets"], "RX-bytes": s["rx_bytes"],
                "errors": s["rx_errors"] + s["rx_dropped"] +
                s["tx_errors"] + s["tx_dropped"]}

    def queue_stats(self, ifname):
        """virtio_net's per-queue counters (`ethtool -S`):
        {("rx"|"tx", queue): {"packets": n, "bytes": n}}."""
        out = self.check("ethtool -S %s" % ifname)
        qs = {}
        for m in re.finditer(r"(rx|tx)_queue_(\d+)_(packets|bytes): (\d+)",
                             out):
            qs.setdefault((m.group(1), int(m.group(2))), {})[
                m.group(3)] = int(m.group(4))
        return qs

    def set_channels(self, ifname, n):
        """`ethtool -L IFNAME combined N`: the queue pairs the guest uses."""
        self.check("ethtool -L %s combined %d" % (ifname, n))

    def channels(self, ifname):
        """(max, current) combined channels from `ethtool -l`."""
        out = self.check("ethtool -l %s" % ifname)
        vals = [int(v) for v in re.findall(r"Combined:\s+(\d+)", out)]
        return vals[0], vals[1]

    # ---- stopping ----

    def shutdown(self, timeout=20):
        """poweroff in the guest; SIGTERM, then SIGKILL, if QEMU stays."""
        if self.p.p.poll() is None and self.conn is not None:
            try:
                self.conn.sendall(b"0 5 poweroff -f\n")
                self.p.p.wait(timeout)
            except Exception:  # stop() below ends it
                pass
        return self.kill(signal.SIGTERM)

    def kill(self, sig=signal.SIGKILL):
        rc = self.p.stop(sig, timeout=10)
        for s in (self.conn, self.lsock):
            if s is not None:
                s.close()
        if os.path.exists(self.agent_path):
            os.unlink(self.agent_path)
        _live.discard(self)
        return rc


# ---- live migration (test/integration/qemu_migrate.py) ----

class Qmp:
    """A QMP monitor on a unix socket QEMU listens on (`qmp_args`)."""

    def __init__(self, path, timeout=30):
        end = time.monotonic() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.monotonic() > end:
                    raise GuestError("QMP %s: no monitor" % path)
                time.sleep(0.05)
        self.s.settimeout(timeout)
        self.buf = b""
        self.events = []
        self._read()  # greeting
        self.cmd("qmp_capabilities")

    def _read(self):
        import json
        while b"\n" not in self.buf:
            data = self.s.recv(65536)
            if not data:
                raise GuestError("QMP: connection closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def cmd(self, name, **args):
        """Run a command; its "return" value (GuestError on "error")."""
        import json
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.s.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            r = self._read()
            if "event" in r:
                self.events.append(r)
                continue
            if "error" in r:
                raise GuestError("QMP %s: %s" % (name, r["error"]))
            return r.get("return")

    def close(self):
        self.s.close()


def settled(read, timeout=20.0):
    """read() -> (guest counters, vswd snapshot), once they are unchanged
    over two reads 0.3 s apart (guests' and vswd's packet counts)."""
    last, end = None, time.monotonic() + timeout
    while time.monotonic() < end:
        gs, snap = read()
        key = (sorted(gs.items()), sorted(
            (n, p["deq_packets"], p["enq_packets"])
            for n, p in snap["ports"].items()))
        if key == last:
            return gs, snap
        last = key
        time.sleep(0.3)
    raise RuntimeError("counters never settled")


def qmp_args(path):
    """QEMU options for a QMP monitor at path (QEMU listens)."""
    return ["-qmp", "unix:%s,server=on,wait=off" % path]


def incoming_guest(name, img, nics, log_dir, uri, paused=False, **kw):
    """A QEMU waiting for vm's migration stream at uri (`-incoming`), with
    a QMP monitor (guest.qmp_path); paused=True adds -S (it stays stopped
    after the migration until `cont`). The same options as the source
    (cpus, mem, ...) must be given; nics may differ in sockets and modes,
    not in MACs. Call attach_agent() once the migration completed."""
    qp = os.path.join(log_dir, "qemu-%s.qmp" % name)
    extra = list(kw.pop("extra", ())) + qmp_args(qp) + ["-incoming", uri]
    if paused:
        extra.append("-S")
    g = QemuGuest(name, img, nics, log_dir, extra=extra, **kw)
    g.qmp_path = qp
    return g


def attach_agent(g, timeout=30):
    """The migrated guest's agent: accept the destination QEMU's agent
    connection (the guest did not boot: no @@READY). Commands sent to the
    source after its switch-over are lost, so none may be in flight."""
    g.lsock.settimeout(timeout)
    g.conn, _ = g.lsock.accept()
    threading.Thread(target=g._reader, daemon=True).start()
    g.boot_s = 0.0


def retire(src, src_qmp):
    """The source QEMU once the destination runs: quit it (it may close
    the monitor first), close its monitor, kill what is left."""
    try:
        src_qmp.cmd("quit")
    except Exception:  # noqa: BLE001 -- it may close first
        pass
    src_qmp.close()
    src.kill()


def migrate(src_qmp, uri, timeout=120, downtime_ms=300, bandwidth=1 << 30,
            poll=None):
    """Migrate the guest behind src_qmp to uri; returns query-migrate's
    final answer (status "completed", with total-time, downtime, ram).
    poll(): called every 50 ms while it runs."""
    src_qmp.cmd("migrate-set-parameters", **{
        "downtime-limit": downtime_ms, "max-bandwidth": bandwidth})
    src_qmp.cmd("migrate", uri=uri)
    end = time.monotonic() + timeout
    while True:
        st = src_qmp.cmd("query-migrate")
        if st.get("status") in ("completed", "failed", "cancelled"):
            if st["status"] != "completed":
                raise GuestError("migration %s: %s" % (
                    st["status"], st.get("error-desc", "")))
            return st
        if time.monotonic() > end:
            raise GuestError("migration not done in %d s: %s" % (timeout,
                                                                 st))
        if poll is not None:
            poll()
        time.sleep(0.05)


def wait_status(qmp, want, timeout=30):
    """Poll query-status until the run state is want ("paused", ...)."""
    end = time.monotonic() + timeout
    while True:
        st = qmp.cmd("query-status")["status"]
        if st == want:
            return
        if time.monotonic() > end:
            raise GuestError("run state %s, not %s" % (st, want))
        time.sleep(0.05)


def ram_digest(qmp, size, path, page=4096, keep=False):
    """md5 per page of guest-physical [0, size) (QMP pmemsave to path, then
    removed unless keep): a list, to compare a migration's two ends page
    by page."""
    import hashlib
    qmp.cmd("pmemsave", val=0, size=size, filename=path)
    out = []
    with open(path, "rb") as f:
        while True:
            b = f.read(page)
            if not b:
                break
            out.append(hashlib.md5(b).digest())
    if not keep:
        os.unlink(path)
    return out
