# SPDX-License-Identifier: BSD-3-Clause
"""gobgpd and vsw-evpn-agent for the overlay tests: each "host" has its
own network namespace, where its gobgpd listens (BGP on the namespace's
management address, its API on the namespace's 127.0.0.1:50051) and its
agent runs; the agent reaches vswd by the control socket's path."""
import json
import os
import shutil
import signal
import subprocess
import time

from vswtest.proc import Proc

ASN = 65000


def gobgpd_config(router_id, local_addr, neighbours, hold=9):
    """gobgpd TOML: iBGP AS 65000, l2vpn-evpn to every neighbour; short
    timers (connect-retry 1 s) so sessions come up fast in a test."""
    lines = ["[global.config]",
             "  as = %d" % ASN,
             '  router-id = "%s"' % router_id,
             '  local-address-list = ["%s"]' % local_addr]
    for n in neighbours:
        lines += ["[[neighbors]]",
                  "  [neighbors.config]",
                  '    neighbor-address = "%s"' % n,
                  "    peer-as = %d" % ASN,
                  "  [neighbors.timers.config]",
                  "    connect-retry = 1",
                  "    hold-time = %d" % hold,
                  "    keepalive-interval = %d" % max(1, hold // 3),
                  "  [[neighbors.afi-safis]]",
                  "    [neighbors.afi-safis.config]",
                  '      afi-safi-name = "l2vpn-evpn"']
    return "\n".join(lines) + "\n"


MISSING = "gobgpd/gobgp not installed (apt-get install gobgpd)"


def found():
    return shutil.which("gobgpd") and shutil.which("gobgp")


class Gobgpd:
    """gobgpd in namespace ns; cli() runs the gobgp CLI there."""

    def __init__(self, ns, tag, log_dir, router_id, local_addr,
                 neighbours, hold=9):
        self.ns = ns
        self.tag = tag
        self.log_dir = log_dir
        self.conf = os.path.join(log_dir, "gobgpd-%s.toml" % tag)
        with open(self.conf, "w") as f:
            f.write(gobgpd_config(router_id, local_addr, neighbours, hold))
        self.p = None

    def start(self):
        self.p = Proc("gobgpd-" + self.tag, [
            "ip", "netns", "exec", self.ns, "gobgpd", "-f", self.conf,
            "-p", "--pprof-disable", "--api-hosts", "127.0.0.1:50051"],
            self.log_dir)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            r = self.cli_run("global")
            if r.returncode == 0:
                return
            if not self.p.alive():
                break
            time.sleep(0.1)
        raise RuntimeError("gobgpd-%s: API not up; tail:\n%s" %
                           (self.tag, self.p.tail()))

    def cli_run(self, *args):
        return subprocess.run(["ip", "netns", "exec", self.ns, "gobgp"] +
                              list(args), capture_output=True, text=True,
                              timeout=20)

    def cli(self, *args):
        r = self.cli_run(*args)
        if r.returncode != 0:
            raise RuntimeError("gobgp %s: %s" % (" ".join(args),
                                                 r.stderr.strip()))
        return r.stdout

    def established(self):
        out = json.loads(self.cli("neighbor", "-j") or "[]")
        return [n for n in out if n.get("state", {}).get("session_state")
                in (6, "established", "ESTABLISHED")]

    def wait_established(self, n, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len(self.established()) >= n:
                return
            time.sleep(0.2)
        raise RuntimeError("gobgpd-%s: %d session(s) not established: %s" %
                           (self.tag, n, self.cli("neighbor")))

    def evpn_rib(self):
        out = self.cli("global", "rib", "-a", "evpn", "-j").strip()
        if not out or out == "null":
            return []
        return [p for v in json.loads(out).values() for p in v]

    def stop(self, sig=signal.SIGTERM):
        if self.p is not None:
            rc = self.p.stop(sig)
            self.p = None
            return rc
        return None


class Agent:
    """vsw-evpn-agent in namespace ns against vswd's control socket."""

    def __init__(self, prog, ns, tag, log_dir, ctl, local_ip, vnis=None,
                 extra=()):
        self.status_path = os.path.join(log_dir, "agent-%s.json" % tag)
        self.argv = ["ip", "netns", "exec", ns, "python3", prog,
                     "--ctl", ctl, "--local-ip", local_ip,
                     "--status", self.status_path] + list(extra)
        if vnis:
            self.argv += ["--vni", ",".join(map(str, vnis))]
        self.tag = tag
        self.log_dir = log_dir
        self.p = None
        self.runs = 0

    def start(self):
        self.runs += 1
        if os.path.exists(self.status_path):
            os.unlink(self.status_path)
        self.p = Proc("agent-%s-%d" % (self.tag, self.runs), self.argv,
                      self.log_dir)
        self.p.wait_for(r"^vsw-evpn-agent: local ip", 0, 20)

    def status(self):
        try:
            with open(self.status_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def alive(self):
        return self.p is not None and self.p.alive()

    def stop(self, sig=signal.SIGTERM):
        if self.p is None:
            return None
        rc = self.p.stop(sig, timeout=20)
        self.p = None
        return rc
