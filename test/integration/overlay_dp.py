#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The VXLAN datapath between two vswd "hosts", with static VTEPs and MACs
(no BGP: test/integration/overlay_* by the EVPN agent does that).

  gA (10.201.0.1, MTU 1450) -- vswd A in nsA -- underlay veth -- vswd B in
  nsB -- gB (10.201.0.2, MTU 1450)

Each vswd runs in its own network namespace; its underlay is one end of a
veth pair between the two (net_af_packet, no IP on it: vswd answers ARP
for its local IP and resolves the other VTEP by ARP itself), its guest is
the namespace side of a veth whose other end is in the guest's namespace
(as vswd_pvp.py does). Checks: both VTEPs resolve each other; ping at the
smallest and largest frame, a 10 MB TCP stream with md5; an inner frame
one byte over the underlay MTU - 36 is dropped and counted
(vxlan_too_big); per vswd rx + clones + injected = tx + drops; the
encapsulated and decapsulated counts match the other side. Needs root.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from vswtest.checks import Checks, vswd_end
from vswtest.vswd import Vswd

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "netns_tool.py")
SKIP = 77
VNI = 5001
VTEP = ["192.168.77.1", "192.168.77.2"]
GUEST = ["10.201.0.1", "10.201.0.2"]


def sh(*argv, check_rc=True, timeout=30):
    r = subprocess.run(argv, capture_output=True, text=True,
                       timeout=timeout)
    if check_rc and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(argv), r.stderr.strip()))
    return r.stdout


class Net:
    def __init__(self):
        tag = os.getpid() % 100000
        self.host = ["ovh%d-%d" % (tag, i) for i in (1, 2)]
        self.guest = ["ovg%d-%d" % (tag, i) for i in (1, 2)]
        self.ul = ["ou%da%d" % (tag, i) for i in (1, 2)]
        self.gh = ["og%dh%d" % (tag, i) for i in (1, 2)]  # vswd side
        self.gg = ["og%dg%d" % (tag, i) for i in (1, 2)]  # guest side
        self.mac = [None, None]

    def ns(self, ns, *argv, **kw):
        return sh("ip", "netns", "exec", ns, *argv, **kw)

    def up(self):
        for n in self.host + self.guest:
            sh("ip", "netns", "add", n)
        sh("ip", "link", "add", self.ul[0], "type", "veth", "peer", "name",
           self.ul[1])
        for i in range(2):
            h, g = self.host[i], self.guest[i]
            sh("ip", "link", "set", self.ul[i], "netns", h)
            sh("ip", "link", "add", self.gh[i], "type", "veth", "peer",
               "name", self.gg[i])
            sh("ip", "link", "set", self.gh[i], "netns", h)
            sh("ip", "link", "set", self.gg[i], "netns", g)
            for ns, dev in ((h, self.ul[i]), (h, self.gh[i]),
                            (g, self.gg[i])):
                self.ns(ns, "sysctl", "-qw",
                        "net.ipv6.conf.%s.disable_ipv6=1" % dev)
                self.ns(ns, "ip", "link", "set", dev, "up")
                self.ns(ns, sys.executable, TOOL, "offload-off", dev)
            self.ns(g, "ip", "link", "set", "lo", "up")
            self.ns(g, "ip", "link", "set", self.gg[i], "mtu", "1450")
            self.ns(g, "ip", "addr", "add", GUEST[i] + "/24", "dev",
                    self.gg[i])
            info = json.loads(self.ns(g, "ip", "-j", "link", "show",
                                      self.gg[i]))
            self.mac[i] = info[0]["address"]

    def kstats(self, i):
        """The kernel's counters of underlay veth i."""
        return json.loads(self.ns(self.host[i], "ip", "-s", "-j", "link",
                                  "show", self.ul[i]))[0]["stats64"]

    def down(self):
        for n in self.host + self.guest:
            sh("ip", "netns", "del", n, check_rc=False)

    def run(self, i, *args, timeout=60):
        return self.ns(self.guest[i], sys.executable, TOOL, *args,
                       timeout=timeout)

    def ping(self, count, size, interval=0.05):
        out = self.run(0, "ping", GUEST[1], str(count), str(size),
                       str(interval)).split()
        return int(out[0]), int(out[1])

    def tcp(self, nbytes):
        port = "5%04d" % (os.getpid() % 10000)
        srv = subprocess.Popen(
            ["ip", "netns", "exec", self.guest[1], sys.executable, TOOL,
             "tcp-recv", GUEST[1], port], stdout=subprocess.PIPE, text=True)
        try:
            srv.stdout.readline()  # "listening"
            sent = self.run(0, "tcp-send", GUEST[1], port,
                            str(nbytes)).strip()
            got = srv.communicate(timeout=60)[0].strip()
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.wait(5)
        return sent, got


