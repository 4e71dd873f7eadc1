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
encapsulated and decapsulated counts match the other side; the overlay
metrics (metrics page) match overlay-show and domain-show; a vhost-user
port of the domain takes NET_SET_MTU up to the underlay MTU - 50 and no
more, and one joining above it is counted. Needs root.
"""
import json
import os
import signal
import socket
import struct
import sys
import time

from vswtest import netns
from vswtest.checks import Checks, vswd_end
from vswtest.vswd import Vswd

VNI = 5001
VTEP = ["192.168.77.1", "192.168.77.2"]
GUEST = ["10.201.0.1", "10.201.0.2"]


class Net:
    def __init__(self):
        tag = os.getpid() % 100000
        self.host = ["ovh%d-%d" % (tag, i) for i in (1, 2)]
        self.guest = ["ovg%d-%d" % (tag, i) for i in (1, 2)]
        self.ul = ["ou%da%d" % (tag, i) for i in (1, 2)]
        self.gh = ["og%dh%d" % (tag, i) for i in (1, 2)]  # vswd side
        self.gg = ["og%dg%d" % (tag, i) for i in (1, 2)]  # guest side
        self.mac = [None, None]
        self.rig = netns.Rig()

    def ns(self, ns, *argv, **kw):
        return netns.in_ns(ns, *argv, **kw)

    def up(self):
        r = self.rig
        r.ns_add(*self.host, lo=False)
        r.ns_add(*self.guest)
        r.veth(self.ul[0], self.ul[1], self.host[0], self.host[1])
        for i in range(2):
            h, g = self.host[i], self.guest[i]
            r.veth(self.gh[i], self.gg[i], h, g)
            r.nic(self.ul[i], h)
            r.nic(self.gh[i], h)
            r.nic(self.gg[i], g)
            r.guest(g, self.gg[i], GUEST[i] + "/24", mtu=1450,
                    keep_offloads=True)
            info = json.loads(self.ns(g, "ip", "-j", "link", "show",
                                      self.gg[i]))
            self.mac[i] = info[0]["address"]

    def kstats(self, i):
        """The kernel's counters of underlay veth i."""
        return json.loads(self.ns(self.host[i], "ip", "-s", "-j", "link",
                                  "show", self.ul[i]))[0]["stats64"]

    def down(self):
        self.rig.down()

    def ping(self, count, size, interval=0.05):
        return tuple(netns.ping(self.guest[0], GUEST[1], count, size,
                                interval)[:2])

    def tcp(self, nbytes):
        return netns.tcp(self.guest[0], self.guest[1], GUEST[1], nbytes)


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


def metric_samples(v):
    """vswd's metrics page -> {'name{labels}': int}."""
    out = {}
    for line in v.ctl("metrics --json")["metrics"].splitlines():
        if line and not line.startswith("#"):
            key, val = line.rsplit(" ", 1)
            out[key] = int(float(val))
    return out


def check_metrics(c, v, tag):
    """The overlay's metrics against overlay-show and domain-show, read
    right after (no traffic runs; the neighbours answered long ago)."""
    m = metric_samples(v)
    ctr = v.ctl("overlay-show --json")["counters"]
    d = v.ctl("domain-show --json")["domains"][0]
    st = d["stats"]
    names = {"vxlan_encap": 'vsw_overlay_packets_total{direction="encap"}',
             "vxlan_decap": 'vsw_overlay_packets_total{direction="decap"}',
             "arp_requests_sent":
             'vsw_overlay_arp_total{event="requests_sent"}',
             "neigh_learned":
             'vsw_overlay_neigh_events_total{event="learned"}'}
    for k in ("vxlan_no_neigh", "vxlan_too_big", "vxlan_bad_csum",
              "vxlan_unknown_vni", "domain_no_output", "arp_drops"):
        names[k] = 'vsw_overlay_drops_total{reason="%s"}' % k
    vni = d["vni"]
    want = {names[k]: ctr[k] for k in names}
    for k in ("rx_local", "rx_vxlan", "tx_local", "tx_vxlan"):
        want['vsw_domain_packets_total{vni="%d",direction="%s"}'
             % (vni, k)] = st[k]
    want['vsw_domain_floods_total{vni="%d",what="frames"}' % vni] = \
        st["flooded"]
    want['vsw_domain_floods_total{vni="%d",what="copies"}' % vni] = \
        st["flood_copies"]
    want['vsw_domain_drops_total{vni="%d"}' % vni] = st["drops"]
    want['vsw_domain_macs{vni="%d",type="local"}' % vni] = st["local_macs"]
    want['vsw_domain_macs{vni="%d",type="remote"}' % vni] = \
        st["remote_macs"]
    want['vsw_overlay_neighbours{state="resolved"}'] = 1
    bad = {k: (m.get(k), x) for k, x in want.items() if m.get(k) != x}
    c.check(not bad and ctr["vxlan_encap"] > 0 and st["flood_copies"] >=
            st["flooded"] > 0 and st["remote_macs"] == 1,
            "%s: metrics match overlay-show and domain-show" % tag,
            json.dumps(bad))


