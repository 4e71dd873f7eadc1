# SPDX-License-Identifier: BSD-3-Clause
"""OVS-DPDK (Debian's openvswitch-switch-dpdk) in a private run directory:
its own ovsdb database, ovsdb-server and ovs-vswitchd-dpdk as our children
(never the system's services), a netdev bridge, vhost-user client ports
(dpdkvhostuserclient) and dpdk ports (e.g. net_null devargs), OpenFlow
rules, and its PMD counters (dpif-netdev/pmd-stats-show).

  o = Ovs(run_dir, log_dir, "tag")      # ovsdb-server + ovs-vswitchd-dpdk
  o.add_vhost("vm1", sock, ofport=1)     # sock: the guest is the server
  o.add_dpdk("n0", "net_null0,size=64", ofport=3)
  o.flows(["in_port=1,actions=output:3"])
  o.pmd_stats()   # {rx_packets, busy_cycles, idle_cycles, ...} summed
  o.stop()

DPDK runs with --no-huge --legacy-mem (dpdk-extra); the PMD thread on the
CPUs of pmd_mask, the main thread where the caller's affinity puts it.
"""
import os
import re
import shutil
import signal
import subprocess
import time

from vswtest.proc import Proc, rm_runtime_dir

VSWITCHD_DPDK = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
PMD_KEYS = {
    "packets received": "rx_packets",
    "packet recirculations": "recirculations",
    "simple match hits": "simple_hits",
    "emc hits": "emc_hits",
    "smc hits": "smc_hits",
    "megaflow hits": "megaflow_hits",
    "miss with success upcall": "upcalls",
    "miss with failed upcall": "failed_upcalls",
    "idle cycles": "idle_cycles",
    "processing cycles": "busy_cycles",
}


def find_vswitchd():
    """The DPDK build of ovs-vswitchd, or None."""
    for p in (VSWITCHD_DPDK, shutil.which("ovs-vswitchd-dpdk")):
        if p and os.access(p, os.X_OK):
            return p
    return None


def available():
    """(ok, why not): everything Ovs() runs is installed."""
    if not find_vswitchd():
        return False, "ovs-vswitchd-dpdk not installed " \
            "(Debian: openvswitch-switch-dpdk)"
    for tool in ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-ofctl",
                 "ovs-appctl"):
        if not shutil.which(tool):
            return False, tool + " not found (openvswitch-common/switch)"
    if not os.path.exists(SCHEMA):
        return False, SCHEMA + " missing"
    return True, ""


def parse_pmd_stats(text):
    """pmd-stats-show -> [{core: N, key: int}] for each PMD thread (the
    main thread's block left out)."""
    res = []
    for blk in re.finditer(r"^pmd thread numa_id \d+ core_id (\d+):\n"
                           r"((?:[ \t]+.*\n?)*)", text, re.M):
        d = {"core": int(blk.group(1))}
        for k, v in re.findall(r"^\s+([a-z. ]+): (\d+)", blk.group(2),
                               re.M):
            if k in PMD_KEYS:
                d[PMD_KEYS[k]] = int(v)
        res.append(d)
    return res


