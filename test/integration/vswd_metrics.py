#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration test: vswd's Prometheus endpoint, one case per run.

  prometheus  a real Prometheus server (Debian's `prometheus`, private
              config and data in a temp dir, scrape interval 1 s) scrapes
              vswd while a dpdk-testpmd guest sends through it; once the
              traffic has stopped, counters read through Prometheus's own
              query API (/api/v1/query) equal vswd's port-show, pmd-stats-show
              and flow-dump --json within the scrape lag; `vswctl metrics`
              serves the same page as GET /metrics (promtool-clean).
  hostile     while the guest forwards, the endpoint gets huge headers, a
              huge URL, bad methods, bodies, garbage, HTTP/9.9, silent and
              trickling (slowloris) connections and a flood of connections.
              vswd keeps forwarding (exact packet identities over the
              window), its control socket keeps answering, MHD's limits hold
              (silent connections closed after the idle timeout, at most
              CLIENTS_MAX at once), and afterwards the endpoint serves again
              and vswd's fd count is back where it was.

Both cases end with a graceful shutdown (exit 0, every mbuf back).

usage: vswd_metrics.py --build BUILD_DIR --case CASE [--prometheus PATH]
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from vswtest.checks import Checks
from vswtest.proc import Proc
from vswd_traffic import Case

IDLE_SEC = 5      # vswd_metrics_http.c IDLE_SEC
CLIENTS_MAX = 32  # vswd_metrics_http.c CLIENTS_MAX
VM1_RULE = "priority=100,in_port=vm1,actions=output:vm2"


class MetricsCase(Case):
    """vswd_traffic's cross-connect set-up plus the metrics endpoint on a
    free port (port 0 in the config; the bound one is asked back)."""

    def __init__(self, args, tmp, checks):
        args.case = "rules"  # the cross-connect config of vswd_traffic
        super().__init__(args, tmp, checks)
        self.port = None

    def config(self):
        path = super().config()
        with open(path, "a") as f:
            f.write("metrics-endpoint 127.0.0.1:0\n")
        return path

    def start_vswd(self):
        super().start_vswd()
        ep = self.vswd.ctl("metrics-endpoint --json")
        self.port = int(ep["listen"].rsplit(":", 1)[1])
        self.checks.check(ep["enabled"] and ep["listen"].startswith("127.0.0.1:"),
              "metrics endpoint on localhost (%s)" % ep["listen"])

    def url(self, path="/metrics"):
        return "http://127.0.0.1:%d%s" % (self.port, path)


