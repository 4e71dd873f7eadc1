#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit test of vsw-evpn-agent's route handling against a reference model,
over random cases: random streams of gobgp monitor paths (type 2 and 3,
own and other hosts', advertisements and withdrawals, MAC mobility
sequence numbers, VNIs at and past the bounds, garbage) go through
Agent.take(); Agent.program() must then send exactly the vswd commands
that turn a random current vswd state into the reference's wanted state.
No gobgpd or vswd: the BGP side is tested against real gobgpd in
test/integration/overlay_evpn.py.

usage: test_evpn_agent.py AGENT_PATH [--cases N] [--seed S]
"""
import argparse
import importlib.machinery
import importlib.util
import random
import sys

LOCAL = "10.0.0.1"
SERVED = (100, 16777215)  # one ordinary VNI and the largest
VNIS = (0, 100, 999, 16777215, 16777216)
VTEPS = ("10.0.0.2", "10.0.0.3", LOCAL)
MACS = ["52:54:00:00:00:%02x" % i for i in range(6)]
RDS = ("10.0.0.2:100", "10.0.0.3:100", "10.0.0.3:7")


def load(path):
    loader = importlib.machinery.SourceFileLoader("vsw_evpn_agent", path)
    spec = importlib.util.spec_from_loader("vsw_evpn_agent", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


class FakeCtl:
    def __init__(self):
        self.sent = []

    def request(self, line):
        self.sent.append(line)
        return 0, ""


class Args:
    def __init__(self):
        self.local_ip = LOCAL
        self.asn = 65000
        self.vni = list(SERVED)


def rnd_path(rng):
    """A random gobgp JSON path, and what it means for the reference:
    (key, kind, vni, mac, vtep, seq, own, withdrawal) or None (garbage or a
    route type the agent does not use)."""
    t = rng.choice((2, 2, 2, 3, 3, 5, "x"))
    vni = rng.choice(VNIS)
    rd = rng.choice(RDS)
    admin, assigned = rd.split(":")
    vtep = rng.choice(VTEPS)
    own = rng.random() < 0.15
    wd = rng.random() < 0.3
    seq = rng.choice((None, 0, 1, 2))
    ecs = [{"type": 0, "subtype": 2, "value": "65000:%d" % vni},
           {"type": 3, "subtype": 12, "tunnel_type": 8}]
    if seq is not None:
        ecs.append({"type": 6, "subtype": 0, "sequence": seq,
                    "is_sticky": False})
    p = {"nlri": {"type": t, "value": {"rd": {"type": 1, "admin": admin,
                                               "assigned": int(assigned)},
                                        "etag": 0}},
         "attrs": [{"type": 1, "value": 2}, {"type": 16, "value": ecs},
                   {"type": 14, "nexthop": vtep, "afi": 25, "safi": 70}]}
    if not own:
        p["neighbor-ip"] = "192.168.0.9"
    if wd:
        p["withdrawal"] = True
    v = p["nlri"]["value"]
    if t == 2:
        mac = rng.choice(MACS)
        v.update(mac=mac.upper() if rng.random() < 0.2 else mac, ip="<nil>",
                 labels=[vni], esi="single-homed")
        key = (2, rd, mac, 0)
    elif t == 3:
        mac = None
        v["ip"] = vtep
        key = (3, rd, vtep, 0)
        if rng.random() < 0.2:  # no RT: no VNI, garbage
            p["attrs"][1]["value"] = ecs[1:]
            return p, None
    else:
        return p, None
    garbage = rng.random()
    if garbage < 0.05:
        del p["attrs"][2]  # no next hop
        if t == 2:
            return p, None
    elif garbage < 0.08:
        v["rd"] = "junk"
        return p, None
    own = own or vtep == LOCAL
    return p, (key, "mac" if t == 2 else "vtep", vni, mac, vtep,
               -1 if seq is None else seq, own, wd)


def reference(meanings, local):
    """{vni: (vteps, {mac: vtep})} the agent must program."""
    live = {}
    for i, m in enumerate(meanings):
        if m is None:
            continue
        key, kind, vni, mac, vtep, seq, own, wd = m
        if vni not in SERVED or own:
            continue
        if wd:
            live.pop(key, None)
        else:
            live[key] = (i, m)
    out = {v: (set(), {}) for v in SERVED}
    best = {}
    for i, m in live.values():
        key, kind, vni, mac, vtep, seq, own, wd = m
        if kind == "vtep":
            out[vni][0].add(vtep)
        else:
            b = best.get((vni, mac))
            if b is None or (seq, i) > b[0]:
                best[(vni, mac)] = ((seq, i), vtep)
    for (vni, mac), (_, vtep) in best.items():
        if mac not in local.get(vni, {}):
            out[vni][1][mac] = vtep
    return out


def one_case(mod, rng):
    ctl = FakeCtl()
    agent = mod.Agent(Args(), ctl, None, lambda k, m: None)
    agent.vnis = set(SERVED)
    local = {v: {m: 0.0 for m in MACS if rng.random() < 0.15}
             for v in SERVED}
    agent.local = local
    meanings = []
    clock = [1000.0]

    def mono():
        clock[0] += 0.001
        return clock[0]

    mod.time.monotonic = mono
    for _ in range(rng.randint(0, 40)):
        p, meaning = rnd_path(rng)
        agent.take(p)
        meanings.append(meaning)
    want = reference(meanings, local)
    # the current vswd state: random remote entries and VTEPs, and the
    # local MACs
    doms, have = {}, {}
    for v in SERVED:
        vteps = [x for x in VTEPS if rng.random() < 0.3]
        macs = [{"mac": m, "type": "local", "port": "p", "age_ms": 5}
                for m in local[v]]
        hm = {}
        for m in MACS:
            if rng.random() < 0.3:  # also shadowed by a local entry
                hm[m] = rng.choice(VTEPS)
                macs.append({"mac": m, "type": "remote", "vtep": hm[m]})
        doms[v] = {"vni": v, "vteps": vteps, "macs": macs}
        have[v] = (set(vteps), hm)
    agent.program(doms)
    expect = set()
    for v in SERVED:
        hv, hm = have[v]
        wv, wm = want[v]
        expect |= {"vtep-add %d %s" % (v, x) for x in wv - hv}
        expect |= {"vtep-del %d %s" % (v, x) for x in hv - wv}
        expect |= {"mac-add %d %s %s" % (v, m, x) for m, x in wm.items()
                   if hm.get(m) != x}
        expect |= {"mac-del %d %s" % (v, m) for m in hm if m not in wm}
    got = set(ctl.sent)
    ok = got == expect and len(got) == len(ctl.sent)
    bad = sum(1 for m in meanings if m is None)
    return ok, got, expect, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("agent")
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=17)
    a = ap.parse_args()
    mod = load(a.agent)
    rng = random.Random(a.seed)
    fails = 0
    for i in range(a.cases):
        ok, got, expect, _ = one_case(mod, rng)
        if not ok:
            fails += 1
            if fails <= 3:
                print("case %d: extra %s, missing %s" %
                      (i, sorted(got - expect), sorted(expect - got)))
    # The bounds of the VNI check and of the parser, one by one.
    args = Args()
    for vni, ok in ((0, False), (1, True), (16777215, True),
                    (16777216, False)):
        try:
            mod.vni_list(str(vni))
            took = True
        except Exception:
            took = False
        if took != ok:
            fails += 1
            print("vni_list(%d): accepted %s, expected %s" % (vni, took, ok))
    try:
        mod.vni_list("1,65537")
        fails += 1
        print("vni_list: VNIs sharing their low 16 bits accepted")
    except Exception:
        pass
    del args
    print("%d random cases, %d failed" % (a.cases, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
