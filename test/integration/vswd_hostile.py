#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hostile vhost-user front-ends against a real vswd, over the real socket.

vswd gets four vhost-user ports: a and b carry well-behaved traffic from
hostile_frontend's traffic mode (a -> b, plus a mirror to h so that h's
RX side sees packets), h is where every hostile scenario connects. The rule
is in_port=a,actions=output:b,output:h.

For every scenario of `hostile_frontend list` (name, counters, what):
  - the scenario runs (its own front-end checks must pass: a bad chain
    comes back used with length 0, a bad message closes the connection...);
  - vswd still answers `version`, its pid is unchanged;
  - its fd count is back at the baseline once h is disconnected;
  - every named counter of port h moved (port-show h --json; a name
    "pmd:C" is pmd-stats-show's C summed over the PMDs, "metric:M" the
    metrics command's samples of family M summed);
  - the a -> b traffic kept flowing during the scenario, and
    sent = received + counted drops (a's deq_drop_*, b's enq_drop_* and
    tx_drops);
  - a -> b's forwarding rate while the scenario ran (at least 0.5 s) was
    at least 90 % of its quiet rate, measured before the first scenario
    (issue 10: several attacks crash nothing but stop everyone else). The
    rate is frames received per frame the source offered (a paced 16 per
    millisecond; what a full ring refuses counts as offered), so that the
    harness's own share of the 2 CPUs (the scenario process competes with
    the traffic source) does not count against vswd; frames/s are printed
    too. A scenario below the bar runs once more and the better window
    counts (the machine is shared). A scenario whose counters carry
    "!rate-known" is a known miss of that bar (reported, not failed).
    A scenario whose counters carry "!port=hbig" runs on port hbig
    (max-ring-size=32768) instead of h.
At the end the validators found nothing, and vswd shuts down cleanly and
logs "mbuf pool: 0 in use".

usage: vswd_hostile.py BUILD_DIR [SCENARIO...]
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from vswtest.checks import Checks, vswd_end
from vswtest.vswd import Vswd

BAD_MSG_COUNTERS = ("msg_rejected", "fd_rejected", "disconnects",
                    "queue_errors", "call_failed", "call_blocked",
                    "mem_faults")
RATE_BAR = 0.90      # neighbours' rate under attack / quiet rate
RATE_WINDOW = 0.5    # s: shortest window a rate is taken over


def counters(port):
    c = dict(port.get("virtq", {}))
    for k in BAD_MSG_COUNTERS + ("rx", "tx", "tx_drops"):
        if k in port:
            c[k] = port[k]
    return c