def http_get(url, timeout=5.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def samples(text):
    """Prometheus text -> {'name{labels}': float}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, val = line.rsplit(" ", 1)
        out[key] = float(val)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- prometheus ----

class Prometheus:
    def __init__(self, binary, tmp, target):
        self.port = free_port()
        d = os.path.join(tmp, "prometheus")
        os.makedirs(os.path.join(d, "data"))
        cfg = os.path.join(d, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: vswd\n"
                    "    static_configs:\n      - targets: ['%s']\n" % target)
        self.base = "http://127.0.0.1:%d" % self.port
        self.p = Proc("prometheus", [
            binary, "--config.file=" + cfg,
            "--storage.tsdb.path=" + os.path.join(d, "data"),
            "--web.listen-address=127.0.0.1:%d" % self.port,
            "--web.console.templates=" + d, "--web.console.libraries=" + d,
            "--log.level=warn"], tmp)

    def ready(self, timeout=60.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.p.p.poll() is not None:
                raise RuntimeError("prometheus exited: " + self.p.buf[-2000:])
            try:
                if http_get(self.base + "/-/ready", 2.0)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.3)
        raise RuntimeError("prometheus never ready")

    def query(self, expr):
        """Instant query -> {frozenset(labels): value}."""
        q = urllib.parse.urlencode({"query": expr})
        _, _, body = http_get(self.base + "/api/v1/query?" + q)
        res = json.loads(body)
        if res.get("status") != "success":
            raise RuntimeError("query %s: %s" % (expr, body[:300]))
        return {frozenset((k, v) for k, v in r["metric"].items()
                          if k not in ("job", "instance")):
                float(r["value"][1]) for r in res["data"]["result"]}

    def wait_value(self, expr, want, timeout=15.0):
        """Poll until the single result of expr equals want; the last
        value seen (None: no result)."""
        end, got = time.monotonic() + timeout, None
        while time.monotonic() < end:
            r = self.query(expr)
            got = list(r.values())[0] if len(r) == 1 else None
            if got == want:
                break
            time.sleep(0.5)
        return got

    def stop(self):
        return self.p.stop()


def check_page(c):
    """GET /metrics and `vswctl metrics` serve the same page."""
    st, ctype, page = http_get(c.url())
    c.checks.check(st == 200 and ctype.startswith("text/plain; version=0.0.4"),
          "GET /metrics: 200, %s" % ctype)
    ctl = c.vswd.ctl("metrics")
    same = set(samples(page)) == set(samples(ctl))
    c.checks.check(same, "vswctl metrics has the samples of GET /metrics (%d)" %
          len(samples(page)))
    helps = [ln for ln in page.splitlines() if ln.startswith("# HELP")]
    types = [ln for ln in page.splitlines() if ln.startswith("# TYPE")]
    c.checks.check(len(helps) == len(types) > 10 and
          all(ln.split()[2].startswith("vsw_") for ln in types),
          "%d families, each with HELP and TYPE, all vsw_*" % len(types))
    promtool = shutil.which("promtool")
    if promtool:
        r = subprocess.run([promtool, "check", "metrics"], input=page,
                           capture_output=True, text=True, timeout=30)
        c.checks.check(r.returncode == 0, "promtool check metrics: clean %s" %
              (r.stdout + r.stderr).strip()[:300])
    return page


def case_prometheus(c):
    c.start_vswd()
    prom = Prometheus(c.args.prometheus, c.tmp, "127.0.0.1:%d" % c.port)
    try:
        prom.ready()
        up = prom.wait_value('up{job="vswd"}', 1.0, 20.0)
        c.checks.check(up == 1.0, "prometheus scrapes vswd (up = %s)" % up)
        g = c.start_guest(1)
        gs, x = c.traffic(g, c.args.seconds)
        c.identity("prometheus", gs, x)
        # traffic has stopped: vswd's own numbers are final
        ports = c.vswd.ports()
        pmds = c.vswd.ctl("pmd-stats-show --json")["pmds"]
        rules = {r["rule"]: r for r in c.vswd.ctl("flow-dump --json")["rules"]}
        want = [
            ('vsw_port_packets_total{port="vm1",direction="rx"}',
             ports["vm1"]["rx"], "port-show vm1 rx"),
            ('vsw_port_packets_total{port="vm2",direction="tx"}',
             ports["vm2"]["tx"], "port-show vm2 tx"),
            ('vsw_port_bytes_total{port="vm1",direction="rx"}',
             ports["vm1"]["virtq"]["deq_bytes"], "port-show vm1 deq_bytes"),
            ('sum(vsw_pmd_packets_total{direction="rx"})',
             sum(p["rx_packets"] for p in pmds), "pmd-stats-show rx_packets"),
            ('sum(vsw_pmd_cache_hits_total)',
             sum(p["emc_hits"] + p["classifier_hits"] + p["port_pair_hits"]
                 for p in pmds),
             "pmd-stats-show emc_hits + classifier_hits + port_pair_hits"),
            ('vsw_rule_packets_total{rule="%s"}' % VM1_RULE,
             rules[VM1_RULE]["n_packets"], "flow-dump n_packets"),
        ]
        for expr, value, what in want:
            got = prom.wait_value(expr, float(value))
            c.checks.check(got == float(value) and value > 0,
                  "prometheus %s = %s == vswd %s = %d" % (expr, got, what,
                                                          value))
        n_drops = sum(v for p in pmds for k, v in p.items()
                      if k.startswith("drop_"))
        got = prom.wait_value('sum(vsw_pmd_drops_total)', float(n_drops))
        c.checks.check(got == float(n_drops) and
              len(prom.query('vsw_pmd_drops_total')) > 3,
              "prometheus sum(vsw_pmd_drops_total) = %s == vswd "
              "pmd-stats-show drop_* = %d" % (got, n_drops))
        check_page(c)
        g.quit()
        check_flow_dump(c)
    finally:
        prom.stop()
    c.finish()


def check_flow_dump(c):
    """flow-dump lines as ovs-ofctl dump-flows prints them; durations run
    from the first install, survive a replace, restart after a delete."""
    line = re.compile(r"^priority=(\d+), n_packets=(\d+), n_bytes=(\d+), "
                      r"duration=(\d+\.\d{3})s, (\S+ )?actions=(\S+)$")
    text = c.vswd.ctl("flow-dump").splitlines()
    rules = c.vswd.ctl("flow-dump --json")["rules"]
    ms = [line.match(ln) for ln in text]
    c.checks.check(len(text) == len(rules) == 2 and all(ms),
          "flow-dump: %d lines in the ovs-ofctl form: %s" % (len(text),
                                                             text))
    for m, r in zip(ms, rules):
        if not m:
            continue
        c.checks.check(int(m.group(1)) == r["priority"] and
              int(m.group(2)) == r["n_packets"] and
              (m.group(5) or "").strip() == r["match"] and
              m.group(6) == r["actions"] and
              r["rule"] == "priority=%d,%s,actions=%s" % (
                  r["priority"], r["match"], r["actions"]),
              "flow-dump text and --json agree: %s" % r["rule"])
    d0 = {r["rule"]: r["duration"] for r in rules}
    time.sleep(1.0)
    # same match and priority, other actions: a replace keeps the time
    c.vswd.ctl("flow-add priority=100,in_port=vm1,actions=output:vm1")
    c.vswd.ctl("flow-del priority=100,in_port=vm2")
    c.vswd.ctl("flow-add priority=100,in_port=vm2,actions=output:vm1")
    after = {r["match"]: r for r in c.vswd.ctl("flow-dump --json")["rules"]}
    old = d0[VM1_RULE]
    r1, r2 = after["in_port=vm1"], after["in_port=vm2"]
    c.checks.check(r1["actions"] == "output:vm1" and r1["duration"] >= old + 0.9 and
          r1["n_packets"] > 0,
          "flow-dump: replaced rule keeps duration (%.3f -> %.3f) and "
          "counters" % (old, r1["duration"]))
    c.checks.check(r2["duration"] < 0.9 and r2["n_packets"] == 0,
          "flow-dump: re-added rule starts again (%.3f s, %d packets)" %
          (r2["duration"], r2["n_packets"]))
    st, body = c.vswd.request("flow-dump --json")
    c.checks.check(st == 0 and body.startswith('{"schema": 1, "rules": ['),
          "flow-dump --json is versioned: %s" % body[:40])


# ---- hostile ----

def raw(port, data, timeout=5.0, read=True):
    """Send bytes, return what came back until close, a whole response
    head, or timeout."""
    with socket.create_connection(("127.0.0.1", port), timeout) as s:
        try:
            s.sendall(data)
        except OSError:  # vswd may close before we finish sending
            pass
        buf = b""
        end = time.monotonic() + timeout
        while read and time.monotonic() < end:
            try:
                chunk = s.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            if b"\r\n\r\n" in buf:
                break
        return buf


def status_of(reply):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", reply)
    return int(m.group(1)) if m else None


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def hostile_requests(c):
    big = b"X-Big: " + b"a" * 100000 + b"\r\n"
    many = b"".join(b"X-H%d: %s\r\n" % (i, b"b" * 40) for i in range(3000))
    cases = [
        ("huge header", b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + big +
         b"\r\n", (413, 431, None)),
        ("3000 headers", b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + many +
         b"\r\n", (413, 431, None)),
        ("huge URL", b"GET /" + b"u" * 100000 + b" HTTP/1.1\r\nHost: x\r\n"
         b"\r\n", (414, 413, 431, None)),
        ("POST", b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
         b"\r\nhello", (405,)),
        ("DELETE", b"DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n", (405,)),
        ("unknown method", b"FROB / HTTP/1.1\r\nHost: x\r\n\r\n", (405, 400,
                                                                    501)),
        ("POST 1 GB body", b"POST /metrics HTTP/1.1\r\nHost: x\r\n"
         b"Content-Length: 1000000000\r\n\r\n" + b"z" * 200000,
         (405, 413, None)),
        ("HTTP/9.9", b"GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n", (400, 505,
                                                                    None)),
        ("no Host", b"GET /metrics HTTP/1.1\r\n\r\n", (200, 400)),
        ("garbage", bytes(range(256)) * 64, (400, None)),
        ("NUL in URL", b"GET /met\x00rics HTTP/1.1\r\nHost: x\r\n\r\n",
         (400, 404, None)),
        ("404", b"GET /nosuch HTTP/1.1\r\nHost: x\r\n\r\n", (404,)),
    ]
    for name, data, ok in cases:
        st = status_of(raw(c.port, data))
        c.checks.check(st in ok, "hostile %s: status %s (want %s)" % (name, st, ok))
        c.checks.check(c.vswd.p.p.poll() is None, "hostile %s: vswd alive" % name)


def hostile_idle(c):
    """Silent and trickling connections are closed after IDLE_SEC; while
    they are open the control socket answers at once."""
    silent = [socket.create_connection(("127.0.0.1", c.port), 5)
              for _ in range(8)]
    trickle = socket.create_connection(("127.0.0.1", c.port), 5)
    trickle.sendall(b"GET /metrics HTTP/1.1\r\n")
    t0 = time.monotonic()
    st, _ = c.vswd.request("version")
    dt = time.monotonic() - t0
    c.checks.check(st == 0 and dt < 1.0, "control socket answers while 9 HTTP "
          "connections hang (%.3f s)" % dt)
    closed = 0
    for s in silent + [trickle]:
        s.settimeout(IDLE_SEC * 3)
        try:
            closed += s.recv(1) == b""
        except OSError:  # reset also counts as closed
            closed += 1
        s.close()
    dt = time.monotonic() - t0
    c.checks.check(closed == 9 and dt < IDLE_SEC * 3,
          "silent/slowloris connections closed by vswd (%d of 9 in %.1f s)" %
          (closed, dt))


def hostile_flood(c):
    """4 x CLIENTS_MAX half-sent requests at once: vswd holds at most
    CLIENTS_MAX of them (the rest wait in the listen backlog, itself
    CLIENTS_MAX deep, or are not accepted at all), its control socket keeps
    answering, and once the flood goes away the endpoint serves again
    within two idle timeouts (backlogged requests are closed by the
    timeout)."""
    pid = c.vswd.p.p.pid
    fds0 = fd_count(pid)
    conns = []
    for _ in range(4 * CLIENTS_MAX):
        try:
            s = socket.create_connection(("127.0.0.1", c.port), 0.5)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            conns.append(s)
        except OSError:
            pass
    time.sleep(1.0)
    held = fd_count(pid) - fds0
    c.checks.check(len(conns) > CLIENTS_MAX and held <= CLIENTS_MAX,
          "flood: vswd holds %d of %d connections (limit %d)" %
          (held, len(conns), CLIENTS_MAX))
    t0 = time.monotonic()
    st, _ = c.vswd.request("version")
    dt = time.monotonic() - t0
    c.checks.check(st == 0 and dt < 1.0, "flood: control socket answers (%.3f s)" %
          dt)
    for s in conns:
        s.close()
    try:
        st = http_get(c.url(), IDLE_SEC * 3)[0]
    except OSError as e:
        st = str(e)
    c.checks.check(st == 200, "flood: served again once the flood is gone (%s)" % st)


def case_hostile(c):
    c.start_vswd()
    g = c.start_guest(1)
    http_get(c.url())
    time.sleep(0.5)
    fds0 = fd_count(c.vswd.p.p.pid)

    def attack(g):
        hostile_requests(c)
        hostile_idle(c)
        hostile_flood(c)

    gs, x = c.traffic(g, c.args.seconds, during=attack)
    c.identity("hostile", gs, x)
    check_page(c)
    # backlogged flood requests are closed by the idle timeout
    end = time.monotonic() + IDLE_SEC * 3
    while True:
        fds = fd_count(c.vswd.p.p.pid)
        if fds <= fds0 or time.monotonic() > end:
            break
        time.sleep(0.5)
    c.checks.check(fds <= fds0, "vswd fds back to %d (%d)" % (fds0, fds))
    ep = c.vswd.ctl("metrics-endpoint off --json")
    c.checks.check(not ep["enabled"], "metrics-endpoint off")
    try:
        http_get(c.url(), 2.0)
        off = False
    except OSError:
        off = True
    c.checks.check(off, "endpoint closed after metrics-endpoint off")
    st, body = c.vswd.request("metrics-endpoint 999999")
    c.checks.check(st == 1 and "bad metrics address" in body,
          "metrics-endpoint rejects a bad port: %s" % body.strip())
    g.quit()
    c.finish()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--testpmd", default=shutil.which("dpdk-testpmd"))
    ap.add_argument("--prometheus", default=shutil.which("prometheus"))
    ap.add_argument("--case", choices=("prometheus", "hostile"),
                    required=True)
    ap.add_argument("--seconds", type=float, default=3.0)
    # what vswd_traffic.Case reads from its own command line
    ap.add_argument("--devargs", default="")
    ap.add_argument("--mbuf-size", type=int, default=0)
    ap.add_argument("--tx-first", type=int, default=8)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = ap.parse_args()
    if not args.testpmd or not os.access(args.testpmd, os.X_OK):
        print("dpdk-testpmd not found: skipped")
        return 77
    if args.case == "prometheus" and not args.prometheus:
        print("prometheus not found (apt-get install prometheus): skipped")
        return 77
    case = args.case
    tmp = tempfile.mkdtemp(prefix="vswd-metrics-")
    checks = Checks()
    print("case %s, temp dir %s" % (case, tmp))
    c = MetricsCase(args, tmp, checks)
    return c.run_case(case_prometheus if case == "prometheus" else case_hostile)


if __name__ == "__main__":
    sys.exit(main())