def config(net, i):
    o = 1 - i
    return [
        "pmd-sleep-set 500",  # two vswd share the machine's cores
        # 4096-frame packet rings (default 512): DPDK 22.11's af_packet
        # does not count what the kernel drops at a full ring
        # (tp_drops), so a sleeping PMD on a loaded box lost frames the
        # encap = decap + counted check cannot see.
        "port-add ul dpdk devargs=net_af_packet0,iface=%s,framecnt=4096"
        % net.ul[i],
        "port-add vm dpdk devargs=net_af_packet1,iface=%s,framecnt=4096"
        % net.gh[i],
        "overlay-set underlay=ul local-ip=%s" % VTEP[i],
        "domain-add %d" % VNI,
        "domain-port-add %d vm" % VNI,
        "vtep-add %d %s" % (VNI, VTEP[o]),
        "mac-add %d %s %s" % (VNI, net.mac[o], VTEP[o]),
    ]


def identity(c, v, tag):
    s = v.pmd_stats()
    drops = sum(x for k, x in s.items() if k.startswith("drop_"))
    lhs = (s["rx_packets"] + s["multi_output_clones"] +
           s["sw_gso_extra_segments"] + s["injected_packets"])
    c.check(lhs == s["tx_packets"] + drops,
            "%s: rx + clones + injected (%d) = tx + drops (%d)" %
            (tag, lhs, s["tx_packets"] + drops))


def resolved(v, ip):
    for n in v.ctl("overlay-show --json")["neighbours"]:
        if n["ip"] == ip and n["mac"] is not None:
            return True
    return False


