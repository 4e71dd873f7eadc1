#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration test: two vsw "hosts" joined by a VXLAN overlay whose
control plane is BGP EVPN through real gobgpd instances and
vsw-evpn-agent (issue 17).

  host 1: vswd1 (ports ul = veth U1, vm1 = veth of guest g1, vm3 = veth of
          guest g3) + namespace h1 (gobgpd1, agent1; BGP on M1)
  host 2: vswd2 (ports ul = veth U2, vm2 = veth of guest g2) + h2 (gobgpd2,
          agent2; BGP on M2)
  U1 -- U2 the underlay (VTEPs 10.0.0.1 and .2, MTU 1600), M1 -- M2 the
  management link (192.168.R.1/.2, iBGP AS 65000 between the gobgpds),
  every guest a namespace with one veth (10.200.R.i/24) in L2 domain VNI
  100 on its host. Both PMDs back off when idle (pmd-sleep-set) and each
  vswd's PMD has its own CPU.

Steps (each timed; the figures are printed):
  1. type-3 routes: each vswd gets the other's VTEP in its flood list
  2. g1 <-> g2 ping (64 B and 1514 B frames) and a TCP stream, md5 equal;
     type-2 routes: each vswd has the other's guest MAC as remote
  3. g3 moves from host 1 to host 2 (its veth taken by vswd2, a gratuitous
     ARP): host 1 has g3's MAC remote at 10.0.0.2 within 10 s, g1 -> g3
     ping across the overlay
  4. host 2's agent and gobgpd stopped (SIGTERM): host 1's remote VTEP and
     MACs gone; g1 -> g2 ping gets nothing, vswd1 alive, its counters add
     up (rx + clones = tx + drops)
  5. host 2 back, agent 1 restarted with a stale remote MAC in vswd1: the
     stale entry removed (reconcile), g1 -> g2 ping again
  6. garbage from host 2's gobgpd (an unserved VNI, a type-3 route with no
     VNI): counted by agent 1, which keeps running
  7. clean stops: agents withdraw their routes, vswds exit cleanly

Needs root (netns), gobgpd + gobgp (else exit 77).
usage: overlay_evpn.py --build BUILD_DIR [--keep]
"""
import os
import signal
import socket
import struct
import sys
import time

from vswtest import netns
from vswtest.bgp import MISSING as GOBGP_MISSING, Agent, Gobgpd
from vswtest.bgp import found as gobgp_found
from vswtest.checks import Checks, vswd_end
from vswtest.netns import sh
from vswtest.vswd import Vswd

VNI = 100
VTEP = ("10.0.0.1", "10.0.0.2")
MOVE_BOUND_S = 10.0
WITHDRAW_BOUND_S = 3.0


def garp(ifname, ip):
    """A gratuitous ARP request from ifname (what a moved VM sends)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    mac = s.getsockname()[4]
    a = socket.inet_aton(ip)
    frame = (b"\xff" * 6 + mac + b"\x08\x06" +
             struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + mac + a +
             b"\0" * 6 + a).ljust(60, b"\0")
    s.send(frame)
    s.close()


