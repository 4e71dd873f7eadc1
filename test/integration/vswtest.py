#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers for the integration tests and the loopback benchmarks:
child processes with collected output (Proc), dpdk-testpmd guests driven
over stdin and their statistics parsers, and vswd with its control socket.

Every wait has a timeout; every process is ours (Popen) and is stopped by
pid (Proc.stop), never by name.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time


class Proc:
    """A child process whose merged output is collected by a thread."""

    def __init__(self, name, argv, log_dir, stdin=False):
        self.name = name
        self.buf = ""
        self.lock = threading.Condition()
        self.log = open(os.path.join(log_dir, name + ".log"), "w")
        self.p = subprocess.Popen(
            argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.t = threading.Thread(target=self._reader, daemon=True)
        self.t.start()

    def _reader(self):
        fd = self.p.stdout.fileno()
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            text = data.decode(errors="replace")
            self.log.write(text)
            self.log.flush()
            with self.lock:
                self.buf += text
                self.lock.notify_all()

    def mark(self):
        with self.lock:
            return len(self.buf)

    def wait_for(self, regex, since=0, timeout=20.0):
        """Wait until regex matches output after offset since."""
        rx = re.compile(regex, re.M)
        end = time.monotonic() + timeout
        with self.lock:
            while True:
                m = rx.search(self.buf, since)
                if m:
                    return m
                left = end - time.monotonic()
                if left <= 0 or self.p.poll() is not None:
                    m = rx.search(self.buf, since)
                    if m:
                        return m
                    raise RuntimeError("%s: timeout/exit waiting for %r; "
                                       "tail:\n%s" % (self.name, regex,
                                                      self.buf[-3000:]))
                self.lock.wait(min(left, 0.2))

    def send(self, line):
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()

    def cmd(self, line, timeout=20.0):
        """Send a testpmd command, return its output up to the prompt."""
        start = self.mark()
        self.send(line)
        m = self.wait_for(r"testpmd> ", start, timeout)
        return self.buf[start:m.start()]

    def stop(self, sig=signal.SIGTERM, timeout=10.0):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(5)
        self.t.join(5)
        self.log.close()
        return self.p.returncode


def parse_port_stats(text):
    """'show port stats all' -> {port: {key: int}}."""
    res = {}
    for blk in re.finditer(r"NIC statistics for port (\d+)\s+#+(.*?)#{20}",
                           text, re.S):
        d = {}
        for k, v in re.findall(r"([A-Za-z-]+):\s+(\d+)", blk.group(2)):
            d[k] = int(v)
        res[int(blk.group(1))] = d
    return res


def parse_fwd_stats(text):
    """'stop' output -> {port: {RX-packets, TX-packets, TX-dropped, ...}}."""
    res = {}
    for blk in re.finditer(r"Forward statistics for port (\d+)\s+-+(.*?)-{20}",
                           text, re.S):
        d = {}
        for k, v in re.findall(r"([A-Za-z-]+):\s+(\d+)", blk.group(2)):
            d[k] = int(v)
        res[int(blk.group(1))] = d
    return res


def parse_xstats(text):
    res = {}
    for blk in re.finditer(r"NIC extended statistics for port (\d+)(.*?)"
                           r"(?=NIC extended statistics|\Z)", text, re.S):
        res[int(blk.group(1))] = {
            k: int(v) for k, v in re.findall(r"(\w+):\s+(\d+)", blk.group(2))}
    return res


def delta(now, before):
    return {p: {k: (v - before.get(p, {}).get(k, 0)
                    if isinstance(v, int) else v)
                for k, v in d.items()} for p, d in now.items()}


def drain(tp, timeout=15.0):
    """Poll port stats until RX counters stop moving."""
    last, stable, end = None, 0, time.monotonic() + timeout
    while time.monotonic() < end:
        st = parse_port_stats(tp.cmd("show port stats all"))
        cur = tuple(st.get(p, {}).get("RX-packets", -1) for p in (0, 1))
        stable = stable + 1 if cur == last else 0
        if stable >= 3:
            return
        last = cur
        time.sleep(0.3)
    raise RuntimeError("testpmd RX counters never settled")


def check(cond, what, failures):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def wait_path(path, proc, timeout=30.0):
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > end or proc.p.poll() is not None:
            raise RuntimeError("%s never appeared" % path)
        time.sleep(0.05)


# ---- dpdk-testpmd guests ----

class Guest:
    """A dpdk-testpmd guest with virtio_user ports on the given sockets,
    driven over stdin (interactive mode). server=True makes testpmd the
    vhost-user server (vswd then connects as a client)."""

    def __init__(self, testpmd, socks, log_dir, tag, queues=1, server=False,
                 queue_size=1024, extra=()):
        vdevs = []
        for i, s in enumerate(socks):
            v = ("net_virtio_user%d,path=%s,queues=%d,mrg_rxbuf=1,"
                 "in_order=0,queue_size=%d" % (i, s, queues, queue_size))
            if server:
                v += ",server=1"
            vdevs.append("--vdev=" + v)
        # stdbuf: testpmd's printf output must reach the pipe before the
        # prompt that cmdline write()s unbuffered, or outputs interleave.
        argv = ["stdbuf", "-oL", testpmd, "--no-huge", "-m", "512",
                "--no-pci", "--no-shconf", "--no-telemetry",
                "--file-prefix=vswg%d-%s" % (os.getpid(), tag),
                "--lcores", "0@1,1@0", "--log-level=*:notice"] + vdevs + [
                "--", "-i", "--total-num-mbufs=16384", "--max-pkt-len=9600",
                "--enable-scatter", "--rxq=%d" % queues,
                "--txq=%d" % queues] + list(extra)
        self.nports = len(socks)
        self.prefix = "vswg%d-%s" % (os.getpid(), tag)
        self.p = Proc("guest-" + tag, argv, log_dir, stdin=True)

    def ready(self, timeout=60):
        self.p.wait_for(r"testpmd> ", 0, timeout)

    def cmd(self, line, timeout=30):
        return self.p.cmd(line, timeout)

    def port_stats(self):
        return parse_port_stats(self.cmd("show port stats all"))

    def xstats(self):
        return parse_xstats(self.cmd("show port xstats all"))

    def drain(self, timeout=20.0):
        """Forwarding stopped: receive (rxonly, nothing sent) until the RX
        counters settle, so every packet vswd delivered is counted."""
        self.cmd("set fwd rxonly")
        self.cmd("start")
        ports = tuple(range(self.nports))
        last, stable, end = None, 0, time.monotonic() + timeout
        while time.monotonic() < end:
            st = self.port_stats()
            cur = tuple(st.get(p, {}).get("RX-packets", -1) for p in ports)
            stable = stable + 1 if cur == last else 0
            if stable >= 3:
                break
            last = cur
            time.sleep(0.3)
        else:
            raise RuntimeError("guest RX counters never settled")
        self.cmd("stop")

    def quit(self, timeout=30):
        try:
            self.p.send("quit")
            self.p.p.wait(timeout)
        except Exception:  # stop() below kills it
            pass
        return self.stop()

    def stop(self, sig=signal.SIGTERM):
        rc = self.p.stop(sig)
        rm_runtime_dir(self.prefix)
        return rc

    def kill(self):
        return self.stop(signal.SIGKILL)


def rm_runtime_dir(prefix):
    """EAL makes /var/run/dpdk/PREFIX (or the XDG one) even with
    --no-shconf; remove it once empty (our process has exited)."""
    for base in ("/var/run/dpdk", os.path.join(
            os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")):
        try:
            os.rmdir(os.path.join(base, prefix))
        except OSError:
            pass


def finish(tmp, failures, keep):
    """End of a test script: keep the logs on failure (or --keep), print
    the failure count, return the exit status."""
    if failures:
        print("logs kept in %s" % tmp)
    elif not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def segments(size, seg=2048):
    """A `set txpkts` list for size bytes in seg-byte mbufs."""
    segs = []
    while size > 0:
        segs.append(min(size, seg))
        size -= segs[-1]
    return ",".join(str(s) for s in segs)


# ---- vswd ----

VIRTQ_DEQ_DROPS = ("deq_drop_bad_desc", "deq_drop_too_large",
                   "deq_drop_no_mbuf", "deq_drop_short_hdr")
VIRTQ_ENQ_DROPS = ("enq_drop_ring_full", "enq_drop_not_ready",
                   "enq_drop_too_large", "enq_drop_bad_desc",
                   "enq_drop_short_hdr")
# PMD drops not already counted in a port's tx_drops (tx_undelivered, port_gone)
PMD_SWITCH_DROPS = ("drop_no_rule", "drop_action", "drop_no_output",
                    "drop_vlan_edit")


class CtlError(RuntimeError):
    pass


class Vswd:
    """vswd in its own run directory, with a unique EAL file prefix."""

    def __init__(self, build, run_dir, log_dir, tag, config=None,
                 default_config=True, eal=(), nice=0):
        self.vswd = os.path.join(build, "switch", "vswd", "vswd")
        self.vswctl = os.path.join(build, "switch", "vswctl", "vswctl")
        self.run_dir = run_dir
        self.ctl_path = os.path.join(run_dir, "vswd.ctl")
        argv = [self.vswd, "--run-dir", run_dir]
        if nice:
            argv = ["nice", "-n", str(nice)] + argv
        if config:
            argv += ["--config", config]
        elif not default_config:
            argv.append("--no-default-config")
        # --no-shconf: no runtime files left in /var/run/dpdk (vswd adds
        # it only when no --file-prefix is given)
        argv += ["--", "--no-shconf", "--no-telemetry",
                 "--file-prefix=vswd%d-%s" % (os.getpid(), tag),
                 "--log-level=*:notice"] + list(eal)
        self.prefix = "vswd%d-%s" % (os.getpid(), tag)
        self.p = Proc("vswd-" + tag, argv, log_dir)

    def ready(self, timeout=60):
        self.p.wait_for(r"^vswd: ready", 0, timeout)

    def request(self, line, timeout=10.0):
        """One control request; (status, body)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(self.ctl_path)
            s.sendall((line + "\n").encode())
            buf = b""
            while b"\n" not in buf:
                chunk = s.recv(4096)
                if not chunk:
                    raise CtlError("%s: connection closed" % line)
                buf += chunk
            hdr, rest = buf.split(b"\n", 1)
            status, length = (int(x) for x in hdr.split())
            while len(rest) < length:
                chunk = s.recv(65536)
                if not chunk:
                    raise CtlError("%s: closed mid-reply" % line)
                rest += chunk
            return status, rest[:length].decode()

    def ctl(self, line):
        """A command that must succeed; JSON replies are decoded."""
        status, body = self.request(line)
        if status != 0:
            raise CtlError("%s: %s" % (line, body.strip()))
        return json.loads(body) if "--json" in line.split() else body

    def ports(self):
        return {p["name"]: p for p in self.ctl("port-show --json")["ports"]}

    def pmd_stats(self):
        """Per-PMD counters summed over PMDs."""
        tot = {}
        for pmd in self.ctl("pmd-stats-show --json")["pmds"]:
            for k, v in pmd.items():
                if isinstance(v, int) and k != "pmd":
                    tot[k] = tot.get(k, 0) + v
        return tot

    def snapshot(self):
        """Counters as flat dicts: {port: {...}}, pmd."""
        ports = {}
        for name, p in self.ports().items():
            d = {k: v for k, v in p.items() if isinstance(v, int)}
            d.update(p.get("virtq", {}))
            ports[name] = d
        return {"ports": ports, "pmd": self.pmd_stats()}

    def wait_up(self, names, vrings, timeout=30.0):
        """Every named port has vrings live queues."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ps = self.ports()
            if all(n in ps and ps[n]["vrings_live"] >= vrings for n in names):
                return ps
            if self.p.p.poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError("vswd ports %s not up (%d vrings)" % (names,
                                                                 vrings))

    def stop(self, sig=signal.SIGTERM, timeout=20.0):
        rc = self.p.stop(sig, timeout)
        rm_runtime_dir(self.prefix)
        return rc


def snap_delta(now, before):
    return {"ports": delta(now["ports"], before["ports"]),
            "pmd": {k: v - before["pmd"].get(k, 0)
                    for k, v in now["pmd"].items()}}


def check_identity(tag, guest_stats, pairs, x, failures):
    """The per-port identities between guest and vswd counters.

    guest_stats: {guest port: testpmd port stats} (deltas of one guest
    lifetime); pairs: {guest port: vswd port name}; x: snap_delta() over
    the same window. Per port: guest TX = vswd dequeued + dequeue drops,
    vswd delivered = guest RX, vswd handed to the port = delivered +
    enqueue drops; over the switch: received + clones = handed to ports +
    tx drops + switch drops; end to end: sent = received + counted drops.
    """
    sent = recv = drops = 0
    sw_rx = sw_tx = 0
    for gp, name in sorted(pairs.items()):
        g, v = guest_stats[gp], x["ports"][name]
        deq_drops = sum(v[k] for k in VIRTQ_DEQ_DROPS)
        enq_drops = sum(v[k] for k in VIRTQ_ENQ_DROPS)
        grx = g["RX-packets"] + g.get("RX-errors", 0)
        print("%s: %s guest TX %d RX %d | vswd deq %d (+%d drops) rx %d, "
              "tx %d (tx_drops %d) enq %d (+%d drops)" % (
                  tag, name, g["TX-packets"], grx, v["deq_packets"],
                  deq_drops, v["rx"], v["tx"], v["tx_drops"],
                  v["enq_packets"], enq_drops))
        check(g["TX-packets"] == v["deq_packets"] + deq_drops,
              "%s: %s guest TX == vswd dequeued + dequeue drops" %
              (tag, name), failures)
        check(g["TX-bytes"] == v["deq_bytes"],
              "%s: %s guest TX bytes == vswd dequeued bytes" % (tag, name),
              failures)
        check(v["rx"] == v["deq_packets"],
              "%s: %s switch rx == dequeued" % (tag, name), failures)
        check(v["tx"] == v["enq_packets"] and v["tx_drops"] == enq_drops,
              "%s: %s switch tx == delivered, tx_drops == enqueue drops" %
              (tag, name), failures)
        check(v["enq_packets"] == grx,
              "%s: %s vswd delivered == guest RX" % (tag, name), failures)
        check(v["enq_bytes"] == g["RX-bytes"],
              "%s: %s delivered bytes == guest RX bytes" % (tag, name),
              failures)
        check(v["err_ring_broken"] == 0, "%s: %s ring intact" % (tag, name),
              failures)
        sent += g["TX-packets"]
        recv += grx
        drops += deq_drops + enq_drops  # tx_drops: the same enqueue drops
        sw_rx += v["rx"]
        sw_tx += v["tx"]
    pmd = x["pmd"]
    sw_drops = sum(pmd.get(k, 0) for k in PMD_SWITCH_DROPS)
    tx_drops = sum(x["ports"][n]["tx_drops"] for n in pairs.values())
    drops += sw_drops
    check(sw_rx + pmd.get("multi_output_clones", 0) ==
          sw_tx + tx_drops + sw_drops,
          "%s: switch rx %d + clones %d == tx %d + tx drops %d + switch "
          "drops %d" % (tag, sw_rx, pmd.get("multi_output_clones", 0), sw_tx,
                        tx_drops, sw_drops), failures)
    check(pmd.get("rx_packets", 0) == sw_rx,
          "%s: pmd rx_packets == sum of port rx" % tag, failures)
    check(sent + pmd.get("multi_output_clones", 0) == recv + drops,
          "%s: sent %d == received %d + counted drops %d (%s)" % (
              tag, sent, recv, drops, ", ".join(
                  "%s %d" % (k, pmd[k]) for k in PMD_SWITCH_DROPS
                  if pmd.get(k))), failures)
    return sent, recv, drops
