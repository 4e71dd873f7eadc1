#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The running configuration survives restarts (vswd --state FILE).

Cases (--case):
  restart-term   changes at run time (port-add/del, flow-add/del, emc-set,
  restart-kill   copy-impl-set, lookup-impl-set), then SIGTERM or SIGKILL,
                 restart with the same --config and --state: config-show,
                 flow-dump's rules and the port list are what they were,
                 and the state file wins over --config.
  crash-rename   vswd _exits between writing the new state and renaming it
  crash-write    (VSWD_TEST_CRASH_SAVE=before-rename:N) or in the middle of
                 the write (mid-write:N): the state file is still the
                 previous one, byte for byte, and a restart runs it.

usage: vswd_persist.py --build DIR --case CASE [--keep]
"""
import argparse
import os
import re
import signal
import sys
import tempfile

from vswtest import CtlError, Proc, Vswd, check, finish, rm_runtime_dir


class StateVswd(Vswd):
    """Vswd with --config/--state (and an environment for the crash
    hook); the rest (ready, ctl, stop) as in vswtest."""

    def __init__(self, build, tmp, tag, env=None):
        self.vswd = os.path.join(build, "switch", "vswd", "vswd")
        self.run_dir = os.path.join(tmp, "run")
        self.ctl_path = os.path.join(self.run_dir, "vswd.ctl")
        self.state = os.path.join(tmp, "vswd.state")
        self.prefix = "vswd%d-%s" % (os.getpid(), tag)
        argv = [self.vswd, "--run-dir", self.run_dir,
                "--config", os.path.join(tmp, "vswd.conf"),
                "--state", self.state, "--", "--no-shconf",
                "--no-telemetry", "--file-prefix=" + self.prefix,
                "--log-level=*:notice"]
        saved = dict(os.environ)
        os.environ.update(env or {})
        try:
            self.p = Proc("vswd-" + tag, argv, tmp)
        finally:
            os.environ.clear()
            os.environ.update(saved)


CONFIG = """# start-up configuration of the test
port-add vm1 vhost-user
port-add vm2 vhost-user
flow-add priority=0,actions=normal
"""

# Run-time changes: every command the state file keeps.
CHANGES = [
    "port-add vm3 vhost-user queues=2",
    "port-add 'vm.4' vhost-user-client 'path=/nonexistent/a b.sock'",
    "port-add gone vhost-user",
    "flow-add in_port=vm1,udp,tp_dst=53,actions=output:vm3",
    "flow-add priority=10,ip,nw_dst=10.0.0.0/8,actions=output:vm2,output:vm3",
    "flow-add priority=5,arp,actions=flood",
    "flow-del priority=5,arp",
    "port-del gone",
    "emc-set 20",
    "copy-impl-set scalar",
    "lookup-impl-set generic",
]


def rules(v):
    """flow-dump's rules without their counters."""
    return sorted(r["rule"] for r in v.ctl("flow-dump --json")["rules"])


def view(v):
    return {"config": v.ctl("config-show"), "rules": rules(v),
            "ports": sorted(v.ports())}


def same(before, after, when, failures):
    for k in before:
        check(after[k] == before[k], "%s the same %s" % (k, when), failures)
        if after[k] != before[k]:
            print("before:\n%s\nafter:\n%s" % (before[k], after[k]))


def start(build, tmp, tag, env=None):
    v = StateVswd(build, tmp, tag, env)
    v.ready()
    return v


def case_restart(build, tmp, sig, failures):
    v = start(build, tmp, "first")
    for c in CHANGES:
        v.ctl(c)
    before = view(v)
    shown = v.ctl("config-show --json")
    check(shown["state_file"] == v.state, "config-show --json names the "
          "state file", failures)
    check(len(shown["commands"]) == 3 + 4 + 3, "config-show has 3 "
          "settings, 4 ports, 3 rules: %s" % shown["commands"], failures)
    check(open(v.state).read() == before["config"], "the state file is "
          "what config-show prints", failures)
    v.stop(sig)
    v = start(build, tmp, "second")
    check(re.search(r"starting from state file", v.p.buf) is not None,
          "the second run starts from the state file", failures)
    same(before, view(v), "after %s and a restart" %
         signal.Signals(sig).name, failures)
    # and the restored state keeps changing and being kept
    v.ctl("port-del vm3")
    check("vm3" not in open(v.state).read(), "port-del after the restart "
          "reaches the state file", failures)
    v.stop(signal.SIGTERM)


def case_crash(build, tmp, where, failures):
    # save 1: start-up; 2: port-add vm3; 3: flow-add (dies there)
    v = start(build, tmp, "crash", {"VSWD_TEST_CRASH_SAVE": where + ":3"})
    v.ctl("port-add vm3 vhost-user")
    before = view(v)
    old = open(v.state).read()
    check(old == before["config"], "state file = config-show before the "
          "crash", failures)
    try:
        st, body = v.request("flow-add in_port=vm3,actions=output:vm1")
        check(False, "flow-add answered (%d %s) instead of crashing" %
              (st, body), failures)
    except (CtlError, OSError):
        pass
    rc = v.p.p.wait(20)
    check(rc == 99, "vswd died in the save (exit %s)" % rc, failures)
    rm_runtime_dir(v.prefix)
    check(open(v.state).read() == old, "state file untouched by the "
          "crash", failures)
    tmpf = v.state + ".tmp"
    left = open(tmpf).read() if os.path.exists(tmpf) else ""
    if where == "mid-write":
        check(0 < len(left) < len(old) + 40 and "in_port=vm3" not in left,
              "a half-written temp file was left: %r" % left, failures)
    else:
        check("in_port=vm3" in left, "the complete new state was in the "
              "temp file: %r" % left, failures)
    v = start(build, tmp, "after")
    same(before, view(v), "after the crash and a restart", failures)
    v.ctl("flow-add in_port=vm3,actions=output:vm1")
    check("in_port=vm3" in open(v.state).read(), "the next save after the "
          "crash works (temp file overwritten)", failures)
    v.stop(signal.SIGTERM)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", required=True, choices=[
        "restart-term", "restart-kill", "crash-rename", "crash-write"])
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="vsw-persist-")
    with open(os.path.join(tmp, "vswd.conf"), "w") as f:
        f.write(CONFIG)
    failures = []
    try:
        if a.case == "restart-term":
            case_restart(a.build, tmp, signal.SIGTERM, failures)
        elif a.case == "restart-kill":
            case_restart(a.build, tmp, signal.SIGKILL, failures)
        elif a.case == "crash-rename":
            case_crash(a.build, tmp, "before-rename", failures)
        else:
            case_crash(a.build, tmp, "mid-write", failures)
    except Exception as e:  # a broken step is a failure, logs kept
        failures.append("%s: %s" % (type(e).__name__, e))
        print("FAIL:", failures[-1])
    return finish(tmp, failures, a.keep)


if __name__ == "__main__":
    sys.exit(main())