class Net:
    """Namespaces h1 h2 (BGP), g1 g2 g3 (guests); the vswd-side veth ends
    stay in the root namespace for net_af_packet."""

    def __init__(self):
        tag = os.getpid() % 10000
        self.tag = tag
        self.h = ["evh%d-%d" % (tag, i) for i in (1, 2)]
        self.g = ["evg%d-%d" % (tag, i) for i in (1, 2, 3)]
        self.ul = ["e%du%d" % (tag, i) for i in (1, 2)]
        self.m = ["e%dm%d" % (tag, i) for i in (1, 2)]
        self.vm = ["e%dv%d" % (tag, i) for i in (1, 2, 3)]  # root side
        self.gif = ["e%dg%d" % (tag, i) for i in (1, 2, 3)]  # guest side
        sub = tag % 250 + 1
        self.mgmt = ["192.168.%d.%d" % (sub, i) for i in (1, 2)]
        self.addr = ["10.200.%d.%d" % (sub, i) for i in (1, 2, 3)]
        self.mac = ["52:54:00:%02x:%02x:%02x" % (sub, tag % 256, i)
                    for i in (1, 2, 3)]
        self.rig = netns.Rig()

    def up(self):
        r = self.rig
        r.ns_add(*(self.h + self.g))
        for ns in self.g:  # no IPv6 chatter: the counters stand still
            r.no_ipv6(ns)
        r.veth(self.ul[0], self.ul[1], mtu=1600)
        r.veth(self.m[0], self.m[1], self.h[0], self.h[1])
        for i in range(2):
            sh("ip", "-n", self.h[i], "addr", "add", self.mgmt[i] + "/24",
               "dev", self.m[i])
            sh("ip", "-n", self.h[i], "link", "set", self.m[i], "up")
        for i in range(3):
            r.veth(self.vm[i], self.gif[i], b_ns=self.g[i])
            r.guest(self.g[i], self.gif[i], self.addr[i] + "/24",
                    mac=self.mac[i])
        # The root-side ends carry no kernel traffic of their own (no IPv6
        # router solicitations learned as guests' MACs) and hand over
        # whole frames with checksums, as a NIC does.
        for ifname in self.ul + self.vm:
            r.nic(ifname)

    def down(self):
        self.rig.down()

    def ping(self, src, dst, count, size=56, interval=0.1):
        return tuple(netns.ping(self.g[src], self.addr[dst], count, size,
                                interval)[:2])

    def tcp(self, src, dst, nbytes):
        return netns.tcp(self.g[src], self.g[dst], self.addr[dst], nbytes)


def domain(v):
    """vswd's domain VNI: (vteps, {mac: entry}); a MAC listed both local
    and remote is the local entry (local wins in the datapath)."""
    for d in v.ctl("domain-show --json")["domains"]:
        if d["vni"] == VNI:
            macs = {}
            for m in d["macs"]:
                mac = m["mac"].lower()
                if m["type"] == "local" or mac not in macs:
                    macs[mac] = m
            return set(d["vteps"]), macs
    return set(), {}


def identity(c, v, tag):
    """Packets in = out + counted drops, once the counters stand still
    (vswd's own ARP requests and replies are injected packets)."""
    keys = ("rx_packets", "multi_output_clones", "sw_gso_extra_segments",
            "injected_packets", "tx_packets")
    prev = None
    for _ in range(20):
        s = v.pmd_stats()
        if prev is not None and s == prev:
            break
        prev = s
        time.sleep(0.2)
    drops = sum(x for k, x in s.items() if k.startswith("drop_"))
    lhs = sum(s.get(k, 0) for k in keys[:4])
    c.check(lhs == s["tx_packets"] + drops,
            "%s: rx + clones + gso segments + injected (%d) = tx + drops "
            "(%d)" % (tag, lhs, s["tx_packets"] + drops))


