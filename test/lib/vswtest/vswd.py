# SPDX-License-Identifier: BSD-3-Clause
"""vswd in its own run directory with a unique EAL file prefix, its
control socket, and its counters as flat dicts."""
import os
import re
import signal
import subprocess
import time

from vswtest.ctl import Ctl
from vswtest.proc import Proc, fd_count, fd_list, rm_runtime_dir

VIRTQ_DEQ_DROPS = ("deq_drop_bad_desc", "deq_drop_too_large",
                   "deq_drop_no_mbuf", "deq_drop_short_hdr",
                   "deq_drop_hdr_csum_range", "deq_drop_hdr_csum_l4",
                   "deq_drop_hdr_gso_type", "deq_drop_hdr_gso_size",
                   "deq_drop_hdr_len", "deq_drop_hdr_gso_total")
VIRTQ_ENQ_DROPS = ("enq_drop_ring_full", "enq_drop_not_ready",
                   "enq_drop_too_large", "enq_drop_bad_desc",
                   "enq_drop_short_hdr", "enq_drop_budget",
                   "enq_drop_offload")
# PMD drops not already counted in a port's tx_drops (tx_undelivered,
# port_gone)
PMD_SWITCH_DROPS = ("drop_no_rule", "drop_action", "drop_no_output",
                    "drop_vlan_edit", "drop_offload")


def delta(now, before):
    """{key: {counter: now - before}} (non-integers kept as they are)."""
    return {p: {k: (v - before.get(p, {}).get(k, 0)
                    if isinstance(v, int) else v)
                for k, v in d.items()} for p, d in now.items()}


def snap_delta(now, before):
    """The difference of two Vswd.snapshot()s."""
    return {"ports": delta(now["ports"], before["ports"]),
            "pmd": {k: v - before["pmd"].get(k, 0)
                    for k, v in now["pmd"].items()}}


class Vswd(Ctl):
    """vswd in run_dir; its output goes to log_dir/vswd-TAG.log.
    config: a start-up file; default_config=False: no ports at all;
    args: more vswd options (e.g. --state FILE); wrap: a command line
    prefix (e.g. ["ip", "netns", "exec", NS]: vswd in a namespace)."""

    def __init__(self, build, run_dir, log_dir, tag, config=None,
                 default_config=True, eal=(), nice=0, args=(), wrap=()):
        self.vswd = os.path.join(build, "switch", "vswd", "vswd")
        self.vswctl = os.path.join(build, "switch", "vswctl", "vswctl")
        self.run_dir = run_dir
        self.ctl_path = os.path.join(run_dir, "vswd.ctl")
        super().__init__(self.ctl_path)
        argv = [self.vswd, "--run-dir", run_dir]
        if nice:
            argv = ["nice", "-n", str(nice)] + argv
        argv = list(wrap) + argv
        if config:
            argv += ["--config", config]
        elif not default_config:
            argv.append("--no-default-config")
        argv += list(args)
        # --no-shconf: no runtime files left in /var/run/dpdk (vswd adds
        # it only when no --file-prefix is given)
        self.prefix = "vswd%d-%s" % (os.getpid(), tag)
        argv += ["--", "--no-shconf", "--no-telemetry",
                 "--file-prefix=" + self.prefix,
                 "--log-level=*:notice"] + list(eal)
        self.p = Proc("vswd-" + tag, argv, log_dir)

    def ready(self, timeout=60):
        """The control socket answers (vswd logs "ready" once it is)."""
        self.p.wait_for(r"^vswd: ready", 0, timeout)

    def alive(self):
        return self.p.alive()

    def fds(self):
        return fd_count(self.p.pid)

    def fd_list(self):
        return fd_list(self.p.pid)

    def ports(self):
        return {p["name"]: p for p in self.ctl("port-show --json")["ports"]}

    def port(self, name):
        return self.ctl("port-show %s --json" % name)["ports"][0]

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

    def validators(self):
        """{copy|lookup: (validating, mismatches)}: the copy validator
        (a switch) and the classifier autovalidator (an implementation)."""
        c = self.ctl("copy-impl-show --json")
        lk = self.ctl("lookup-impl-show --json")
        return {"copy": (c["validator"], c["validator_mismatches"]),
                "lookup": (lk["active"] == "autovalidator",
                           lk["validator_mismatches"])}

    def wait_up(self, names, vrings, timeout=30.0):
        """Every named port has vrings live queues."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ps = self.ports()
            if all(n in ps and ps[n]["vrings_live"] >= vrings for n in names):
                return ps
            if not self.p.alive():
                break
            time.sleep(0.2)
        raise RuntimeError("vswd ports %s not up (%d vrings)" % (names,
                                                                 vrings))

    def wait_connected(self, name, what, timeout=20.0):
        """Port name has a vhost-user connection (a migration's
        destination QEMU is attached before the migration starts);
        RuntimeError naming what when not within timeout."""
        end = time.monotonic() + timeout
        while self.port(name)["link"].startswith("down: no vhost-user"):
            if time.monotonic() > end:
                raise RuntimeError("%s: destination never connected" % what)
            time.sleep(0.1)

    def shutdown(self, how="shutdown", timeout=30.0):
        """Graceful stop by the `shutdown` command or SIGTERM; returns
        {status (of the command), rc (None: still running after timeout),
        seconds, pool (vswd's "mbuf pool: N in use, ..." line or None),
        in_use (N or None)}."""
        t0 = time.monotonic()
        status = None
        if how == "shutdown":
            status, _ = self.request("shutdown")
        else:
            self.p.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.p.wait(timeout)
        except subprocess.TimeoutExpired:
            rc = None
        dt = time.monotonic() - t0
        self.stop(signal.SIGKILL)
        m = re.search(r"mbuf pool: (\d+) in use.*", self.p.buf)
        return {"status": status, "rc": rc, "seconds": dt,
                "pool": m.group(0) if m else None,
                "in_use": int(m.group(1)) if m else None}

    def stop(self, sig=signal.SIGTERM, timeout=20.0):
        rc = self.p.stop(sig, timeout)
        rm_runtime_dir(self.prefix)
        return rc