def run(c, net, tmp, build, vs):
    for i in range(2):
        path = os.path.join(tmp, "vswd%d.conf" % i)
        with open(path, "w") as f:
            f.write("\n".join(config(net, i)) + "\n")
        run_dir = os.path.join(tmp, "run%d" % i)
        os.makedirs(run_dir)
        v = Vswd(build, run_dir, tmp, "ov%d" % i, config=path,
                 args=["--allow-devargs-files"],
                 wrap=["ip", "netns", "exec", net.host[i]])
        vs.append(v)
    for v in vs:
        v.ready()
    end = time.monotonic() + 10
    while time.monotonic() < end and not (resolved(vs[0], VTEP[1]) and
                                          resolved(vs[1], VTEP[0])):
        time.sleep(0.2)
    c.check(resolved(vs[0], VTEP[1]) and resolved(vs[1], VTEP[0]),
            "each VTEP resolved the other by ARP")
    sent, got = net.ping(10, 56)
    c.check(got == sent, "ping 98 B frames: %d of %d" % (got, sent))
    sent, got = net.ping(10, 1422)  # 1464 B inner frame = 1500 - 36
    c.check(got == sent, "ping 1464 B inner frames (the limit): %d of %d"
            % (got, sent))
    s, r = net.tcp(10 * 1000 * 1000)
    c.check(s and s == r, "TCP 10 MB md5 (sent %s, received %s)" % (s, r))
    # One byte past the limit: the guest may send it, vswd must not.
    before = vs[0].ctl("overlay-show --json")["counters"]["vxlan_too_big"]
    net.ns(net.guest[0], "ip", "link", "set", net.gg[0], "mtu", "1500")
    sent, got = net.ping(3, 1423)
    after = vs[0].ctl("overlay-show --json")["counters"]["vxlan_too_big"]
    c.check(got == 0 and after - before == sent,
            "1465 B inner frames dropped as vxlan_too_big: %d replies, "
            "%d counted of %d" % (got, after - before, sent))
    # Refusals: an error reply each, nothing changed.
    for bad in ("domain-add 0", "domain-add 16777216", "domain-add 5001",
                "mac-add 5001 01:00:5e:00:00:01 192.168.77.2",
                "mac-add 5001 52:54:00:00:00 192.168.77.2",
                "vtep-add 5001 %s" % VTEP[0], "domain-port-add 5001 nope",
                "domain-port-add 5001 ul",
                "overlay-set underlay=vm local-ip=1.2.3.4",
                "overlay-set underlay=ul local-ip=1.2.3.4 mtu=abc",
                "mac-del 5001 52:54:00:00:00:99"):
        st, body = vs[0].request(bad)
        c.check(st == 1, "refused: %s (%s)" % (bad, str(body).strip()))
    # The running configuration gives the overlay back, in replay order.
    for i in range(2):
        cmds = vs[i].ctl("config-show --json")["commands"]
        want = config(net, i)[3:]
        got = [x for x in cmds if x.split()[0] in (
            "overlay-set", "domain-add", "domain-port-add", "vtep-add",
            "mac-add")]
        c.check(got == want, "vswd %d: config-show has the overlay lines"
                % i, json.dumps(cmds))
    ctr = [v.ctl("overlay-show --json")["counters"] for v in vs]
    for i in range(2):
        identity(c, vs[i], "vswd %d" % i)
        d = vs[i].ctl("domain-show --json")["domains"][0]
        c.check(d["vni"] == VNI and d["ports"] == ["vm"] and
                d["vteps"] == [VTEP[1 - i]] and
                any(m["type"] == "local" and m["port"] == "vm" and
                    m["mac"] == net.mac[i] for m in d["macs"]) and
                any(m["type"] == "remote" and m["mac"] == net.mac[1 - i]
                    for m in d["macs"]),
                "vswd %d: domain-show lists port, VTEP, local and remote "
                "MAC" % i, json.dumps(d))
        bad = {k: x for k, x in ctr[i].items() if x and k.startswith(
            ("vxlan_bad", "vxlan_trunc", "vxlan_frag", "vxlan_ttl",
             "vxlan_unknown", "vxlan_copy", "vxlan_offload"))}
        c.check(not bad, "vswd %d: no decap errors %s" % (i, bad))
    # Whatever A encapsulated B decapsulated, but for what the underlay
    # lost on the way, counted: A's tx drops and packet-socket send errors
    # (oerrors), the veth pair's own drops (kernel counters), B's
    # packet-socket ring overflows (imissed); and that little.
    for i in range(2):
        tx, rx = vs[i].port("ul"), vs[1 - i].port("ul")
        kt, kr = net.kstats(i), net.kstats(1 - i)
        lost = (tx["tx_drops"] + tx["eth_stats"]["oerrors"] +
                kt["tx"]["dropped"] + kr["rx"]["dropped"] +
                rx["eth_stats"]["imissed"])
        e, d = ctr[i]["vxlan_encap"], ctr[1 - i]["vxlan_decap"]
        c.check(e > 0 and d <= e <= d + lost and lost * 100 <= e,
                "encap %d on vswd %d = decap %d on the other + %d lost "
                "on the underlay (counted)" % (e, i, d, lost),
                json.dumps({"tx": tx["eth_stats"], "rx": rx["eth_stats"],
                            "ktx": kt, "krx": kr}))
    for v in vs:
        vswd_end(c, v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: network namespaces need root")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="vsw-overlay-")
    checks = Checks()
    net = Net()
    vs = []
    try:
        net.up()
        run(checks, net, tmp, args.build, vs)
    except Exception as e:  # a failed step: report, keep the logs
        checks.fail("overlay-dp: %s" % e)
    finally:
        for v in vs:
            if v.alive():
                v.stop(signal.SIGKILL)
        net.down()
    return checks.finish(tmp, args.keep)


if __name__ == "__main__":
    sys.exit(main())
