# SPDX-License-Identifier: BSD-3-Clause
"""Network namespaces and veth pairs for the integration tests that give
vswd the kernel as its outside world (overlay_dp.py, overlay_evpn.py,
overlay_frr.py, vswd_pvp.py, vswd_af_packet.py): each builds its own
topology from these steps, names everything after its pid and takes it
all down in a finally block (Rig.down: the root-side links it made, then
the namespaces). All but vswd_pvp.py open alike (opening: --build,
--keep, skip unless root and their tools are there).

A "nic" is a veth end vswd opens with net_af_packet: up, no IPv6 (no
router solicitations learned as MACs, counters that stand still), no
offloads (whole frames with checksums, as a NIC hands them over). A
"guest" end is the one inside a guest namespace, with an address; the
guests' traffic (ping, a TCP stream with its md5) runs netns_tool.py in
their namespace. Needs root.
"""
import argparse
import os
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                    os.pardir, "integration", "netns_tool.py")
TOOL = os.path.normpath(TOOL)
SKIP = 77  # meson's exit status for a skipped test


def opening(prefix, *needs):
    """The opening the namespace tests share. Parse --build BUILD_DIR and
    --keep; print why and return None (the test returns SKIP) when this
    is not root or when one of needs, (found, message) pairs tried in
    order (found() true when the tool is there), is missing; else
    (args, tmp) with tmp a new temp dir named prefix*."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: network namespaces need root")
        return None
    for found, message in needs:
        if not found():
            print("SKIP: %s" % message)
            return None
    return args, tempfile.mkdtemp(prefix=prefix)


def sh(*argv, check_rc=True, timeout=30):
    """Run a command; its stdout, or RuntimeError with its stderr."""
    r = subprocess.run(argv, capture_output=True, text=True,
                       timeout=timeout)
    if check_rc and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(argv), r.stderr.strip()))
    return r.stdout


def in_ns(ns, *argv, **kw):
    """argv in namespace ns (None: the root namespace)."""
    if ns is None:
        return sh(*argv, **kw)
    return sh("ip", "netns", "exec", ns, *argv, **kw)


class Rig:
    """What a test made, to take down again."""

    def __init__(self):
        self.namespaces = []
        self.links = []  # root-namespace veth ends (their peers go too)

    def ns_add(self, *names, lo=True):
        for n in names:
            sh("ip", "netns", "add", n)
            self.namespaces.append(n)
            if lo:
                sh("ip", "-n", n, "link", "set", "lo", "up")

    def veth(self, a, b, a_ns=None, b_ns=None, mtu=None):
        """A veth pair a -- b, each end created in its namespace."""
        argv = ["ip", "link", "add", a]
        if mtu:
            argv += ["mtu", str(mtu)]
        if a_ns:
            argv += ["netns", a_ns]
        argv += ["type", "veth", "peer", "name", b]
        if mtu:
            argv += ["mtu", str(mtu)]
        if b_ns:
            argv += ["netns", b_ns]
        sh(*argv)
        if a_ns is None:
            self.links.append(a)
        elif b_ns is None:
            self.links.append(b)

    def nic(self, ifname, ns=None):
        """An end vswd's net_af_packet opens: no IPv6, up, no offloads."""
        in_ns(ns, "sysctl", "-qw",
              "net.ipv6.conf.%s.disable_ipv6=1" % ifname)
        in_ns(ns, "ip", "link", "set", ifname, "up")
        self.offload_off(ifname, ns)

    def guest(self, ns, ifname, addr, mac=None, mtu=None,
              keep_offloads=False):
        """A guest's end: MAC, MTU, address, up; offloads off (unless
        keep_offloads: already done, or a guest that segments itself)."""
        if mac:
            sh("ip", "-n", ns, "link", "set", ifname, "address", mac)
        if mtu:
            sh("ip", "-n", ns, "link", "set", ifname, "mtu", str(mtu))
        sh("ip", "-n", ns, "addr", "add", addr, "dev", ifname)
        sh("ip", "-n", ns, "link", "set", ifname, "up")
        if not keep_offloads:
            self.offload_off(ifname, ns)

    @staticmethod
    def offload_off(ifname, ns=None):
        in_ns(ns, sys.executable, TOOL, "offload-off", ifname)

    @staticmethod
    def no_ipv6(ns):
        """No IPv6 in a guest namespace at all (no chatter)."""
        sh("ip", "netns", "exec", ns, "sysctl", "-qw",
           "net.ipv6.conf.all.disable_ipv6=1",
           "net.ipv6.conf.default.disable_ipv6=1")

    def down(self):
        for ifname in self.links:
            sh("ip", "link", "del", ifname, check_rc=False)
        for n in self.namespaces:
            sh("ip", "netns", "del", n, check_rc=False)
        self.links, self.namespaces = [], []


def tool(ns, *args, timeout=60):
    """netns_tool.py in namespace ns; its stdout."""
    return in_ns(ns, sys.executable, TOOL, *args, timeout=timeout)


def ping(ns, dst, count, size=56, interval=0.1):
    """Ping dst from ns: [sent, received, ...] as netns_tool prints."""
    out = tool(ns, "ping", dst, str(count), str(size), str(interval))
    return [int(x) for x in out.split()]


def tcp(src_ns, dst_ns, dst, nbytes):
    """A TCP stream src_ns -> dst (listening in dst_ns); (sent,
    received), each "BYTES MD5"."""
    port = "5%04d" % (os.getpid() % 10000)
    srv = subprocess.Popen(
        ["ip", "netns", "exec", dst_ns, sys.executable, TOOL, "tcp-recv",
         dst, port], stdout=subprocess.PIPE, text=True)
    try:
        srv.stdout.readline()  # "listening"
        sent = tool(src_ns, "tcp-send", dst, port, str(nbytes)).strip()
        got = srv.communicate(timeout=60)[0].strip()
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait(5)
    return sent, got
