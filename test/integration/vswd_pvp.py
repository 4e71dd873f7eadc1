#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration test: vswd with physical-side (ethdev) ports, one case per
run:

  veth     PVP with the kernel as the outside world: namespace ns1 -- veth
           -- vswd port nic1 (net_af_packet) -- vm1 -- a dpdk-testpmd guest
           in io mode -- vm2 -- nic2 (net_af_packet) -- veth -- ns2. Real
           ping (64 B and full 1514 B frames) and a 20 MB TCP stream whose
           md5 must match, through a guest and back out; then the ethdev
           counters of port-show against the kernel's and the switch's.
  null     net_null as line-rate source and sink: counters add up (switch
           rx = ethdev ipackets, 64 B each; sink tx = opackets; the PMD
           identity), ethdev stats and xstats in text and JSON, link up;
           a probed device with no ethdev (crypto_null0) is detached.
  pmd2     two PMD lcores (functional on two CPUs): per-queue cycles in
           pmd-rxq-show, pmd-rxq-rebalance by cycles and back.
  sleep    pmd-sleep-set: PMD CPU time idle over 5 s with sleep off and at
           500 us; ping RTT (first packet after idle) through ns1 -- nic1
           -- vswd -- nic2 -- ns2 off and on; port-add/del (RCU grace
           periods) while the PMD sleeps.
  retries  net_null source -> vswd -> a testpmd guest in rxonly at its
           limit, tx-retries 0 vs 8: ring-full drops and retries counted.

Namespaces, veths and addresses (10.99.0.0/24) are the test's own, named
after its pid, and removed in finally blocks. Needs root (netns).

usage: vswd_pvp.py --build BUILD_DIR --case CASE [--testpmd PATH]
"""
import argparse
import os
import shutil
import signal
import sys
import tempfile
import time

from vswtest.checks import Checks, vswd_end
from vswtest import netns
from vswtest.netns import sh
from vswtest.testpmd import Guest
from vswtest.vswd import Vswd

CASES = ("veth", "null", "pmd2", "sleep", "retries")
SKIP = 77


class Net:
    """ns1/ns2 with veth pairs; the root-side ends are for af_packet."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.ns = ["vswpvp%d-%d" % (tag, i) for i in (1, 2)]
        self.host = ["vh%da%d" % (tag, i) for i in (1, 2)]
        self.guest = ["vh%db%d" % (tag, i) for i in (1, 2)]
        self.addr = ["10.99.0.1", "10.99.0.2"]
        self.rig = netns.Rig()

    def up(self):
        r = self.rig
        for i in range(2):
            ns, h, g = self.ns[i], self.host[i], self.guest[i]
            r.ns_add(ns, lo=False)
            r.veth(h, g, b_ns=ns)
            sh("ip", "-n", ns, "addr", "add", self.addr[i] + "/24", "dev",
               g)
            sh("ip", "-n", ns, "link", "set", g, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "link", "set", h, "up")
            # A NIC hands over whole frames with checksums: no GSO
            # super-frames or partial checksums into the packet socket.
            r.offload_off(g, ns)
            r.offload_off(h)

    def down(self):
        self.rig.down()

    def run(self, i, *args, timeout=60):
        return netns.tool(self.ns[i], *args, timeout=timeout)

    def ping(self, count, size, interval=0.2):
        out = netns.ping(self.ns[0], self.addr[1], count, size, interval)
        return out[0], out[1], out[2:]

    def tcp(self, nbytes):
        """A TCP stream ns1 -> ns2; (sent, received) as "BYTES MD5"."""
        return netns.tcp(self.ns[0], self.ns[1], self.addr[1], nbytes)


