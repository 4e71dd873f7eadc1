# SPDX-License-Identifier: BSD-3-Clause
"""vsw-oneway.py's backends: vswd, dpdk-testpmd (net_vhost + net_null) and
OVS-DPDK serving one topology (tx, rx or pvp; see vsw-oneway.py), each
with snap() -> {t, rx, busy, total (cycles or 0), out, drops} and the
checks that its counters add up."""
import itertools
import os
import sys
import time

from vswtest import ovs as ovsmod
from vswtest.proc import worker_tid
from vswtest.testpmd import VhostBackend
from vswtest.vswd import PMD_SWITCH_DROPS, VIRTQ_DEQ_DROPS, Vswd

SRC_MAX = 1518  # above: frames larger than a 2 KiB mbuf (see the backends)
GUEST_MBUF = 9000 + 128 + 256  # guest TX frames in one segment
SEQ = itertools.count(1)

# ports of each topology: (vhost ports, source?, sink?)
PORTS = {"tx": (("vm1",), False, True), "rx": (("vm1",), True, False),
         "pvp": (("vm1", "vm2"), True, True)}
# rules as (in port, out port) pairs
PATHS = {"tx": (("vm1", "n1"),), "rx": (("n0", "vm1"),),
         "pvp": (("n0", "vm1"), ("vm2", "n1"))}