class Ovs:
    """ovsdb-server + ovs-vswitchd-dpdk in run_dir with bridge br0
    (datapath netdev); logs in log_dir. pmd_mask: pmd-cpu-mask; mem: MB
    of --no-huge memory; extra: more EAL arguments."""

    def __init__(self, run_dir, log_dir, tag, pmd_mask="0x2", mem=2048,
                 extra=(), other_config=None, timeout=60):
        ok, why = available()
        if not ok:
            raise RuntimeError(why)
        self.run_dir = run_dir
        self.tag = tag
        os.makedirs(run_dir, exist_ok=True)
        self.env = dict(os.environ, OVS_RUNDIR=run_dir, OVS_DBDIR=run_dir,
                        OVS_LOGDIR=run_dir, OVS_SYSCONFDIR=run_dir)
        self.db = os.path.join(run_dir, "conf.db")
        self.db_sock = os.path.join(run_dir, "db.sock")
        self.vsd_ctl = os.path.join(run_dir, "ovs-vswitchd.ctl")
        self.prefix = "vswo%d-%s" % (os.getpid(), tag)
        self.vsd = None
        subprocess.run(["ovsdb-tool", "create", self.db, SCHEMA],
                       check=True, env=self.env, capture_output=True)
        self.dbs = Proc("ovsdb-" + tag, [
            "ovsdb-server", self.db, "--remote=punix:" + self.db_sock,
            "--unixctl=" + os.path.join(run_dir, "ovsdb-server.ctl"),
            "--pidfile=" + os.path.join(run_dir, "ovsdb-server.pid"),
            "--log-file=" + os.path.join(run_dir, "ovsdb-server.log")],
            log_dir, env=self.env)
        self._wait(lambda: os.path.exists(self.db_sock), "ovsdb socket",
                   self.dbs, timeout)
        eal = ["--no-huge", "--legacy-mem", "-m", str(mem), "--no-pci",
               "--no-telemetry", "--file-prefix=" + self.prefix,
               "--log-level=*:notice"] + list(extra)
        cfg = {"dpdk-init": "true", "dpdk-extra": " ".join(eal),
               "pmd-cpu-mask": pmd_mask}
        cfg.update(other_config or {})
        self.vsctl("--no-wait", "init")
        self.set_config(cfg, wait=False)
        self.vsd = Proc("ovs-vswitchd-" + tag, [
            find_vswitchd(), "unix:" + self.db_sock,
            "--unixctl=" + self.vsd_ctl,
            "--pidfile=" + os.path.join(run_dir, "ovs-vswitchd.pid"),
            "--log-file=" + os.path.join(run_dir, "ovs-vswitchd.log")],
            log_dir, env=self.env)
        self.p = self.vsd  # what the benches sample (pid, threads)
        self._wait(lambda: os.path.exists(self.vsd_ctl), "vswitchd control",
                   self.vsd, timeout)
        self.vsctl("--timeout=%d" % timeout, "wait-until", "Open_vSwitch",
                   ".", "dpdk_initialized=true")
        self.vsctl("add-br", "br0", "--", "set", "bridge", "br0",
                   "datapath_type=netdev")

    def _wait(self, cond, what, proc, timeout):
        end = time.monotonic() + timeout
        while not cond():
            if not proc.alive() or time.monotonic() > end:
                raise RuntimeError("OVS %s: %s never appeared; tail:\n%s" % (
                    self.tag, what, proc.tail()))
            time.sleep(0.05)

    def _run(self, argv, timeout=60):
        r = subprocess.run(argv, env=self.env, capture_output=True,
                           text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(argv),
                                           (r.stderr or r.stdout).strip()))
        return r.stdout

    def vsctl(self, *args):
        return self._run(["ovs-vsctl", "--db=unix:" + self.db_sock] +
                         list(args))

    def ofctl(self, *args):
        return self._run(["ovs-ofctl"] + list(args))

    def appctl(self, *args):
        return self._run(["ovs-appctl", "-t", self.vsd_ctl] + list(args))

    def set_config(self, cfg, wait=True):
        """other_config of the Open_vSwitch row (e.g. emc-insert-inv-prob,
        smc-enable)."""
        self.vsctl(*([] if wait else ["--no-wait"]) + [
            "set", "Open_vSwitch", "."] + [
            'other_config:%s="%s"' % kv for kv in cfg.items()])

    def _add(self, name, ofport, typ, options, mtu):
        argv = ["add-port", "br0", name, "--", "set", "Interface", name,
                "type=" + typ, "ofport_request=%d" % ofport]
        argv += ['options:%s="%s"' % kv for kv in options.items()]
        if mtu:
            argv.append("mtu_request=%d" % mtu)
        self.vsctl(*argv)
        err = self.vsctl("get", "Interface", name, "error").strip()
        if err not in ("[]", '""'):
            raise RuntimeError("OVS port %s: %s" % (name, err))

    def add_vhost(self, name, sock, ofport, mtu=None):
        """A dpdkvhostuserclient port: OVS connects to sock (the guest's
        virtio_user listens: server=1)."""
        self._add(name, ofport, "dpdkvhostuserclient",
                  {"vhost-server-path": sock}, mtu)

    def add_dpdk(self, name, devargs, ofport, mtu=None):
        self._add(name, ofport, "dpdk", {"dpdk-devargs": devargs}, mtu)

    def flows(self, rules):
        """Replace br0's OpenFlow table by rules (ovs-ofctl syntax); new
        ones first, so no packet meets an empty table."""
        path = os.path.join(self.run_dir, "flows.txt")
        with open(path, "w") as f:
            f.write("".join(r + "\n" for r in rules))
        self.ofctl("replace-flows", "br0", path)

    def ofport_stats(self):
        """{interface: {rx_packets, tx_packets, rx_dropped, tx_dropped,
        ...}} from the database's statistics column."""
        out = self.vsctl("--format=csv", "--data=bare", "--no-headings",
                         "--columns=name,statistics", "list", "Interface")
        res = {}
        for line in out.splitlines():
            name, _, stats = line.partition(",")
            res[name] = {k: int(v) for k, v in
                         re.findall(r"([\w-]+)=(\d+)", stats)}
        return res

    def port_stats(self):
        """{ofport: {rx_packets, rx_dropped, tx_packets, tx_dropped}} as
        the datapath counts them now (ovs-ofctl dump-ports)."""
        out = self.ofctl("--no-names", "dump-ports", "br0")
        res = {}
        for m in re.finditer(r"port\s+(\w+): rx pkts=(\d+), bytes=\d+, "
                             r"drop=(\d+).*?tx pkts=(\d+), bytes=\d+, "
                             r"drop=(\d+)", out, re.S):
            port = int(m.group(1)) if m.group(1).isdigit() else m.group(1)
            res[port] = {"rx_packets": int(m.group(2)),
                         "rx_dropped": int(m.group(3)),
                         "tx_packets": int(m.group(4)),
                         "tx_dropped": int(m.group(5))}
        return res

    def purge(self):
        """Delete every datapath flow through the revalidators (their
        EMC entries die with them); dpctl/del-flows would leave the
        ukeys behind and every later upcall of those flows is lost."""
        self.appctl("revalidator/purge")

    def datapath_drops(self):
        """{reason: packets} of the datapath's drop counters (coverage,
        updated about once a second)."""
        return {m.group(1): int(m.group(2)) for m in re.finditer(
            r"^datapath_drop_(\w+)\s.*total: (\d+)",
            self.appctl("coverage/show"), re.M)}

    def pmd_tids(self):
        """Thread ids of ovs-vswitchd's PMD threads ("pmd-c01/id:8")."""
        pid = self.vsd.pid
        out = []
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                    if f.read().startswith("pmd"):
                        out.append(int(tid))
            except OSError:
                pass
        return sorted(out)

    def link_up(self, name):
        return self.vsctl("get", "Interface", name,
                          "link_state").strip() == "up"

    def wait_up(self, names, timeout=30.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if all(self.link_up(n) for n in names):
                return
            if not self.vsd.alive():
                break
            time.sleep(0.2)
        raise RuntimeError("OVS ports %s not up; tail:\n%s" % (
            names, self.vsd.tail()))

    def pmd_stats(self):
        """Counters of every PMD thread, summed (cycles are TSC)."""
        tot = {}
        for pmd in parse_pmd_stats(self.appctl("dpif-netdev/pmd-stats-show")):
            for k, v in pmd.items():
                if k != "core":
                    tot[k] = tot.get(k, 0) + v
        return tot

    def stop(self, timeout=20.0):
        """exit (ports closed, DPDK cleaned up), then ovsdb-server;
        returns ovs-vswitchd's exit status (None if killed)."""
        rc = None
        if self.vsd is not None and self.vsd.alive():
            try:
                self.appctl("exit", "--cleanup")
                rc = self.vsd.p.wait(timeout)
            except Exception:  # killed below
                pass
        if self.vsd is not None:
            self.vsd.stop(signal.SIGKILL)
        self.dbs.stop()
        rm_runtime_dir(self.prefix)
        return rc