class VhostUser:
    """Just enough of a vhost-user front-end to send NET_SET_MTU the way
    QEMU does with host_mtu= (REPLY_ACK negotiated, NEED_REPLY set)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(5)
        self.s.connect(path)

    def send(self, req, flags, payload=b""):
        self.s.sendall(struct.pack("<III", req, 1 | flags, len(payload)) +
                       payload)

    def reply_u64(self, req):
        hdr = self.s.recv(12, socket.MSG_WAITALL)
        r, _, size = struct.unpack("<III", hdr)
        body = self.s.recv(size, socket.MSG_WAITALL)
        assert r == req and size == 8, (r, size)
        return struct.unpack("<Q", body)[0]

    def features(self):
        self.send(1, 0)  # GET_FEATURES
        return self.reply_u64(1)

    def set_mtu(self, mtu):
        """True when vswd took it (ack 0)."""
        if not getattr(self, "acked", False):
            # SET_PROTOCOL_FEATURES: REPLY_ACK (3), NET_MTU (4)
            self.send(16, 0, struct.pack("<Q", (1 << 3) | (1 << 4)))
            self.acked = True
        self.send(20, 8, struct.pack("<Q", mtu))  # NET_SET_MTU
        return self.reply_u64(20) == 0

    def close(self):
        self.s.close()


def port_mtu(v, port):
    d = v.ctl("domain-show %d --json" % VNI)["domains"][0]
    return next((p for p in d["port_mtu"] if p["port"] == port), None)


def check_guest_mtu(c, v, path):
    """A vhost-user port of the domain: its guest MTU limit is the underlay
    MTU (1500) - 50, to the byte; one joining with a larger MTU is
    counted."""
    g = VhostUser(path)
    c.check(g.features() & (1 << 3), "vhost-user offers VIRTIO_NET_F_MTU")
    c.check(g.set_mtu(1500), "outside a domain: MTU 1500 taken")
    v.ctl("domain-port-add %d mt" % VNI)
    m = port_mtu(v, "mt")
    c.check(m == {"port": "mt", "mtu": 1500, "limit": 1450, "refused": 0,
                  "over_limit": 1},
            "joining the domain at MTU 1500: over_limit counted, limit "
            "1450", json.dumps(m))
    g.close()
    # one front-end at a time: reconnect once vswd saw this one go
    end = time.monotonic() + 5
    while time.monotonic() < end:
        link = v.port("mt")["link"]
        if not link.startswith("up") and "guest connected" not in link:
            break
        time.sleep(0.05)
    g = VhostUser(path)
    over, at = g.set_mtu(1451), g.set_mtu(1450)
    m = port_mtu(v, "mt")
    c.check(not over and at and m["mtu"] == 1450 and m["refused"] == 1,
            "in the domain: NET_SET_MTU 1451 refused (nacked), 1450 taken",
            json.dumps(m))
    g.close()
    v.ctl("domain-port-del %d mt" % VNI)


def resolved(v, ip):
    for n in v.ctl("overlay-show --json")["neighbours"]:
        if n["ip"] == ip and n["mac"] is not None:
            return True
    return False


def start(c, net, tmp, build, vs):
    """One vswd per host namespace (appended to vs), until each VTEP has
    resolved the other by ARP."""
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


def check_traffic(c, net, vs):
    """Ping up to the inner MTU and a TCP stream cross; one byte past the
    limit the guest may send, vswd must not."""
    sent, got = net.ping(10, 56)
    c.check(got == sent, "ping 98 B frames: %d of %d" % (got, sent))
    sent, got = net.ping(10, 1422)  # 1464 B inner frame = 1500 - 36
    c.check(got == sent, "ping 1464 B inner frames (the limit): %d of %d"
            % (got, sent))
    s, r = net.tcp(10 * 1000 * 1000)
    c.check(s and s == r, "TCP 10 MB md5 (sent %s, received %s)" % (s, r))
    before = vs[0].ctl("overlay-show --json")["counters"]["vxlan_too_big"]
    net.ns(net.guest[0], "ip", "link", "set", net.gg[0], "mtu", "1500")
    sent, got = net.ping(3, 1423)
    after = vs[0].ctl("overlay-show --json")["counters"]["vxlan_too_big"]
    c.check(got == 0 and after - before == sent,
            "1465 B inner frames dropped as vxlan_too_big: %d replies, "
            "%d counted of %d" % (got, after - before, sent))


def check_refusals(c, v):
    """An error reply each, nothing changed."""
    for bad in ("domain-add 0", "domain-add 16777216", "domain-add 5001",
                "mac-add 5001 01:00:5e:00:00:01 192.168.77.2",
                "mac-add 5001 52:54:00:00:00 192.168.77.2",
                "vtep-add 5001 %s" % VTEP[0], "domain-port-add 5001 nope",
                "domain-port-add 5001 ul",
                "overlay-set underlay=vm local-ip=1.2.3.4",
                "overlay-set underlay=ul local-ip=1.2.3.4 mtu=abc",
                "mac-del 5001 52:54:00:00:00:99"):
        st, body = v.request(bad)
        c.check(st == 1, "refused: %s (%s)" % (bad, str(body).strip()))


def check_config(c, net, vs):
    """The running configuration gives the overlay back, in replay
    order."""
    for i in range(2):
        cmds = vs[i].ctl("config-show --json")["commands"]
        want = config(net, i)[3:]
        got = [x for x in cmds if x.split()[0] in (
            "overlay-set", "domain-add", "domain-port-add", "vtep-add",
            "mac-add")]
        c.check(got == want, "vswd %d: config-show has the overlay lines"
                % i, json.dumps(cmds))


def check_domains(c, net, vs, ctr):
    """Each vswd's identity, its domain (port, VTEP, local and remote MAC)
    and no decap errors in its counters ctr[i]."""
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


def check_underlay(c, net, vs, ctr):
    """Whatever A encapsulated B decapsulated, but for what the underlay
    lost on the way, counted: A's tx drops and packet-socket send errors
    (oerrors), the veth pair's own drops (kernel counters), B's
    packet-socket ring overflows (imissed); and that little."""
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


def run(c, net, tmp, build, vs):
    start(c, net, tmp, build, vs)
    check_traffic(c, net, vs)
    check_refusals(c, vs[0])
    check_config(c, net, vs)
    ctr = [v.ctl("overlay-show --json")["counters"] for v in vs]
    check_domains(c, net, vs, ctr)
    check_underlay(c, net, vs, ctr)
    for i in range(2):
        check_metrics(c, vs[i], "vswd %d" % i)
    path = vs[0].ctl("port-add mt vhost-user --json")["path"]
    check_guest_mtu(c, vs[0], path)
    for v in vs:
        vswd_end(c, v)


def main():
    opened = netns.opening("vsw-overlay-")
    if opened is None:
        return netns.SKIP
    args, tmp = opened
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
