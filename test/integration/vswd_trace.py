#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""vswctl trace, and rules that name a deleted port, through the real
vswctl against a real vswd (no guests: trace needs none). The datapath
agreement itself is test/unit/test_trace.c; this checks the command:
text and --json answers (rule, subtable, normal's flood set, verdicts),
errors, and what port-del does to the rules that name the port (kept and
marked in flow-dump, outputs to it drop as port_gone, a new port does not
take its number, the same name gets it back, a restart does not replay
them: the state file keeps them as comments).

usage: vswd_trace.py --build DIR [--keep]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import traceback

from vswtest.checks import Checks, vswd_end
from vswtest.vswd import Vswd

SRC, DST = "52:54:00:00:00:01", "52:54:00:00:00:02"
DNS = "in_port=vm1,dl_src=%s,dl_dst=%s,udp,nw_dst=10.0.0.2,tp_dst=53" % (
    SRC, DST)
OTHER = DNS.replace("tp_dst=53", "tp_dst=54")


def vswctl(v, *args):
    p = subprocess.run([v.vswctl, "-s", v.ctl_path] + list(args),
                       capture_output=True, text=True, timeout=20)
    return p.returncode, p.stdout + p.stderr


def trace(v, flow):
    rc, out = vswctl(v, "trace", flow, "--json")
    if rc != 0:
        raise RuntimeError("trace %s: %s" % (flow, out))
    return json.loads(out)


def case(c, build, tmp):
    state = os.path.join(tmp, "vswd.state")
    v = Vswd(build, os.path.join(tmp, "run"), tmp, "trace",
             default_config=False, args=["--state", state])
    v.ready()
    for cmd in ("port-add vm1 vhost-user", "port-add vm2 vhost-user",
                "port-add vm3 vhost-user",
                "flow-add priority=100,in_port=vm1,udp,tp_dst=53,"
                "actions=output:vm2",
                "flow-add priority=10,actions=normal"):
        v.ctl(cmd)

    rc, out = vswctl(v, "trace", DNS)
    c.check(rc == 0 and "Rule: id" in out and "priority=100" in out and
            "Datapath actions: output:vm2" in out,
            "vswctl trace: the rule and its output", out)
    t = trace(v, DNS)
    c.check(t["schema"] == 1 and t["verdict"] == "output" and
            t["outputs"] == ["vm2"] and t["rule"]["priority"] == 100 and
            t["rule"]["subtable"] is not None and
            "tp_dst=53" in t["flow"] and "in_port=vm1" in t["flow"],
            "--json: schema 1, rule, subtable, outputs", t)
    t = trace(v, OTHER)
    c.check(t["rule"]["priority"] == 10 and t["normal"]["flood"] and
            t["normal"]["learned_port"] is None and
            sorted(t["outputs"]) == ["vm2", "vm3"],
            "normal with an unknown dl_dst floods to all but vm1", t)
    for bad, want in (("udp,tp_dst=53", "in_port"),
                      ("in_port=vm1,nosuch=1", "nosuch"),
                      ("in_port=vm9", "vm9")):
        rc, out = vswctl(v, "trace", bad)
        c.check(rc != 0 and want in out, "trace %s: an error naming %s" %
                (bad, want), out)

    v.ctl("port-del vm2")
    t = trace(v, DNS)
    c.check(t["verdict"] == "drop_port_gone" and t["outputs"] == [],
            "after port-del vm2: output:vm2 drops as port_gone", t)
    rules = v.ctl("flow-dump --json")["rules"]
    r100 = [r for r in rules if r["priority"] == 100]
    c.check(len(rules) == 2 and r100 and r100[0]["deleted_ports"] ==
            [{"port": 1, "was": "vm2"}],
            "flow-dump --json keeps the rule and names the deleted port",
            rules)
    rc, out = vswctl(v, "flow-dump")
    c.check("actions=output:1 [deleted port 1 (was vm2)]" in out,
            "flow-dump text marks it", out)
    text = open(state).read()
    c.check("# names deleted port 1, not restored: flow-add" in text and
            "\nflow-add 'priority=100" not in text and
            "\nflow-add priority=100" not in text,
            "the state file keeps it as a comment", text)

    v.ctl("port-add vm4 vhost-user")
    c.check(v.port("vm4")["number"] == 3,
            "a new port does not take number 1, which a rule names")
    c.check(trace(v, DNS)["verdict"] == "drop_port_gone",
            "... so the rule does not send to it")
    v.ctl("port-add vm2 vhost-user")
    c.check(v.port("vm2")["number"] == 1, "vm2 added again gets number 1")
    t = trace(v, DNS)
    c.check(t["verdict"] == "output" and t["outputs"] == ["vm2"],
            "and the rule sends to it again", t)
    rules = v.ctl("flow-dump --json")["rules"]
    c.check(all(r["deleted_ports"] == [] for r in rules),
            "no deleted port left in flow-dump", rules)

    # a restart does not replay a rule naming a deleted port
    v.ctl("port-del vm2")
    vswd_end(c, v)
    v = Vswd(build, os.path.join(tmp, "run"), tmp, "trace2",
             default_config=False, args=["--state", state])
    v.ready()
    rules = v.ctl("flow-dump --json")["rules"]
    c.check([r["priority"] for r in rules] == [10],
            "after a restart only the rule without a deleted port", rules)
    vswd_end(c, v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="vsw-trace-")
    c = Checks()
    try:
        case(c, a.build, tmp)
    except Exception as e:  # a broken step fails, logs kept
        traceback.print_exc()
        c.fail("%s: %s" % (type(e).__name__, e))
    return c.finish(tmp, a.keep)


if __name__ == "__main__":
    sys.exit(main())