OFPORT = {"vm1": 1, "vm2": 2, "n0": 3, "n1": 4}
EGRESS = {"tx": "n1", "rx": "vm1", "pvp": "n1"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def null_devargs(i, size, src):
    return ("net_null%d,size=%d" % (i, size) if src else
            "net_null%d,no-rx=1" % i)


class VswdBe:
    name = "vswd"
    guest_server = False

    def __init__(self, args, tmp, topo, size):
        self.topo = topo
        tag = "v%d" % next(SEQ)
        run = os.path.join(tmp, "run-" + tag)
        os.makedirs(run)
        vms, src, sink = PORTS[topo]
        lines = ["port-add %s vhost-user" % n for n in vms]
        if src:
            lines.append("port-add n0 dpdk devargs=" +
                         null_devargs(0, size, True))
        if sink:
            lines.append("port-add n1 dpdk devargs=" +
                         null_devargs(1, size, False))
        lines += ["flow-add priority=100,in_port=%s,actions=output:%s" % p
                  for p in PATHS[topo]]
        cfg = os.path.join(tmp, tag + ".conf")
        with open(cfg, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.v = Vswd(args.build, run, tmp, tag, config=cfg)
        self.args = args
        self.p = self.v.p
        self.v.ready()
        if args.tx_retries is not None:
            self.v.ctl("tx-retries-set %d" % args.tx_retries)
        self.socks = [os.path.join(run, n + ".sock") for n in vms]
        self.vms = vms
        self.udp = False

    def attach(self):
        self.v.wait_up(self.vms, 2)

    def pmd_tid(self):
        return worker_tid(self.p.pid)

    def points(self, flows):
        if self.topo != "tx":
            return [("in_port", "on")]
        return [("in_port", "on"), ("in_port,udp", "on"),
                ("in_port,udp", "off")]

    def set_point(self, rules, emc):
        udp = rules == "in_port,udp"
        if udp and not self.udp:
            for p in PATHS[self.topo]:
                self.v.ctl("flow-add priority=200,in_port=%s,udp,"
                           "actions=output:%s" % p)
        elif self.udp and not udp:
            for p in PATHS[self.topo]:
                self.v.ctl("flow-del priority=200,in_port=%s,udp" % p[0])
        self.udp = udp
        self.v.ctl("emc-set " + emc)

    def snap(self):
        pmd = self.v.pmd_stats()
        t = time.monotonic()
        ps = self.v.ports()
        drops = sum(pmd.get(k, 0) for k in PMD_SWITCH_DROPS)
        for p in ps.values():
            drops += p.get("tx_drops", 0)
            drops += sum(p.get("virtq", {}).get(k, 0)
                         for k in VIRTQ_DEQ_DROPS)
        total = pmd["busy_cycles"] + pmd["idle_cycles"] + \
            pmd.get("sleep_cycles", 0)
        return {"t": t, "rx": pmd["rx_packets"], "busy": pmd["busy_cycles"],
                "total": total, "out": ps[EGRESS[self.topo]]["tx"],
                "drops": drops,
                "iters": pmd.get("busy_iterations", 0)}

    def check(self, g):
        """Sources stopped, every count adds up: [(ok, what)]."""
        g.cmd("stop")
        if PORTS[self.topo][1]:
            self.v.ctl("port-del n0")
        if self.args.no_drain:  # what the guest has not received yet
            st = g.port_stats()
            undrained = self.v.ports()[self.vms[0]]["tx"] - sum(
                p.get("RX-packets", 0) for p in st.values())
            log("  %s: vswd sent - guest received, undrained: %d "
                "(its RX buffers: %s)" % (self.topo, undrained,
                                          self.args.guest_rxd or 512))
        g.drain()  # the guest counts what was still in its rings
        end = time.monotonic() + 10
        while time.monotonic() < end:
            a = self.v.snapshot()
            time.sleep(0.3)
            b = self.v.snapshot()
            if a == b:
                break
        pmd, ports = b["pmd"], b["ports"]
        st = g.port_stats()
        g_rx = sum(p.get("RX-packets", 0) for p in st.values())
        g_tx = sum(p.get("TX-packets", 0) for p in st.values())
        drops = sum(v for k, v in pmd.items() if k.startswith("drop_"))
        vh_tx = sum(ports[n]["tx"] for n in self.vms)
        vh_rx = sum(ports[n]["rx"] +
                    sum(ports[n].get(k, 0) for k in VIRTQ_DEQ_DROPS)
                    for n in self.vms)
        eg = ports[EGRESS[self.topo]]
        return [
            (pmd["rx_packets"] > 0, "%s: packets moved (%d)" % (
                self.topo, pmd["rx_packets"])),
            (pmd["rx_packets"] + pmd["multi_output_clones"] ==
             pmd["tx_packets"] + drops,
             "%s: PMD rx + clones = tx + drops (%d + %d = %d + %d)" % (
                 self.topo, pmd["rx_packets"], pmd["multi_output_clones"],
                 pmd["tx_packets"], drops)),
            # nothing stays in the guest's RX ring: it drained (above)
            (g_rx == vh_tx, "%s: guest received what vswd sent (%d = %d; "
             "guest RX-errors %d, RX-nombuf %d, RX-missed %d)" % (
                 self.topo, g_rx, vh_tx,
                 sum(p.get("RX-errors", 0) for p in st.values()),
                 sum(p.get("RX-nombuf", 0) for p in st.values()),
                 sum(p.get("RX-missed", 0) for p in st.values()))),
            (g_tx == vh_rx, "%s: vswd received (or counted dropped) what "
             "the guest sent (%d = %d)" % (self.topo, vh_rx, g_tx)),
            (eg["tx"] > 0, "%s: egress %s sent %d" % (
                self.topo, EGRESS[self.topo], eg["tx"])),
        ]

    def stop(self):
        r = self.v.shutdown()
        ok = r["status"] == 0 and r["rc"] == 0 and r["in_use"] == 0
        return ok, "exit %s, %s" % (r["rc"], r["pool"])


class TestpmdBe:
    """dpdk-testpmd, io forwarding: ports listed so that io's pairs (0-1,
    2-3) are the topology's paths."""
    name = "testpmd"
    guest_server = False

    def __init__(self, args, tmp, topo, size):
        self.topo = topo
        tag = "t%d" % next(SEQ)
        vms = PORTS[topo][0]
        self.socks = [os.path.join(tmp, "%s-%s.sock" % (tag, n))
                      for n in vms]
        vh = ["net_vhost%d,iface=%s,queues=1" % (i, s)
              for i, s in enumerate(self.socks)]
        src = null_devargs(0, size, True)
        sink = null_devargs(1, size, False)
        vdevs = {"tx": lambda: [vh[0], sink], "rx": lambda: [src, vh[0]],
                 "pvp": lambda: [src, vh[0], vh[1], sink]}[topo]()
        self.egress = {"tx": 1, "rx": 1, "pvp": 3}[topo]
        # net_null writes size bytes whatever the mbuf holds: big mbufs
        extra = ["--mbuf-size=%d" % GUEST_MBUF] if size > SRC_MAX else []
        self.be = VhostBackend(args.testpmd, self.socks, tmp, tag,
                               vdevs=vdevs, extra=extra)
        self.p = self.be.p
        self.mhz = 0
        # RX bursts per port in "show fwd stats": the average burst size
        self.p.cmd("stop")
        self.p.cmd("set record-burst-stats on")
        self.p.cmd("start")

    def attach(self):
        time.sleep(1.0)

    def pmd_tid(self):
        return worker_tid(self.p.pid)

    def points(self, flows):
        return [("io", "-")]

    def set_point(self, rules, emc):
        pass

    def snap(self):
        s = self.be.snap()
        self.mhz = s["mhz"] or self.mhz
        ports = s["ports"]
        out = ports.get(self.egress, {}).get("TX-packets", 0)
        drops = sum(p.get("TX-dropped", 0) for p in ports.values())
        return {"t": s["t"], "rx": s["pkts"], "busy": s["busy"], "total": 0,
                "out": out, "drops": drops, "iters": s.get("bursts", 0)}

    def stop(self):
        self.be.stop()
        return True, ""


class OvsBe:
    name = "ovs"
    guest_server = True  # dpdkvhostuserclient: OVS connects

    def __init__(self, args, tmp, topo, size):
        self.topo = topo
        tag = "o%d" % next(SEQ)
        self.vms, src, sink = PORTS[topo]
        self.socks = [os.path.join(tmp, "%s-%s.sock" % (tag, n))
                      for n in self.vms]
        self.mtu = 9000 if size > 1518 else None
        self.o = ovsmod.Ovs(os.path.join(tmp, "run-" + tag), tmp, tag)
        self.p = self.o.p
        if src:
            self.o.add_dpdk("n0", null_devargs(0, size, True), OFPORT["n0"],
                            self.mtu)
        if sink:
            self.o.add_dpdk("n1", null_devargs(1, size, False),
                            OFPORT["n1"], self.mtu)
        self.rules = None

    def attach(self):
        for n, s in zip(self.vms, self.socks):
            self.o.add_vhost(n, s, OFPORT[n], self.mtu)
        self.o.wait_up(self.vms)
        self.set_point("in_port", "on")

    def pmd_tid(self):
        t = self.o.pmd_tids()
        return t[0] if t else None

    def points(self, flows):
        if self.topo != "tx":
            return [("in_port", "on")]
        pts = [("in_port", "on"), ("in_port,udp", "on"),
               ("in_port,udp", "off")]
        if flows > 1:
            pts.append(("in_port,udp", "off+smc"))
        return pts

    def set_point(self, rules, emc):
        if rules != self.rules:
            m = ",udp" if rules == "in_port,udp" else ""
            self.o.flows(["priority=100,in_port=%d%s,actions=output:%d" % (
                OFPORT[a], m, OFPORT[b]) for a, b in PATHS[self.topo]])
            self.rules = rules
        self.o.set_config({
            "emc-insert-inv-prob": "100" if emc == "on" else "0",
            "smc-enable": "true" if emc.endswith("smc") else "false"})
        # EMC entries already in place would keep hitting: flush them
        self.o.purge()

    def snap(self):
        pmd = self.o.pmd_stats()
        t = time.monotonic()
        ps = self.o.port_stats()
        eg = ps.get(OFPORT[EGRESS[self.topo]], {})
        drops = sum(p["tx_dropped"] + p["rx_dropped"] for p in ps.values())
        return {"t": t, "rx": pmd.get("rx_packets", 0),
                "busy": pmd.get("busy_cycles", 0),
                "total": pmd.get("busy_cycles", 0) +
                pmd.get("idle_cycles", 0),
                "out": eg.get("tx_packets", 0), "drops": drops,
                "emc": pmd.get("emc_hits", 0),
                "upcalls": pmd.get("upcalls", 0), "iters": 0}

    def check(self, g):
        """The source's packets dropped by rule, the guest drained: what
        OVS's vhost ports sent the guest got, what it sent they got."""
        g.cmd("stop")
        if PORTS[self.topo][1]:
            self.o.flows(["priority=300,in_port=%d,actions=drop" %
                          OFPORT["n0"]] + [
                "priority=100,in_port=%d,actions=output:%d" % (
                    OFPORT[a], OFPORT[b]) for a, b in PATHS[self.topo]])
        g.drain()
        time.sleep(0.5)
        ps = self.o.port_stats()
        st = g.port_stats()
        g_rx = sum(p.get("RX-packets", 0) for p in st.values())
        g_tx = sum(p.get("TX-packets", 0) for p in st.values())
        vm = [ps[OFPORT[n]] for n in self.vms]
        vh_tx = sum(p["tx_packets"] for p in vm)
        vh_rx = sum(p["rx_packets"] + p["rx_dropped"] for p in vm)
        eg = ps[OFPORT[EGRESS[self.topo]]]
        res = [(g_rx == vh_tx, "%s: guest received what OVS sent "
                "(%d = %d)" % (self.topo, g_rx, vh_tx)),
               (g_tx == vh_rx, "%s: OVS received (or dropped) what the "
                "guest sent (%d = %d)" % (self.topo, vh_rx, g_tx)),
               (eg["tx_packets"] > 0, "%s: egress sent %d" % (
                   self.topo, eg["tx_packets"]))]
        if self.topo == "tx":
            time.sleep(1.2)  # coverage counters
            dd = sum(self.o.datapath_drops().values())
            n1 = ps[OFPORT["n1"]]
            res.append((n1["tx_packets"] + n1["tx_dropped"] + dd ==
                        vm[0]["rx_packets"],
                        "tx: sink sent + dropped + datapath drops = vm1 "
                        "received (%d + %d + %d = %d)" % (
                            n1["tx_packets"], n1["tx_dropped"], dd,
                            vm[0]["rx_packets"])))
        return res

    def stop(self):
        rc = self.o.stop()
        return rc == 0, "exit %s" % rc


BACKENDS = {"vswd": VswdBe, "testpmd": TestpmdBe, "ovs": OvsBe}
