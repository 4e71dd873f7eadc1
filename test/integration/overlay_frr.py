#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration test: vsw's overlay against an independent implementation
(issue 17): a vsw host (vswd + gobgpd + vsw-evpn-agent, guest g1) and a
Linux "host" whose EVPN speaker is FRR (bgpd + zebra, advertise-all-vni)
over the kernel's VXLAN (a bridge br100 with vxlan100, guest g2 on it).

  vswd1: ul = veth U1 (VTEP 10.0.0.1), vm1 = g1's veth, domain VNI 100
  ns fr: U2 (10.0.0.2/24, the underlay), bridge br100 + vxlan100 (local
         10.0.0.2, nolearning) + g2's veth; zebra and bgpd (private config,
         pid and socket paths, user frr); BGP to gobgpd on M1 -- M2
  ns h1: gobgpd (iBGP AS 65000 with FRR) and the agent

Checked: the session, each side's type-3 route installed on the other
(vswd1's flood list has 10.0.0.2; the kernel's fdb has 00:00:00:00:00:00
dst 10.0.0.1), g1 <-> g2 ping (64 B, 1514 B frames) and a TCP stream
(md5), each side's type-2 route for its guest installed on the other, and
the agent's stop removing FRR's entries for 10.0.0.1.

Needs root, gobgpd, FRR's /usr/lib/frr/{zebra,bgpd} and vtysh (else 77).
usage: overlay_frr.py --build BUILD_DIR [--keep]
"""
import os
import shutil
import signal
import sys
import time

from overlay_evpn import VNI, domain, remote_at, wait_until
from vswtest import netns
from vswtest.bgp import MISSING as GOBGP_MISSING, Agent, Gobgpd
from vswtest.bgp import found as gobgp_found
from vswtest.checks import Checks, vswd_end
from vswtest.netns import sh
from vswtest.proc import Proc
from vswtest.vswd import Vswd

FRR = "/usr/lib/frr"
FRR_MISSING = "FRR not installed (apt-get install frr)"
VTEP = ("10.0.0.1", "10.0.0.2")


def frr_found():
    return (os.access(os.path.join(FRR, "bgpd"), os.X_OK) and
            os.access(os.path.join(FRR, "zebra"), os.X_OK) and
            shutil.which("vtysh"))


class Net:
    def __init__(self):
        tag = os.getpid() % 10000
        self.tag = tag
        self.h1, self.fr = "efh%d" % tag, "eff%d" % tag
        self.g = ["efg%d-%d" % (tag, i) for i in (1, 2)]
        self.ul = ["f%du%d" % (tag, i) for i in (1, 2)]
        self.m = ["f%dm%d" % (tag, i) for i in (1, 2)]
        self.vm1 = "f%dv1" % tag          # root side, vswd1's vm1
        self.brp = "f%dp2" % tag          # fr side, on br100
        self.gif = ["f%dg%d" % (tag, i) for i in (1, 2)]
        sub = tag % 250 + 1
        self.mgmt = ["192.168.%d.%d" % (sub, i) for i in (1, 2)]
        self.addr = ["10.201.%d.%d" % (sub, i) for i in (1, 2)]
        self.mac = ["52:54:00:%02x:%02x:%02x" % (sub, tag % 256, 0x10 + i)
                    for i in (1, 2)]
        self.rig = netns.Rig()

    def up(self):
        r = self.rig
        r.ns_add(self.h1, self.fr, *self.g)
        fr = self.fr
        r.veth(self.ul[0], self.ul[1], b_ns=fr, mtu=1600)
        sh("ip", "-n", fr, "addr", "add", VTEP[1] + "/24", "dev", self.ul[1])
        sh("ip", "-n", fr, "link", "set", self.ul[1], "up")
        r.veth(self.m[0], self.m[1], self.h1, fr)
        for ns, i in ((self.h1, 0), (fr, 1)):
            sh("ip", "-n", ns, "addr", "add", self.mgmt[i] + "/24", "dev",
               self.m[i])
            sh("ip", "-n", ns, "link", "set", self.m[i], "up")
        sh("ip", "-n", fr, "link", "add", "br100", "type", "bridge")
        sh("ip", "-n", fr, "link", "add", "vxlan100", "type", "vxlan", "id",
           str(VNI), "local", VTEP[1], "dstport", "4789", "nolearning")
        sh("ip", "-n", fr, "link", "set", "vxlan100", "master", "br100")
        r.veth(self.vm1, self.gif[0], b_ns=self.g[0])
        r.veth(self.brp, self.gif[1], fr, self.g[1])
        sh("ip", "-n", fr, "link", "set", self.brp, "master", "br100")
        for ifname in ("br100", "vxlan100", self.brp):
            sh("ip", "-n", fr, "link", "set", ifname, "up")
        for i in (0, 1):
            r.guest(self.g[i], self.gif[i], self.addr[i] + "/24",
                    mac=self.mac[i])
        for ifname in (self.ul[0], self.vm1):
            r.nic(ifname)

    def down(self):
        self.rig.down()

    def ping(self, src, dst, count, size=56):
        return tuple(netns.ping(self.g[src], self.addr[dst], count, size,
                                0.1)[:2])

    def tcp(self, nbytes):
        return netns.tcp(self.g[0], self.g[1], self.addr[1], nbytes)


class Frr:
    """zebra + bgpd in namespace ns, every path private (dir), user frr."""

    def __init__(self, ns, dirpath, router_id, neighbour):
        self.ns = ns
        self.dir = dirpath
        os.makedirs(dirpath)
        os.chmod(dirpath, 0o777)  # the daemons drop to user frr
        with open(os.path.join(dirpath, "zebra.conf"), "w") as f:
            f.write("hostname frr-zebra\nlog file %s/zebra.log\n" % dirpath)
        with open(os.path.join(dirpath, "bgpd.conf"), "w") as f:
            f.write("hostname frr-bgpd\nlog file %s/bgpd.log\n"
                    "router bgp 65000\n"
                    " bgp router-id %s\n"
                    " no bgp default ipv4-unicast\n"
                    " neighbor %s remote-as 65000\n"
                    " neighbor %s timers connect 1\n"
                    " address-family l2vpn evpn\n"
                    "  neighbor %s activate\n"
                    "  advertise-all-vni\n"
                    " exit-address-family\n" %
                    (dirpath, router_id, neighbour, neighbour, neighbour))
        self.procs = []

    def start(self):
        for d, extra in (("zebra", []), ("bgpd", ["-p", "179"])):
            argv = ["ip", "netns", "exec", self.ns, os.path.join(FRR, d),
                    "-f", os.path.join(self.dir, d + ".conf"),
                    "-i", os.path.join(self.dir, d + ".pid"),
                    "-z", os.path.join(self.dir, "zserv.api"),
                    "--vty_socket", self.dir, "-P", "0",
                    "-u", "frr", "-g", "frr"] + extra
            self.procs.append(Proc("frr-" + d, argv, self.dir))
            sock = os.path.join(self.dir, d + ".vty")
            end = time.monotonic() + 15
            while not os.path.exists(sock):
                if time.monotonic() > end or not self.procs[-1].alive():
                    raise RuntimeError("frr %s did not start: %s" %
                                       (d, self.procs[-1].tail()))
                time.sleep(0.1)

    def vtysh(self, *cmds):
        argv = ["ip", "netns", "exec", self.ns, "vtysh", "--vty_socket",
                self.dir]
        for c in cmds:
            argv += ["-c", c]
        return sh(*argv)

    def fdb(self):
        """The kernel's vxlan100 fdb: {(mac, dst)}."""
        out = sh("ip", "netns", "exec", self.ns, "bridge", "fdb", "show",
                 "dev", "vxlan100")
        ent = set()
        for line in out.splitlines():
            w = line.split()
            if "dst" in w:
                ent.add((w[0].lower(), w[w.index("dst") + 1]))
        return ent

    def stop(self):
        for p in reversed(self.procs):
            p.stop(signal.SIGTERM)
        self.procs = []


