# SPDX-License-Identifier: BSD-3-Clause
"""dpdk-testpmd: the guest (virtio_user ports, driven over stdin in
interactive mode), the backend with net_vhost ports (benchmarks), and
parsers for its statistics output."""
import os
import re
import signal
import time

from vswtest.proc import Proc, rm_runtime_dir

SEG = 2048  # guest mbuf data room


def _stat_blocks(text, title, rule):
    """{port: {key: int}} from testpmd's tables "RULE... TITLE <port>
    RULE... key: value ... RULE x 20"."""
    res = {}
    rx = r"%s (\d+)\s+%s+(.*?)%s{20}" % (title, rule, rule)
    for blk in re.finditer(rx, text, re.S):
        res[int(blk.group(1))] = {
            k: int(v)
            for k, v in re.findall(r"([A-Za-z-]+):\s+(\d+)", blk.group(2))}
    return res


def parse_port_stats(text):
    """'show port stats all' -> {port: {key: int}}."""
    return _stat_blocks(text, "NIC statistics for port", "#")


def parse_fwd_stats(text):
    """'stop' output -> {port: {RX-packets, TX-packets, TX-dropped, ...}}."""
    return _stat_blocks(text, "Forward statistics for port", "-")


def parse_xstats(text):
    """'show port xstats all' -> {port: {name: int}}."""
    res = {}
    for blk in re.finditer(r"NIC extended statistics for port (\d+)(.*?)"
                           r"(?=NIC extended statistics|\Z)", text, re.S):
        res[int(blk.group(1))] = {
            k: int(v) for k, v in re.findall(r"(\w+):\s+(\d+)", blk.group(2))}
    return res


def jumbo_rx(xstats, port):
    """Frames over 1518 B that a guest port received (all queues)."""
    return sum(v for k, v in xstats.get(port, {}).items()
               if re.fullmatch(r"rx_q\d+_size_1519_max_packets", k))


def segments(size, seg=SEG):
    """A `set txpkts` list for size bytes in seg-byte mbufs."""
    segs = []
    while size > 0:
        segs.append(min(size, seg))
        size -= segs[-1]
    return ",".join(str(s) for s in segs)


class Guest:
    """A dpdk-testpmd guest with virtio_user ports on the given sockets,
    driven over stdin (interactive mode). server=True makes testpmd the
    vhost-user server (the backend then connects as a client);
    queue_size=None leaves virtio_user's default ring size; vdevs_extra
    adds ports (e.g. net_pcap) numbered after the virtio_user ones;
    devargs (e.g. "packed_vq=1,mrg_rxbuf=0") is appended to each
    virtio_user port's arguments (replacing our mrg_rxbuf=1, in_order=0); eal
    adds EAL options (e.g. --force-max-simd-bitwidth=512)."""

    def __init__(self, testpmd, socks, log_dir, tag, queues=1, server=False,
                 queue_size=1024, extra=(), vdevs_extra=(), devargs="",
                 eal=()):
        vdevs = []
        # virtio_user ignores a key given twice (it wants a count of 1):
        # devargs replace our defaults instead of following them
        keys = dict(kv.split("=", 1) for kv in
                    ["mrg_rxbuf=1", "in_order=0"] + [
                        x for x in devargs.split(",") if x])
        # without MRG_RXBUF virtio_user has no scatter offload: frames fit
        # one mbuf (the caller sizes them), up to 9100 B
        mrg = keys["mrg_rxbuf"] != "0"
        for i, s in enumerate(socks):
            v = "net_virtio_user%d,path=%s,queues=%d" % (i, s, queues)
            if queue_size:
                v += ",queue_size=%d" % queue_size
            if server:
                v += ",server=1"
            v += "".join(",%s=%s" % kv for kv in keys.items())
            vdevs.append("--vdev=" + v)
        vdevs += ["--vdev=" + v for v in vdevs_extra]  # ports after ours
        self.nports = len(socks)
        self.prefix = "vswg%d-%s" % (os.getpid(), tag)
        # stdbuf: testpmd's printf output must reach the pipe before the
        # prompt that cmdline write()s unbuffered, or outputs interleave.
        argv = ["stdbuf", "-oL", testpmd, "--no-huge", "-m", "512",
                "--no-pci", "--no-shconf", "--no-telemetry",
                "--file-prefix=" + self.prefix,
                "--lcores", "0@1,1@0"] + list(eal) + [
                # after eal: of two patterns matching a driver's log type
                # (registered when its plugin loads), the earlier one wins
                "--log-level=*:notice"] + vdevs + [
                "--", "-i", "--total-num-mbufs=16384"] + (
                ["--max-pkt-len=9600", "--enable-scatter"] if mrg else
                ["--max-pkt-len=9100"]) + ["--rxq=%d" % queues,
                "--txq=%d" % queues] + list(extra)
        self.p = Proc("guest-" + tag, argv, log_dir, stdin=True)

    def ready(self, timeout=60):
        self.p.wait_for(r"testpmd> ", 0, timeout)

    def cmd(self, line, timeout=30):
        return self.p.cmd(line, timeout)

    def port_stats(self):
        return parse_port_stats(self.cmd("show port stats all"))

    def xstats(self):
        return parse_xstats(self.cmd("show port xstats all"))

    def settle(self, timeout=20.0):
        """Poll port stats until the RX counters stop moving."""
        ports = tuple(range(self.nports))
        last, stable, end = None, 0, time.monotonic() + timeout
        while time.monotonic() < end:
            st = self.port_stats()
            cur = tuple(st.get(p, {}).get("RX-packets", -1) for p in ports)
            stable = stable + 1 if cur == last else 0
            if stable >= 3:
                return
            last = cur
            time.sleep(0.3)
        raise RuntimeError("guest RX counters never settled")

    def drain(self, timeout=20.0):
        """Forwarding stopped: receive (rxonly, nothing sent) until the RX
        counters settle, so every packet the backend delivered is counted."""
        self.cmd("set fwd rxonly")
        self.cmd("start")
        self.settle(timeout)
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