class Traffic:
    def __init__(self, fe, src, dst):
        self.p = subprocess.Popen([fe, "traffic", src, dst],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError("traffic source not ready: %r" % line)

    def window(self):
        """(received, offered, seconds) now, without pausing the traffic."""
        self.p.stdin.write("window\n")
        self.p.stdin.flush()
        w = self.p.stdout.readline().split()
        return int(w[1]), int(w[3]), int(w[5]) / 1e6

    def rate(self, w0):
        """(received per offered, received per second) since w0."""
        r, o, t = self.window()
        return ((r - w0[0]) / max(o - w0[1], 1),
                (r - w0[0]) / max(t - w0[2], 1e-6))

    def mark(self, quit=False):
        self.p.stdin.write("quit\n" if quit else "mark\n")
        self.p.stdin.flush()
        words = self.p.stdout.readline().split()
        # sent S received R bad B inflight I
        return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def attack(d, traffic, fe, name, path, errs, port="h"):
    """Run one scenario on port h while a -> b forwards; wait until vswd
    noticed h is gone. (front-end output, a -> b received per offered,
    frames/s) over the run, at least RATE_WINDOW s."""
    w0 = traffic.window()
    try:
        r = subprocess.run([fe, "run", name, path], capture_output=True,
                           text=True, timeout=30)
        out = r.stdout.strip()
        if r.returncode != 0:
            errs.append("front-end: " + out.replace("\n", "; "))
    except subprocess.TimeoutExpired:
        errs.append("front-end hung (30 s)")
        out = ""
    # h gone: wait for vswd to notice the disconnect
    for _ in range(100):
        if not d.alive():
            break
        try:
            link = d.port(port)["link"]
        except (OSError, EOFError, RuntimeError):
            break
        if not link.startswith("up") and "guest connected" not in link:
            break
        time.sleep(0.03)
    left = RATE_WINDOW - (traffic.window()[2] - w0[2])
    if left > 0:
        time.sleep(left)
    return (out,) + traffic.rate(w0)


def scenario_counters(d, port, ctrs):
    """Port counters, plus the pmd:/metric: ones the scenario names."""
    c = counters(d.port(port))
    names = ctrs.split(",")
    if any(n.startswith("pmd:") for n in names):
        for k, v in d.pmd_stats().items():
            c["pmd:" + k] = v
    if any(n.startswith("metric:") for n in names):
        text = d.ctl("metrics --json")["metrics"]
        for n in names:
            if n.startswith("metric:"):
                c[n] = sum(float(line.split()[-1])
                           for line in text.splitlines()
                           if line.startswith(n[7:] + "{") or
                           line.startswith(n[7:] + " "))
    return c


def pmd_drops(d):
    out = {}
    for p in d.ctl("pmd-stats-show --json")["pmds"]:
        for k, v in p.items():
            if k.startswith("drop") or k.startswith("miss"):
                out[k] = out.get(k, 0) + v
    return out


def deq_drops(c):
    return sum(v for k, v in c.items() if k.startswith("deq_drop_"))


def enq_drops(c):
    return sum(v for k, v in c.items() if k.startswith("enq_drop_"))


def add_ports(d):
    """Ports a, b, h and hbig (a ring cap of 32768); their socket paths."""
    paths = {}
    for name, opts in (("a", ""), ("b", ""), ("h", ""),
                       ("hbig", " max-ring-size=32768")):
        st, body = d.request("port-add %s vhost-user%s --json" %
                             (name, opts))
        if st != 0 and opts:  # a vswd from before the option (the
            # before/after runs of issue 10): it had no cap at all
            print("note: port-add %s%s refused (%s); without it" % (
                name, opts, body.strip()))
            st, body = d.request("port-add %s vhost-user --json" % name)
        if st != 0:
            raise RuntimeError("port-add %s: %s" % (name, body))
        paths[name] = json.loads(body)["path"]
    return paths


class Run:
    """vswd forwarding a -> b, and what each scenario is checked against:
    the quiet rate, the fd baseline, the counters after the previous
    scenario."""

    def __init__(self, d, fe):
        self.d, self.fe = d, fe
        self.traffic = None  # killed by main whatever happens

    def start(self):
        d = self.d
        self.paths = add_ports(d)
        d.ctl("flow-add in_port=a,actions=output:b,output:h")
        self.traffic = Traffic(self.fe, self.paths["a"], self.paths["b"])
        time.sleep(0.3)
        self.prev_t = self.traffic.mark()
        if self.prev_t["received"] == 0:
            raise RuntimeError("no traffic a -> b before any scenario")
        # the drops at the same point as prev_t: the quiet window below is
        # in the first scenario's sent/received, so its drops must be too
        self.prev_a = counters(d.port("a"))
        self.prev_b = counters(d.port("b"))
        self.prev_pmd = pmd_drops(d)
        w = self.traffic.window()
        time.sleep(2.0)
        self.quiet, self.quiet_fps = self.traffic.rate(w)
        print("a -> b quiet rate: %.0f frames/s, %.3f of offered" % (
            self.quiet_fps, self.quiet))
        self.fds0 = d.fds()
        self.fdl0 = d.fd_list()

    def attack(self, name, ctrs, hp, errs):
        """The scenario on port hp: (front-end output, rate, frames/s);
        below the bar, the better of two windows (the machine is
        shared)."""
        d, quiet = self.d, self.quiet
        out, rate, fps = attack(d, self.traffic, self.fe, name,
                                self.paths[hp], errs, hp)
        if (rate < RATE_BAR * quiet and "!fdleak" not in ctrs and
                d.alive()):
            again = attack(d, self.traffic, self.fe, name, self.paths[hp],
                           [], hp)
            print("      note (%s): %.0f%% of the quiet rate, "
                  "again: %.0f%%" % (name, 100 * rate / quiet,
                                     100 * again[1] / quiet))
            rate, fps = max((rate, fps), again[1:])
        return out, rate, fps

    def answers(self, errs):
        """vswd alive and answering; False (errs says why) when not."""
        d = self.d
        if not d.alive():
            d.p.p.wait()
            errs.append("vswd DIED (rc %s)" % d.p.p.returncode)
            return False
        try:
            st, body = d.request("version", timeout=5)
            if st != 0:
                errs.append("version: " + body)
        except (OSError, EOFError) as e:
            try:
                d.p.p.wait(timeout=3)
                e = "died, rc %s" % d.p.p.returncode
            except subprocess.TimeoutExpired:
                pass
            errs.append("vswd does not answer: %s" % e)
            return False
        return True

    def fds_back(self, name, leak, errs):
        """vswd's fd count back at the baseline (+ leak: "!fdleak=N", a
        documented librte_vhost fd leak vsw cannot prevent, exactly N)."""
        d = self.d
        self.fds0 += leak
        fds = d.fds()
        for _ in range(50):
            if fds == self.fds0:
                break
            time.sleep(0.05)
            fds = d.fds()
        if fds != self.fds0:
            extra = sorted(set(d.fd_list()) - set(self.fdl0))
            errs.append("fd count %d -> %d (%s)" % (self.fds0, fds,
                                                     ", ".join(extra)))
            # don't blame the next one
            self.fds0, self.fdl0 = fds, d.fd_list()
        if leak:
            print("      note (%s): librte_vhost leaked %d fd(s), as "
                  "documented" % (name, fds - self.fds0 + leak))

    def flowed(self, errs):
        """a -> b since the previous scenario: (received, sent); every
        frame intact, in order, and sent = received + counted drops."""
        d, prev_t = self.d, self.prev_t
        t = self.traffic.mark()
        ca, cb = counters(d.port("a")), counters(d.port("b"))
        sent = t["sent"] - prev_t["sent"]
        recv = t["received"] - prev_t["received"]
        # what b's tx adapter did not deliver is in its tx_drops and,
        # by reason, in its virtq enq_drop_* counters: count it once
        drops = (deq_drops(ca) - deq_drops(self.prev_a) +
                 enq_drops(cb) - enq_drops(self.prev_b))
        if recv == 0:
            errs.append("a -> b traffic stopped")
        pmd = pmd_drops(d)
        # contents: every frame arrived intact and in order, and what
        # did not arrive is exactly what vswd counted as dropped
        missing = t.get("missing", 0) - prev_t.get("missing", 0)
        if (t.get("dup", 0) != prev_t.get("dup", 0) or
                missing != drops):
            errs.append("a -> b contents: dup %d, missing %d != "
                        "counted drops %d" % (
                            t.get("dup", 0) - prev_t.get("dup", 0),
                            missing, drops))
        if sent != recv + drops or t["bad"] != prev_t["bad"]:
            errs.append("pmd drops: %s" % {
                k: v - self.prev_pmd.get(k, 0) for k, v in pmd.items()
                if v != self.prev_pmd.get(k, 0)})
            errs.append("a -> b: sent %d != received %d + drops %d "
                        "(bad %d, still in a's ring %d)" % (
                            sent, recv, drops, t["bad"] - prev_t["bad"],
                            t["inflight"]))
        self.prev_t, self.prev_a, self.prev_b, self.prev_pmd = \
            t, ca, cb, pmd
        return recv, sent

    def scenario(self, name, ctrs, below):
        """Runs one scenario and checks it: (errs, vswd still serving,
        one-line summary)."""
        d, quiet = self.d, self.quiet
        errs = []
        hp = next((c[6:] for c in ctrs.split(",")
                   if c.startswith("!port=")), "h")
        before = scenario_counters(d, hp, ctrs)
        out, rate, fps = self.attack(name, ctrs, hp, errs)
        if not self.answers(errs):
            return errs, False, ""
        leak = 0
        rate_known = "!rate-known" in ctrs.split(",")
        for c in ctrs.split(","):
            if c.startswith("!fdleak="):
                leak = int(c[8:])
        if rate < RATE_BAR * quiet:
            below.append("%s %.0f%%" % (name, 100 * rate / quiet))
            if not rate_known:
                errs.append("a -> b under attack: %.0f%% of its quiet "
                            "rate (%.0f frames/s, quiet %.0f)" % (
                                100 * rate / quiet, fps, self.quiet_fps))
        ctrs = ",".join(c for c in ctrs.split(",") if c[0] != "!")
        self.fds_back(name, leak, errs)
        after = scenario_counters(d, hp, ctrs)
        moved = []
        for c in ctrs.split(","):
            delta = after.get(c, 0) - before.get(c, 0)
            moved.append("%s+%d" % (c, delta))
            if delta <= 0:
                errs.append("counter %s did not move" % c)
        recv, sent = self.flowed(errs)
        notes = [l[6:] for l in out.splitlines() if l.startswith("note:")]
        if notes and not errs:
            print("      note (%s): %s" % (name, "; ".join(notes)))
        return errs, True, "%-40s a->b %d/%d %3.0f%%" % (
            " ".join(moved), recv, sent, 100 * rate / quiet)

    def finish(self, checks):
        """The traffic's final count (intact, in order), vswd's end."""
        d = self.d
        final = self.traffic.mark(quit=True)
        self.traffic.p.wait(timeout=10)
        self.traffic = None
        print("traffic a -> b overall: sent %d received %d bad %d "
              "good %d dup %d missing %d" % (
                  final["sent"], final["received"], final["bad"],
                  final["good"], final["dup"], final["missing"]))
        checks.check(final["bad"] == 0 and final["dup"] == 0,
                     "a -> b: every frame received intact, in order "
                     "(sequence number, length, CRC-32)")
        vswd_end(checks, d)
        log = d.p.buf
        print("vswd log: %d lines, %d warnings" % (
            log.count("\n"), log.count("WARNING") + log.count("warn")))


def main():
    build = sys.argv[1]
    only = sys.argv[2:]
    fe = os.path.join(build, "test", "hostile", "hostile_frontend")
    listing = subprocess.run([fe, "list"], check=True, capture_output=True,
                             text=True).stdout
    scenarios = [l.split("\t") for l in listing.splitlines() if l]
    if only:
        scenarios = [s for s in scenarios if s[0] in only]
    tmp = tempfile.mkdtemp(prefix="vsw-hostile-")
    d = Vswd(build, os.path.join(tmp, "run"), tmp, "hostile",
             default_config=False, eal=["--no-huge", "-m", "512",
                                        "-l", "0,1"])
    checks = Checks()
    failed = []
    below = []
    run = None
    t_start = time.time()
    try:
        d.ready(30)
        time.sleep(0.2)
        run = Run(d, fe)
        run.start()
        for name, ctrs, what in scenarios:
            errs, serving, line = run.scenario(name, ctrs, below)
            if not serving:
                failed.append((name, errs))
                print("FAIL %-26s %s" % (name, "; ".join(errs)))
                break
            if errs:
                failed.append((name, errs))
            else:
                checks.passed += 1  # a scenario is one check
            print("%s %-26s %s%s" % (
                "FAIL" if errs else "ok  ", name, line,
                (" | " + "; ".join(errs)) if errs else ""))
            sys.stdout.flush()
        if d.alive():
            run.finish(checks)
    except Exception as e:  # report, clean up, fail
        checks.fail("ERROR: %r" % e)
    finally:
        if run is not None and run.traffic is not None:
            run.traffic.p.kill()
        if d.alive():
            d.stop(signal.SIGKILL)
    if below:
        print("below %d%% of the quiet rate: %s" % (100 * RATE_BAR,
                                                   ", ".join(below)))
    print("%d scenarios, %d failed, %.1f s" % (
        len(scenarios), len(failed), time.time() - t_start))
    for name, errs in failed:
        checks.fail("%s: %s" % (name, "; ".join(errs)))
    if checks.failures:
        print("--- vswd log tail ---\n" + d.p.tail())
    return checks.finish(tmp)


if __name__ == "__main__":
    sys.exit(main())