class Case:
    def __init__(self, args, tmp, checks):
        self.args = args
        self.tmp = tmp
        self.run = os.path.join(tmp, "run")
        self.checks = checks
        self.vswd = None
        self.guest = None

    def start_vswd(self, lines, eal=()):
        os.makedirs(self.run, exist_ok=True)
        path = os.path.join(self.tmp, "vswd.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        # net_af_packet iface= opens a host interface: allowed explicitly
        self.vswd = Vswd(self.args.build, self.run, self.tmp, self.args.case,
                         config=path, eal=eal,
                         args=["--allow-devargs-files"])
        self.vswd.ready()
        return self.vswd

    def check(self, cond, what):
        self.checks.check(cond, "%s: %s" % (self.args.case, what))

    def finish(self):
        """Validators silent, exit 0, every mbuf back, sockets gone."""
        v, self.vswd = self.vswd, None
        vswd_end(self.checks, v)

    def cleanup(self):
        if self.guest is not None:
            self.guest.stop(signal.SIGKILL)
        if self.vswd is not None:
            self.vswd.stop(signal.SIGKILL)


def pmd_thread_cpu(pid):
    """{tid: utime+stime ticks} of vswd's PMD threads (DPDK worker lcores)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                comm = f.read().strip()
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                st = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if "worker" in comm:
            out[int(tid)] = int(st[11]) + int(st[12])
    return out


def cpu_share(pid, seconds):
    """CPU share of the busiest PMD thread over seconds (1.0 = a core)."""
    a = pmd_thread_cpu(pid)
    time.sleep(seconds)
    b = pmd_thread_cpu(pid)
    hz = os.sysconf("SC_CLK_TCK")
    return max((b[t] - a.get(t, 0)) / hz / seconds for t in b)


def eth_ports(lines, net):
    for i in range(2):
        lines.append("port-add nic%d dpdk devargs=net_af_packet%d,iface=%s" %
                     (i + 1, i, net.host[i]))
    return lines


def traffic_checks(c, net, tag):
    sent, got, rtt = net.ping(5, 56)
    c.check(got == sent, "%s: ping 64 B frames: %d of %d replies" %
            (tag, got, sent))
    # 1472 B of data: 1514 B frames, the largest a 1500 MTU veth passes
    # unfragmented (af_packet's fanout defragments IP fragments, so
    # fragmented pings arrive as one frame over the MTU: see user guide).
    sent, got, rtt = net.ping(5, 1472)
    c.check(got == sent, "%s: ping 1514 B frames: %d of %d replies" %
            (tag, got, sent))
    s, r = net.tcp(20 * 1000 * 1000)
    c.check(s and s == r, "%s: TCP 20 MB md5 (sent %s, received %s)" %
            (tag, s, r))


def case_veth(c):
    net = Net()
    try:
        net.up()
        socks = [os.path.join(c.run, n + ".sock") for n in ("vm1", "vm2")]
        lines = eth_ports([], net) + [
            "port-add vm1 vhost-user", "port-add vm2 vhost-user",
            "flow-add in_port=nic1,actions=output:vm1",
            "flow-add in_port=vm1,actions=output:nic1",
            "flow-add in_port=vm2,actions=output:nic2",
            "flow-add in_port=nic2,actions=output:vm2"]
        c.start_vswd(lines)
        # io forwarding: guest port 0 (vm1) <-> port 1 (vm2), unchanged.
        c.guest = Guest(c.args.testpmd, socks, c.tmp, "veth")
        c.guest.ready()
        c.vswd.wait_up(("vm1", "vm2"), 2)
        c.guest.cmd("set fwd io")
        c.guest.cmd("start")
        traffic_checks(c, net, "ns1-nic1-vm1-guest-vm2-nic2-ns2")
        c.guest.cmd("stop")
        time.sleep(0.5)
        ps = c.vswd.ports()
        for n in ("nic1", "nic2"):
            p = ps[n]
            es = p["eth_stats"]
            c.check(p["link"] == "up", "%s link up (%s)" % (n, p["link"]))
            c.check(p["rx"] == es["ipackets"] and p["tx"] == es["opackets"],
                    "%s: switch rx/tx = ethdev ipackets/opackets "
                    "(%d/%d, %d/%d)" % (n, p["rx"], es["ipackets"], p["tx"],
                                        es["opackets"]))
            c.check(p["tx_drops"] == 0 and es["oerrors"] == 0,
                    "%s: no tx drops (%d, oerrors %d)" %
                    (n, p["tx_drops"], es["oerrors"]))
            c.check("rx_good_packets" in p["xstats"],
                    "%s: xstats in port-show --json" % n)
        # What the switch sent out of nic2 the kernel got on the veth.
        with open("/sys/class/net/%s/statistics/tx_packets" %
                  net.host[1]) as f:
            ktx = int(f.read())
        c.check(ktx >= ps["nic2"]["tx"],
                "nic2: the kernel transmitted what vswd sent (%d >= %d)" %
                (ktx, ps["nic2"]["tx"]))
        text = c.vswd.ctl("port-show nic1")
        c.check("ethdev: ipackets=" in text and "rx_good_packets=" in text,
                "port-show text has ethdev stats and xstats")
        c.guest.quit()
        c.guest = None
        c.finish()
    finally:
        c.cleanup()
        net.down()


def case_null(c):
    v = c.start_vswd([
        "port-add n0 dpdk devargs=net_null0,size=64",
        "port-add n1 dpdk devargs=net_null1,size=64",
        "flow-add in_port=n0,actions=output:n1",
        "flow-add in_port=n1,actions=drop"])
    time.sleep(2)
    ps = v.ports()
    for n in ("n0", "n1"):
        p, es = ps[n], ps[n]["eth_stats"]
        c.check(p["link"] == "up", "%s link up (%s)" % (n, p["link"]))
        # port-show reads the switch's count before the ethdev's.
        c.check(0 < p["rx"] <= es["ipackets"] <= p["rx"] + 4096,
                "%s: switch rx %d ~ ethdev ipackets %d" %
                (n, p["rx"], es["ipackets"]))
    c.check(ps["n1"]["tx"] > 0, "n1 sinks what n0 sends (%d)" %
            ps["n1"]["tx"])
    # net_null counts no bytes; the rules do: 64 B frames.
    for r in v.ctl("flow-dump --json")["rules"]:
        c.check(r["n_packets"] > 0 and r["n_bytes"] == 64 * r["n_packets"],
                "64 B frames (%d B in %d, %s)" %
                (r["n_bytes"], r["n_packets"], r["rule"]))
    text = v.ctl("port-show n0")
    c.check("ethdev: ipackets=" in text and "rx_q0_packets=" in text,
            "port-show text: ethdev stats and xstats")
    # Stop the sources; then everything is static and must add up.
    v.ctl("port-del n0")
    p1 = v.ports()["n1"]
    v.ctl("port-del n1")
    pmd = v.pmd_stats()
    drops = sum(pmd[k] for k in pmd if k.startswith("drop_"))
    c.check(pmd["rx_packets"] + pmd["multi_output_clones"] ==
            pmd["tx_packets"] + drops,
            "PMD: rx + clones = tx + drops (%d + %d = %d + %d)" %
            (pmd["rx_packets"], pmd["multi_output_clones"],
             pmd["tx_packets"], drops))
    c.check(p1["tx"] == p1["eth_stats"]["opackets"],
            "n1: switch tx %d = ethdev opackets %d" %
            (p1["tx"], p1["eth_stats"]["opackets"]))
    c.check(pmd["drop_action"] > 0 and pmd["drop_tx_undelivered"] == 0,
            "n1's own packets dropped by rule, none undelivered")
    # A device that probes but is no ethdev: refused and detached; a second
    # attempt probes afresh (not "already probed").
    for attempt in (1, 2):
        st, body = v.request("port-add bad dpdk devargs=crypto_null0")
        c.check(st != 0 and "device detached" in body,
                "crypto_null0 attempt %d: refused, detached (%s)" %
                (attempt, body.strip()))
    st, body = v.request("port-add n2 dpdk devargs=net_null2,size=128")
    c.check(st == 0, "a null port after the refused one (%s)" % body.strip())
    c.finish()


def case_pmd2(c):
    # lcore 0 (control) and PMD lcore 1 share CPU 0; PMD lcore 2 on CPU 1.
    v = c.start_vswd([
        "port-add a dpdk devargs=net_null0,size=64 queues=2",
        "port-add b dpdk devargs=net_null1,size=1500",
        "port-add c dpdk devargs=net_null2,size=64",
        "flow-add in_port=b,actions=output:c",
        "flow-add priority=0,actions=drop"],
        eal=("--lcores", "0@0,1@0,2@1"))
    rxq = v.ctl("pmd-rxq-show --json")["rxqs"]
    rr = {(r["port"], r["queue"]): r["pmd"] for r in rxq}
    c.check(sorted(set(rr.values())) == [0, 1],
            "round-robin uses both PMDs (%s)" % rr)
    time.sleep(2)
    rxq = v.ctl("pmd-rxq-show --json")["rxqs"]
    c.check(all(r["cycles"] > 0 for r in rxq),
            "every rx queue has measured cycles (%s)" %
            [(r["port"], r["queue"], r["cycles"]) for r in rxq])
    text = v.ctl("pmd-rxq-show")
    c.check("cycles" in text, "pmd-rxq-show text shows cycles")
    v.ctl("pmd-rxq-rebalance")
    rxq2 = v.ctl("pmd-rxq-show --json")["rxqs"]
    by = {(r["port"], r["queue"]): r["pmd"] for r in rxq2}
    c.check(set(by) == set(rr) and sorted(set(by.values())) == [0, 1],
            "after rebalance: every queue placed, both PMDs used (%s)" % by)
    c.check(all(r["cycles"] < max(x["cycles"] for x in rxq) for r in rxq2),
            "a rebalance starts a new interval")
    before = v.ctl("pmd-stats-show --json")["pmds"]
    time.sleep(1)
    after = v.ctl("pmd-stats-show --json")["pmds"]
    for i in (0, 1):
        c.check(after[i]["rx_packets"] > before[i]["rx_packets"],
                "PMD %d still receives after the rebalance" % i)
    st, body = v.request("pmd-rxq-rebalance bogus")
    c.check(st != 0, "pmd-rxq-rebalance refuses 'bogus'")
    v.ctl("pmd-rxq-rebalance roundrobin")
    back = {(r["port"], r["queue"]): r["pmd"]
            for r in v.ctl("pmd-rxq-show --json")["rxqs"]}
    c.check(back == rr, "roundrobin restores the first assignment")
    c.finish()


def case_sleep(c):
    net = Net()
    try:
        net.up()
        v = c.start_vswd(eth_ports([], net) + [
            "flow-add in_port=nic1,actions=output:nic2",
            "flow-add in_port=nic2,actions=output:nic1"])
        pid = v.p.p.pid
        res = {}
        for us in (0, 500):
            v.ctl("pmd-sleep-set %d" % us)
            time.sleep(0.5)
            res[us] = {"cpu": cpu_share(pid, 5.0)}
            # One ping a second: each finds the PMD idle (backed off).
            sent, got, rtt = net.ping(10, 56, 1.0)
            res[us]["rtt"] = sorted(rtt)
            c.check(got == sent, "sleep %d us: ping %d of %d" %
                    (us, got, sent))
        stats = v.ctl("pmd-stats-show --json")["pmds"][0]
        asleep = stats["sleep_cycles"] / max(1, stats["sleep_cycles"] +
                                             stats["idle_cycles"] +
                                             stats["busy_cycles"])
        perf = v.ctl("pmd-perf-show --json")["pmds"][0]
        c.check(perf["sleeps"] > 0 and perf["sleep_max_us"] == 500,
                "pmd-perf-show: sleeps %d, max %d us" %
                (perf["sleeps"], perf["sleep_max_us"]))
        c.check("idle sleeps:" in v.ctl("pmd-stats-show"),
                "pmd-stats-show shows sleeps")
        for us in (0, 500):
            r = res[us]["rtt"]
            print("sleep %d us: PMD CPU %.0f%%, ping RTT median %d us "
                  "(min %d, max %d)" % (us, 100 * res[us]["cpu"],
                                        r[len(r) // 2], r[0], r[-1]))
        print("cycles asleep since start (both phases): %.0f%%" %
              (100 * asleep))
        # On a shared 2-CPU box a polling PMD may get only part of its CPU.
        c.check(res[0]["cpu"] > 0.2,
                "sleep off: the PMD polls (%.0f%% of a CPU)" %
                (100 * res[0]["cpu"]))
        c.check(res[500]["cpu"] < res[0]["cpu"] / 2,
                "sleep 500 us: PMD CPU %.0f%% < half of %.0f%%" %
                (100 * res[500]["cpu"], 100 * res[0]["cpu"]))
        # Grace periods while the PMD sleeps at the maximum step: port-add
        # and port-del wait for them.
        v.ctl("pmd-sleep-set 10000")
        t0 = time.monotonic()
        for i in range(10):
            v.ctl("port-add s%d vhost-user" % i)
            v.ctl("port-del s%d" % i)
        dt = time.monotonic() - t0
        c.check(dt < 5.0, "20 publishes while asleep took %.2f s" % dt)
        st, _ = v.request("pmd-sleep-set 10001")
        c.check(st != 0, "pmd-sleep-set refuses more than 10000 us")
        v.ctl("pmd-sleep-set 0")
        c.finish()
    finally:
        c.cleanup()
        net.down()


def case_retries(c):
    sock = os.path.join(c.run, "vm1.sock")
    v = c.start_vswd([
        "port-add vm1 vhost-user",
        "port-add n0 dpdk devargs=net_null0,size=64",
        "flow-add in_port=n0,actions=output:vm1",
        "flow-add priority=0,actions=drop"])
    c.guest = Guest(c.args.testpmd, [sock], c.tmp, "retries",
                    queue_size=256)
    c.guest.ready()
    v.wait_up(("vm1",), 2)
    c.guest.cmd("set fwd rxonly")
    c.guest.cmd("start")
    rows = {}
    for n in (0, 8, 0, 8):  # interleaved
        v.ctl("tx-retries-set %d" % n)
        a = v.ports()["vm1"]
        ga = c.guest.port_stats()[0]["RX-packets"]
        time.sleep(3)
        b = v.ports()["vm1"]
        gb = c.guest.port_stats()[0]["RX-packets"]
        handed = (b["tx"] + b["tx_drops"]) - (a["tx"] + a["tx_drops"])
        full = (b["virtq"]["enq_drop_ring_full"] -
                a["virtq"]["enq_drop_ring_full"])
        r = rows.setdefault(n, [0, 0, 0, 0])
        r[0] += handed
        r[1] += full
        r[2] += b["tx_retries"] - a["tx_retries"]
        r[3] += gb - ga
        c.check(b["tx_retries_max"] == n, "port-show tx_retries_max %d" % n)
    for n, (handed, full, retries, grx) in sorted(rows.items()):
        print("tx-retries %d: offered %d, ring-full drops %d (%.1f%%), "
              "retries %d, guest received %d (%.2f Mpps)" %
              (n, handed, full, 100.0 * full / max(handed, 1), retries, grx,
               grx / 6e6))
    c.check(rows[0][2] == 0, "no retries with tx-retries 0")
    c.check(rows[8][2] > 0, "retries counted with tx-retries 8")
    c.guest.cmd("stop")
    c.guest.quit()
    c.guest = None
    st, body = v.request("tx-retries-set 65")
    c.check(st != 0, "tx-retries-set refuses 65")
    st, body = v.request("tx-retries-set 3 n0")
    c.check(st != 0, "tx-retries-set refuses an ethdev port")
    v.ctl("tx-retries-set 3 vm1")
    c.check(v.ports()["vm1"]["tx_retries_max"] == 3, "per-port setting")
    c.finish()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--testpmd", default=shutil.which("dpdk-testpmd"))
    ap.add_argument("--case", choices=CASES, required=True)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = ap.parse_args()
    if os.geteuid() != 0 and args.case in ("veth", "sleep"):
        print("SKIP: network namespaces need root")
        return SKIP
    if args.case in ("veth", "retries") and not args.testpmd:
        print("SKIP: no dpdk-testpmd")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="vswd-pvp-")
    checks = Checks()
    c = Case(args, tmp, checks)
    try:
        {"veth": case_veth, "null": case_null, "pmd2": case_pmd2,
         "sleep": case_sleep, "retries": case_retries}[args.case](c)
    except Exception as e:  # a failed step: report, keep the logs
        checks.fail("%s: %s" % (args.case, e))
    finally:
        c.cleanup()
    return checks.finish(tmp, args.keep)


if __name__ == "__main__":
    sys.exit(main())