def run(args, tmp, c):
    net = Net()
    v = bgp = agent = frr = None
    try:
        net.up()
        run_dir = os.path.join(tmp, "run")
        os.makedirs(run_dir)
        conf = os.path.join(tmp, "vswd.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                "port-add ul dpdk devargs=net_af_packet0,iface=%s" %
                net.ul[0],
                "port-add vm1 dpdk devargs=net_af_packet1,iface=%s" %
                net.vm1,
                "overlay-set underlay=ul local-ip=%s mtu=1600" % VTEP[0],
                "domain-add %d" % VNI,
                "domain-port-add %d vm1" % VNI,
                "pmd-sleep-set 500"]) + "\n")
        v = Vswd(args.build, run_dir, tmp, "frr", config=conf,
                 args=["--allow-devargs-files"])
        v.ready()
        frr = Frr(net.fr, os.path.join(tmp, "frr"), VTEP[1], net.mgmt[0])
        frr.start()
        bgp = Gobgpd(net.h1, "h1", tmp, VTEP[0], net.mgmt[0], [net.mgmt[1]])
        bgp.start()
        bgp.wait_established(1)
        agent = Agent(os.path.join(args.build, "switch", "evpn-agent",
                                   "vsw-evpn-agent"), net.h1, "h1", tmp,
                      v.ctl_path, VTEP[0], vnis=[VNI])
        agent.start()
        t = wait_until("t3", lambda: domain(v)[0] == {VTEP[1]}, 15)
        c.check(t is not None, "FRR's type-3 route: vswd floods to %s (%s)"
                % (VTEP[1], domain(v)[0]))
        t = wait_until("t3k", lambda: ("00:00:00:00:00:00", VTEP[0]) in
                       frr.fdb(), 15)
        c.check(t is not None, "our type-3 route: the kernel floods to %s "
                "(fdb %s)" % (VTEP[0], sorted(frr.fdb())))
        t = wait_until("ping", lambda: net.ping(0, 1, 1)[1] == 1, 10)
        c.check(t is not None, "g1 (vsw) -> g2 (FRR/kernel): first ping")
        for size in (56, 1472):
            sent, got = net.ping(0, 1, 10, size)
            c.check(got == sent, "g1 -> g2, %d B frames: %d of %d replies" %
                    (size + 42, got, sent))
        sent, got = net.tcp(4 << 20)
        c.check(sent == got and sent.startswith(str(4 << 20)),
                "TCP g1 -> g2, 4 MiB: sent %s, received %s" % (sent, got))
        c.check(wait_until("t2", lambda: remote_at(v, net.mac[1], VTEP[1]),
                           5) is not None,
                "FRR's type-2 route: vswd has g2's MAC remote at %s (%s)" %
                (VTEP[1], domain(v)[1].get(net.mac[1])))
        c.check(wait_until("t2k", lambda: (net.mac[0], VTEP[0]) in
                           frr.fdb(), 5) is not None,
                "our type-2 route: the kernel has g1's MAC at %s" % VTEP[0])
        print(frr.vtysh("show evpn vni %d" % VNI))
        rc = agent.stop()
        c.check(rc == 0, "agent exits 0 (rc %s)" % rc)
        agent = None
        t = wait_until("gone", lambda: not [e for e in frr.fdb()
                                            if e[1] == VTEP[0]], 5)
        c.check(t is not None, "agent stopped: FRR removed every entry for "
                "%s (%s)" % (VTEP[0], sorted(frr.fdb())))
        bgp.stop()
        bgp = None
        frr.stop()
        frr = None
        x, v = v, None
        vswd_end(c, x)
    finally:
        if agent is not None:
            agent.stop(signal.SIGKILL)
        if bgp is not None:
            bgp.stop(signal.SIGKILL)
        if frr is not None:
            frr.stop()
        if v is not None:
            v.stop(signal.SIGKILL)
        net.down()


def main():
    opened = netns.opening("overlay-frr-",
                           (gobgp_found, GOBGP_MISSING),
                           (frr_found, FRR_MISSING))
    if opened is None:
        return netns.SKIP
    args, tmp = opened
    os.chmod(tmp, 0o755)  # FRR's daemons (user frr) write under it
    checks = Checks()
    try:
        run(args, tmp, checks)
    except Exception as e:
        checks.fail("%s: %s" % (type(e).__name__, e))
    return checks.finish(tmp, args.keep)


if __name__ == "__main__":
    sys.exit(main())