class VhostBackend:
    """dpdk-testpmd with two net_vhost ports (io forwarding): DPDK's own
    vhost-user data path, the reference of the benchmarks."""

    name = "dpdk"

    def __init__(self, testpmd, socks, log_dir, tag, vdevs=None, extra=()):
        # vdevs: the whole port list instead (e.g. net_null ports around
        # the net_vhost ones); io forwarding pairs ports 0-1, 2-3, ...;
        # extra: more testpmd options (e.g. --mbuf-size)
        if vdevs is None:
            vdevs = ["net_vhost%d,iface=%s,queues=1" % (i, s)
                     for i, s in enumerate(socks)]
        vdevs = ["--vdev=" + v for v in vdevs]
        self.prefix = "vswb%d-d%s" % (os.getpid(), tag)
        argv = ["stdbuf", "-oL", testpmd, "--no-huge", "-m", "512",
                "--no-pci", "--file-prefix=" + self.prefix,
                "--lcores", "0@0,1@1", "--log-level=*:notice"] + vdevs + [
                "--", "-i", "--total-num-mbufs=16384",
                "--record-core-cycles", "--forward-mode=io"] + list(extra)
        self.p = Proc("dpdk" + tag, argv, log_dir, stdin=True)
        self.p.wait_for(r"testpmd> ", 0, 60)
        self.p.cmd("start")

    def snap(self):
        """{t, pkts, busy, ports, mhz}: packets forwarded, busy cycles of
        the forwarding calls that received packets (--record-core-cycles),
        the per-port forward statistics, the TSC rate testpmd states."""
        out = self.p.cmd("show fwd stats all")
        t = time.monotonic()
        m = re.search(r"\((?:busy|total) cycles=(\d+) / total \w+ "
                      r"packets=(\d+)\)(?: at (\d+) MHz)?", out)
        busy, pkts = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        mhz = int(m.group(3)) if m and m.group(3) else 0
        # non-empty RX bursts (set record-burst-stats on), all ports
        bursts = sum(int(b) for b in re.findall(r"RX-bursts : (\d+)", out))
        return {"t": t, "pkts": pkts, "busy": busy, "mhz": mhz,
                "ports": parse_fwd_stats(out), "bursts": bursts}

    def stop(self):
        try:
            self.p.send("stop")
            self.p.send("quit")
            self.p.p.wait(15)
        except Exception:  # stop() below kills it
            pass
        self.p.stop(signal.SIGTERM)
        rm_runtime_dir(self.prefix)