def wait_until(what, fn, timeout):
    """Poll fn every 50 ms until true; the seconds it took (or None)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if fn():
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


def remote_at(v, mac, vtep):
    e = domain(v)[1].get(mac)
    return e is not None and e["type"] == "remote" and e.get("vtep") == vtep


class Test:
    def __init__(self, args, tmp, checks):
        self.args = args
        self.tmp = tmp
        self.c = checks
        self.net = Net()
        self.vswd = [None, None]
        self.bgp = [None, None]
        self.agent = [None, None]
        self.prog = os.path.join(args.build, "switch", "evpn-agent",
                                 "vsw-evpn-agent")
        self.times = {}

    def check(self, cond, what):
        self.c.check(cond, what)

    def start_vswd(self, i, lines):
        run = os.path.join(self.tmp, "run%d" % (i + 1))
        os.makedirs(run, exist_ok=True)
        path = os.path.join(self.tmp, "vswd%d.conf" % (i + 1))
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        lcores = "0@%d,1@%d" % (i, 1 - i)  # the two PMDs on two CPUs
        v = Vswd(self.args.build, run, self.tmp, "h%d" % (i + 1),
                 config=path, eal=("--lcores", lcores),
                 args=["--allow-devargs-files"])
        v.ready()
        self.vswd[i] = v
        return v

    def fanout_clash(self):
        """DPDK 22.11's net_af_packet puts a port's sockets in fanout group
        (pid ^ ifindex) & 0xffff, and the kernel refuses a group id another
        interface holds (EINVAL): two vswd in one namespace clash when
        pid1 ^ ifindex1 == pid2 ^ ifindex2 in 16 bits, for any interface
        each opens during the test (vm3 moves from vswd1 to vswd2)."""
        n = self.net

        def idx(ifname):
            with open("/sys/class/net/%s/ifindex" % ifname) as f:
                return int(f.read())
        ifs = ([n.ul[0], n.vm[0], n.vm[2]], [n.ul[1], n.vm[1], n.vm[2]])
        groups = [{(self.vswd[i].p.pid ^ idx(x)) & 0xffff: x
                   for x in ifs[i]} for i in (0, 1)]
        clash = [(g, groups[0][g], groups[1][g]) for g in groups[0]
                 if g in groups[1] and groups[0][g] != groups[1][g]]
        if clash:
            print("note: vswd1 and vswd2 would share fanout group %s: "
                  "vswd2 restarted" % clash)
        return bool(clash)

    def start_bgp(self, i):
        n = self.net
        if self.bgp[i] is None:
            self.bgp[i] = Gobgpd(n.h[i], "h%d" % (i + 1), self.tmp, VTEP[i],
                                 n.mgmt[i], [n.mgmt[1 - i]])
        self.bgp[i].start()

    def start_agent(self, i):
        if self.agent[i] is None:
            self.agent[i] = Agent(self.prog, self.net.h[i], "h%d" % (i + 1),
                                  self.tmp, self.vswd[i].ctl_path, VTEP[i],
                                  vnis=[VNI], extra=("--resync", "600"))
        self.agent[i].start()

    def setup(self):
        n = self.net
        n.up()
        for i, guests in ((0, (0, 2)), (1, (1,))):
            lines = ["port-add ul dpdk devargs=net_af_packet0,iface=%s" %
                     n.ul[i]]
            for k, g in enumerate(guests):
                lines.append("port-add vm%d dpdk devargs=net_af_packet%d,"
                             "iface=%s" % (g + 1, k + 1, n.vm[g]))
            lines += ["overlay-set underlay=ul local-ip=%s mtu=1600" % VTEP[i],
                      "domain-add %d" % VNI]
            lines += ["domain-port-add %d vm%d" % (VNI, g + 1)
                      for g in guests]
            lines.append("pmd-sleep-set 500")
            self.start_vswd(i, lines)
            if i == 1 and self.fanout_clash():
                # a fresh pid for vswd2 (see fanout_clash)
                self.vswd[1].stop()
                self.start_vswd(i, lines)
        for i in (0, 1):
            self.start_bgp(i)
        t0 = time.monotonic()
        for i in (0, 1):
            self.bgp[i].wait_established(1)
        self.times["bgp_up"] = time.monotonic() - t0
        for i in (0, 1):
            self.start_agent(i)

    def step_type3(self):
        t = wait_until("vteps", lambda: all(
            domain(self.vswd[i])[0] == {VTEP[1 - i]} for i in (0, 1)), 15)
        self.times["type3"] = t
        self.check(t is not None, "type-3: each vswd floods to the other "
                   "VTEP only (%s, %s)" % (domain(self.vswd[0])[0],
                                           domain(self.vswd[1])[0]))

    def step_traffic(self):
        n = self.net
        # The first packets may wait for vswd's ARP of the remote VTEP.
        t = wait_until("ping", lambda: n.ping(0, 1, 1)[1] == 1, 10)
        self.times["first_ping"] = t
        self.check(t is not None, "g1 -> g2: a first ping answered")
        for size in (56, 1472):
            sent, got = n.ping(0, 1, 10, size)
            self.check(got == sent, "g1 -> g2 across the overlay, %d B "
                       "frames: %d of %d replies" % (size + 42, got, sent))
        sent, got = n.tcp(0, 1, 8 << 20)
        self.check(sent == got and sent.startswith(str(8 << 20)),
                   "TCP g1 -> g2, 8 MiB: sent %s, received %s" % (sent, got))
        for i, g in ((0, 1), (1, 0)):
            self.check(wait_until("t2", lambda: remote_at(
                self.vswd[i], n.mac[g], VTEP[1 - i]), 5) is not None,
                "type-2: vswd%d has g%d's MAC remote at %s (%s)" %
                (i + 1, g + 1, VTEP[1 - i],
                 domain(self.vswd[i])[1].get(n.mac[g])))
        ent = domain(self.vswd[0])[1].get(n.mac[0], {})
        self.check(ent.get("type") == "local" and ent.get("port") == "vm1",
                   "vswd1 has g1's MAC local on vm1 (%s)" % ent)

    def step_move(self):
        n, v1, v2 = self.net, self.vswd[0], self.vswd[1]
        # g3 talks on host 1 first: host 2 learns it as remote at host 1.
        self.check(n.ping(2, 1, 3)[1] == 3, "g3 (host 1) -> g2 ping")
        self.check(wait_until("g3", lambda: remote_at(
            v2, n.mac[2], VTEP[0]), 5) is not None,
            "vswd2 has g3's MAC remote at %s" % VTEP[0])
        t0 = time.monotonic()
        v1.ctl("domain-port-del %d vm3" % VNI)
        v1.ctl("port-del vm3")
        v2.ctl("port-add vm3 dpdk devargs=net_af_packet2,iface=%s" %
               n.vm[2])
        v2.ctl("domain-port-add %d vm3" % VNI)
        garps = [0]

        def moved():
            # a gratuitous ARP every 0.5 s, as QEMU announces a VM that
            # arrived (the new port may not poll yet for the first one)
            if time.monotonic() - t0 >= 0.5 * garps[0]:
                garps[0] += 1
                sh("ip", "netns", "exec", n.g[2], sys.executable,
                   os.path.abspath(__file__), "--garp", n.gif[2],
                   n.addr[2])
            return remote_at(v1, n.mac[2], VTEP[1])
        t = wait_until("move", moved, MOVE_BOUND_S + 5)
        self.times["move_garps"] = garps[0]
        self.times["move"] = None if t is None else time.monotonic() - t0
        self.check(t is not None and self.times["move"] < MOVE_BOUND_S,
                   "MAC move: vswd1 has g3's MAC remote at %s within %.0f s "
                   "(%s s)" % (VTEP[1], MOVE_BOUND_S, self.times["move"]))
        ent = domain(v2)[1].get(n.mac[2], {})
        self.check(ent.get("type") == "local" and ent.get("port") == "vm3",
                   "vswd2 has g3's MAC local on vm3 (%s)" % ent)
        sent, got = n.ping(0, 2, 10)
        self.check(got == sent, "g1 (host 1) -> g3 (moved to host 2): %d "
                   "of %d replies" % (got, sent))
        st = self.agent[0].status()
        self.check(("%d %s" % (VNI, n.mac[2])) not in st.get("advertised",
                                                             []),
                   "agent 1 no longer advertises g3's MAC")

    def step_withdraw(self):
        n, v1 = self.net, self.vswd[0]
        t0 = time.monotonic()
        rc = self.agent[1].stop()
        self.check(rc == 0, "agent 2 exits 0 on SIGTERM (rc %s)" % rc)
        # A clean stop withdraws at once (not after the 9 s hold time):
        # the agents' periodic RIB re-read is off (--resync 600), so this
        # is the monitor's withdrawals at work.
        t = wait_until("withdrawn", lambda: domain(v1)[0] == set() and not [
            m for m, e in domain(v1)[1].items() if e["type"] == "remote"],
            WITHDRAW_BOUND_S)
        self.times["withdraw"] = t
        self.check(t is not None, "agent 2 stopped: within %.0f s vswd1 has "
                   "no remote VTEP or MAC left (%s)" % (WITHDRAW_BOUND_S,
                                                        domain(v1),))
        left = [p for p in self.bgp[1].evpn_rib()
                if "neighbor-ip" not in p]
        self.check(not left, "agent 2 withdrew every own route from "
                   "gobgpd 2 (%d left)" % len(left))
        self.bgp[1].stop()
        self.times["withdraw_total"] = time.monotonic() - t0
        before = v1.pmd_stats()
        sent, got = n.ping(0, 1, 5)
        self.check(got == 0, "host 2 withdrawn: g1 -> g2 gets no reply "
                   "(%d of %d)" % (got, sent))
        self.check(v1.alive(), "vswd1 alive")
        identity(self.c, v1, "vswd1")
        p = v1.pmd_stats()
        d = {k: p[k] - before.get(k, 0) for k in p if k.startswith("drop_")}
        self.check(sum(d.values()) > 0, "vswd1 counted the frames for g2 as "
                   "drops (%s)" % {k: x for k, x in d.items() if x})

    def step_restart(self):
        n, v1 = self.net, self.vswd[0]
        self.agent[0].stop()
        stale = "52:54:00:ee:ee:%02x" % (n.tag % 256)
        v1.ctl("mac-add %d %s 10.0.0.9" % (VNI, stale))
        self.start_bgp(1)
        self.bgp[1].wait_established(1)
        self.start_agent(1)
        self.start_agent(0)
        t = wait_until("stale", lambda: stale not in domain(v1)[1], 5)
        self.check(t is not None, "agent 1 restarted: the stale remote MAC "
                   "%s removed" % stale)
        self.check(wait_until("back", lambda: domain(v1)[0] == {VTEP[1]},
                              10) is not None, "host 2 back: its VTEP again")
        t = wait_until("ping", lambda: n.ping(0, 1, 1)[1] == 1, 10)
        self.times["reconverge_ping"] = t
        self.check(t is not None, "host 2 back: g1 -> g2 ping again")

    def step_garbage(self):
        b2 = self.bgp[1]
        rd = "%s:999" % VTEP[1]
        b2.cli("global", "rib", "-a", "evpn", "add", "macadv",
               "52:54:00:99:99:01", "0.0.0.0", "etag", "0", "label", "999",
               "rd", rd, "rt", "65000:999", "encap", "vxlan", "nexthop",
               VTEP[1])
        b2.cli("global", "rib", "-a", "evpn", "add", "multicast", VTEP[1],
               "etag", "0", "rd", "%s:7" % VTEP[1], "encap", "vxlan",
               "nexthop", VTEP[1])
        t = wait_until("garbage", lambda: self.agent[0].status().get(
            "routes_ignored_vni", 0) >= 1 and self.agent[0].status().get(
            "routes_bad", 0) >= 1, 5)
        st = self.agent[0].status()
        self.check(t is not None, "agent 1 counted an unserved VNI (%s) "
                   "and a type-3 route without a VNI (%s)" %
                   (st.get("routes_ignored_vni"), st.get("routes_bad")))
        self.check(self.agent[0].alive(), "agent 1 still running")
        self.check(domain(self.vswd[0])[0] == {VTEP[1]},
                   "vswd1's flood list unchanged by the garbage")

    def finish(self):
        for i in (1, 0):
            rc = self.agent[i].stop()
            self.check(rc == 0, "agent %d exits 0 (rc %s)" % (i + 1, rc))
        # (gobgpd 2 still has the garbage routes the test added itself)
        left = [p for p in self.bgp[0].evpn_rib() if "neighbor-ip" not in p]
        self.check(not left, "gobgpd 1: no own route left after agent 1's "
                   "stop (%d)" % len(left))
        for i in (0, 1):
            self.bgp[i].stop()
        for i in (0, 1):
            v, self.vswd[i] = self.vswd[i], None
            vswd_end(self.c, v)

    def cleanup(self):
        for a in self.agent:
            if a is not None:
                a.stop(signal.SIGKILL)
        for b in self.bgp:
            if b is not None:
                b.stop(signal.SIGKILL)
        for v in self.vswd:
            if v is not None:
                v.stop(signal.SIGKILL)
        self.net.down()

    def run(self):
        t0 = time.monotonic()
        self.setup()
        self.step_type3()
        self.step_traffic()
        self.step_move()
        self.step_withdraw()
        self.step_restart()
        self.step_garbage()
        self.finish()
        self.times["total"] = time.monotonic() - t0
        print("times (s): " + ", ".join(
            "%s %s" % (k, "-" if v is None else "%.2f" % v)
            for k, v in self.times.items()))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--garp":
        garp(sys.argv[2], sys.argv[3])
        return 0
    opened = netns.opening("overlay-evpn-",
                           (gobgp_found, GOBGP_MISSING))
    if opened is None:
        return netns.SKIP
    args, tmp = opened
    checks = Checks()
    t = Test(args, tmp, checks)
    try:
        t.run()
    except Exception as e:  # a failed step: report, keep the logs
        checks.fail("%s: %s" % (type(e).__name__, e))
    finally:
        t.cleanup()
    return checks.finish(tmp, args.keep)


if __name__ == "__main__":
    sys.exit(main())
