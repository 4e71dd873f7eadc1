#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The running configuration survives restarts (vswd --state FILE).

Cases (--case):
  restart-term   changes at run time (port-add/del, flow-add/del, emc-set,
  restart-kill   copy-impl-set, datapath-impl-set, lookup-impl-set), then
                 SIGTERM or SIGKILL,
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

from vswtest.checks import Checks, vswd_end
from vswtest.ctl import CtlError
from vswtest.vswd import Vswd


def state_vswd(tmp, build, tag, env=None):
    """vswd with the test's --config and --state; env (the crash hook)
    is set for it alone."""
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        v = Vswd(build, os.path.join(tmp, "run"), tmp, tag,
                 config=os.path.join(tmp, "vswd.conf"),
                 args=["--state", os.path.join(tmp, "vswd.state")])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    v.state = os.path.join(tmp, "vswd.state")
    v.ready()
    return v


CONFIG = """# start-up configuration of the test
port-add vm1 vhost-user
port-add vm2 vhost-user
flow-add priority=0,actions=normal
"""

# A validator build must keep the classifier autovalidator on (vswd_end).
LOOKUP = ("autovalidator" if os.environ.get("VSW_VALIDATOR") == "1"
          else "generic")
# Run-time changes: every command the state file keeps.
CHANGES = [
    "port-add vm3 vhost-user queues=2 max-ring-size=4096",
    "port-add 'vm.4' vhost-user-client 'path=/nonexistent/a b.sock'",
    "port-add gone vhost-user",
    "flow-add in_port=vm1,udp,tp_dst=53,actions=output:vm3",
    "flow-add priority=10,ip,nw_dst=10.0.0.0/8,actions=output:vm2,output:vm3",
    "flow-add priority=5,arp,actions=flood",
    "flow-del priority=5,arp",
    "port-del gone",
    "emc-set 20",
    "copy-impl-set scalar",
    "datapath-impl-set sse2",
    "lookup-impl-set " + LOOKUP,
    "metrics-endpoint 127.0.0.1:0",
    "metrics-endpoint",  # shows: not a change
]


def rules(v):
    """flow-dump's rules without their counters."""
    return sorted(r["rule"] for r in v.ctl("flow-dump --json")["rules"])


def view(v):
    return {"config": v.ctl("config-show"), "rules": rules(v),
            "ports": sorted(v.ports()),
            "ring caps": sorted((n, p.get("max_ring_size"))
                                for n, p in v.ports().items())}


def same(c, before, after, when):
    for k in before:
        if not c.check(after[k] == before[k], "%s the same %s" % (k, when)):
            print("before:\n%s\nafter:\n%s" % (before[k], after[k]))


def case_restart(c, build, tmp, sig):
    v = state_vswd(tmp, build, "first")
    for cmd in CHANGES:
        v.ctl(cmd)
    before = view(v)
    shown = v.ctl("config-show --json")
    c.check(shown["state_file"] == v.state,
            "config-show --json names the state file")
    c.check(len(shown["commands"]) == 5 + 4 + 3,
            "config-show has 5 settings, 4 ports, 3 rules",
            shown["commands"])
    c.check(open(v.state).read() == before["config"],
            "the state file is what config-show prints")
    if sig == signal.SIGTERM:
        vswd_end(c, v, "SIGTERM")
    else:
        v.stop(sig)
    v = state_vswd(tmp, build, "second")
    c.check(re.search(r"starting from state file", v.p.buf) is not None,
            "the second run starts from the state file")
    same(c, before, view(v), "after %s and a restart" %
         signal.Signals(sig).name)
    c.check(v.ctl("datapath-impl-show --json")["active"] == "sse2",
            "the restored data path is the one set before the restart")
    # the restored state keeps changing and being kept
    v.ctl("port-del vm3")
    c.check("vm3" not in open(v.state).read(),
            "port-del after the restart reaches the state file")
    vswd_end(c, v)


def case_crash(c, build, tmp, where):
    # save 1: start-up; 2: port-add vm3; 3: flow-add (dies there)
    v = state_vswd(tmp, build, "crash",
                   {"VSWD_TEST_CRASH_SAVE": where + ":3"})
    v.ctl("port-add vm3 vhost-user")
    before = view(v)
    old = open(v.state).read()
    c.check(old == before["config"], "state file = config-show before the "
            "crash")
    try:
        st, body = v.request("flow-add in_port=vm3,actions=output:vm1")
        c.fail("flow-add answered (%d %s) instead of crashing" % (st, body))
    except (CtlError, OSError):
        pass
    rc = v.p.p.wait(20)
    c.check(rc == 99, "vswd died in the save (exit %s)" % rc)
    v.stop()
    c.check(open(v.state).read() == old, "state file untouched by the "
            "crash")
    tmpf = v.state + ".tmp"
    left = open(tmpf).read() if os.path.exists(tmpf) else ""
    if where == "mid-write":
        c.check(0 < len(left) < len(old) + 40 and "in_port=vm3" not in left,
                "a half-written temp file was left", repr(left))
    else:
        c.check("in_port=vm3" in left,
                "the complete new state was in the temp file", repr(left))
    v = state_vswd(tmp, build, "after")
    same(c, before, view(v), "after the crash and a restart")
    v.ctl("flow-add in_port=vm3,actions=output:vm1")
    c.check("in_port=vm3" in open(v.state).read(),
            "the next save after the crash works (temp file overwritten)")
    vswd_end(c, v)


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
    c = Checks()
    try:
        if a.case.startswith("restart-"):
            case_restart(c, a.build, tmp, signal.SIGTERM
                         if a.case == "restart-term" else signal.SIGKILL)
        else:
            case_crash(c, a.build, tmp, "before-rename"
                       if a.case == "crash-rename" else "mid-write")
    except Exception as e:  # a broken step is a failure, logs kept
        c.fail("%s: %s" % (type(e).__name__, e))
    return c.finish(tmp, a.keep)


if __name__ == "__main__":
    sys.exit(main())
