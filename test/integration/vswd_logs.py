#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""vswd's log: destinations, rotation, per-type levels (switch/vswd/
vswd_log.c, vswd_cmds_log.c). One vswd run per case, a few seconds each.

Cases (--case):
  rotate   --log-file F: run-time changes (each logs an audit line "config
           change: ...") while F is moved away and `log-reopen` is sent,
           first in lock step (every line is in the file that was current
           when its command ran), then with a second client changing
           concurrently (every line in exactly one file, in order, none
           lost). log-reopen without a file is an error.
  levels   per-type levels filter as set (vsw.vswd, vsw.vport), unknown
           types are refused, --log-level at start, levels kept in the
           state file and restored after a restart, the command line
           winning over the state.
  syslog   --log syslog:SOCKET to a unix datagram socket this test binds:
           RFC 3164 "<PRI>vswd[PID]: " with PRI = daemon facility + the
           line's level; log-reopen reconnects after the socket is
           replaced.

usage: vswd_logs.py --build DIR --case CASE [--keep]
"""
import argparse
import os
import re
import socket
import sys
import tempfile
import threading
import time
import traceback

from vswtest.checks import Checks
from vswtest.ctl import CtlError
from vswtest.vswd import Vswd

LOG_DAEMON = 3 << 3
SYSLOG_NOTICE, SYSLOG_INFO = 5, 6


def wait_file(path, regex, timeout=30.0, since=0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path) and re.search(
                regex, open(path).read()[since:], re.M):
            return True
        time.sleep(0.05)
    return False


def wait_ctl(v, timeout=30.0):
    end_t = time.monotonic() + timeout
    while time.monotonic() < end_t:
        try:
            if v.request("version")[0] == 0:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError("vswd: control socket never answered")


def start(tmp, build, tag, args, ready_log=None, info=True):
    """vswd with no default ports; ready_log: the file its lines go to
    (Vswd.ready() reads stdout), "" when they go elsewhere."""
    # Vswd passes EAL --log-level=*:notice; vswd's own option comes after
    # it, so vswd's and vport's info lines (what this test reads) are on
    if info:
        args = ["--log-level", "vsw.vswd:info", "--log-level",
                "vsw.vport:info"] + args
    since = (len(open(ready_log).read()) if ready_log and
             os.path.exists(ready_log) else 0)
    v = Vswd(build, os.path.join(tmp, "run-" + tag), tmp, tag,
             default_config=False, args=args)
    try:
        if ready_log is None:
            v.ready()
        elif ready_log == "":
            wait_ctl(v)
        elif not wait_file(ready_log, r"vswd: ready", since=since):
            raise RuntimeError("vswd %s: no 'ready' in %s" % (tag,
                                                             ready_log))
    except BaseException:
        v.stop()  # never leave a busy-polling vswd behind
        raise
    return v


def end(c, v, log):
    """shutdown, exit 0, and the pool line in the log file."""
    st, _ = v.request("shutdown")
    rc = v.p.p.wait(30)
    v.stop()
    text = open(log).read() if log else v.p.buf
    c.check(st == 0 and rc == 0, "vswd shut down, exit %s" % rc)
    c.check(re.search(r"mbuf pool: 0 in use", text) is not None,
            "the last lines (pool back to 0) reached the log")


def audit(text):
    """The "config change" lines of a log, their commands in order."""
    return re.findall(r"vswd: config change: (.*)$", text, re.M)


def case_rotate(c, build, tmp):
    log = os.path.join(tmp, "vswd.log")
    v = start(tmp, build, "rotate", ["--log-file", log], ready_log=log)
    c.check(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ",
                     open(log).read()) is not None,
            "file lines start with a UTC timestamp")
    # lock step: each rotation between two known commands
    expect = {}
    n = 0
    for gen in range(4):
        for _ in range(25):
            cmd = "flow-add priority=%d,udp,tp_dst=%d,actions=drop" % (
                n % 7, n)
            v.ctl(cmd)
            expect.setdefault(gen, []).append(cmd)
            n += 1
        os.rename(log, "%s.%d" % (log, gen))
        v.ctl("log-reopen")
    v.ctl("flow-flush")
    expect[4] = ["flow-flush"]
    for gen in range(4):
        got = audit(open("%s.%d" % (log, gen)).read())
        c.check(got == expect[gen], "rotated file %d holds exactly its "
                "25 changes" % gen, got[:3])
    c.check(wait_file(log, r"config change: flow-flush$", 5) and
            audit(open(log).read()) == expect[4],
            "the new file has what came after the last reopen")

    # concurrent: a second client changes while this one rotates
    done = threading.Event()
    sent = []

    def writer():
        for i in range(600):
            cmd = "flow-add priority=1,udp,tp_src=%d,actions=drop" % i
            v.ctl(cmd)
            sent.append(cmd)
        done.set()

    t = threading.Thread(target=writer)
    t.start()
    gen = 10
    while not done.is_set():
        time.sleep(0.005)
        os.rename(log, "%s.%d" % (log, gen))
        v.ctl("log-reopen")
        gen += 1
    t.join()
    v.ctl("flow-flush")
    wait_file(log, r"config change: flow-flush$", 5)
    lines = []
    for g in list(range(10, gen)) + [None]:
        lines += [x for x in audit(open(log if g is None else
                                        "%s.%d" % (log, g)).read())
                  if "tp_src" in x]
    c.check(gen - 10 >= 3, "%d rotations during the writes" % (gen - 10))
    c.check(lines == sent, "across %d files: all %d lines, once each, in "
            "order (%d found)" % (gen - 10 + 1, len(sent), len(lines)))
    st = v.ctl("log-show --json")
    c.check(st["destination"] == "file" and st["path"] == log and
            st["lines_dropped"] == 0 and st["write_errors"] == 0,
            "log-show shows the file, nothing dropped", st)
    end(c, v, log)

    v = start(tmp, build, "stderr", [])
    st, body = v.request("log-reopen")
    c.check(st == 1 and "not a file" in body, "log-reopen on stderr: an "
            "error", body)
    end(c, v, None)


def levels(v):
    return v.ctl("log-show --json")["types"]


def case_levels(c, build, tmp):
    log = os.path.join(tmp, "vswd.log")
    state = os.path.join(tmp, "vswd.state")
    v = start(tmp, build, "levels", ["--log-file", log, "--state", state,
                                     "--log-level", "vsw.virtq:debug"],
              ready_log=log)
    lv = levels(v)
    c.check(lv["vsw.virtq"] == "debug", "--log-level vsw.virtq:debug "
            "applied", lv)
    c.check(lv["vsw.vswd"] == "info" and lv["vsw.vport"] == "info" and
            lv["vsw.switch"] == "notice", "the others as EAL's *:notice "
            "and the other --log-level left them", lv)

    v.ctl("log-level vsw.vswd warning")
    v.ctl("port-add a1 vhost-user")
    v.ctl("log-level vsw.vswd info")
    v.ctl("log-level vsw.vport warning")
    v.ctl("port-add a2 vhost-user")
    v.ctl("log-level vsw.vport info")
    v.ctl("port-add a3 vhost-user")
    wait_file(log, r"port a3 added", 5)
    text = open(log).read()
    c.check("port-add a1" not in text and "port a1 added" not in text,
            "vsw.vswd at warning: its info lines gone")
    c.check(re.search(r"vport a1: listening", text) is not None,
            "... while vsw.vport's still came")
    c.check("config change: port-add a2" in text and
            "vport a2: listening" not in text,
            "vsw.vport at warning: its lines gone, vsw.vswd's back")
    c.check("vport a3: listening" in text, "vsw.vport back at info")
    for bad in ("vsw.nosuch info", "vsw.vswd loud", "x" * 40 + " info"):
        st, body = v.request("log-level " + bad)
        c.check(st == 1, "log-level %s refused" % bad[:20], body)

    v.ctl("log-level vsw.* notice")
    v.ctl("log-level vsw.ctl debug")
    v.ctl("log-level vsw.virtq error")
    v.ctl("log-level vsw.virtq error")  # the same twice: kept once
    cfg = v.ctl("config-show")
    kept = re.findall(r"^log-level .*$", cfg, re.M)
    want = ["log-level vsw.vswd info", "log-level vsw.vport info",
            "log-level vsw.* notice", "log-level vsw.ctl debug",
            "log-level vsw.virtq error"]
    c.check(kept == want, "config-show: the last level per pattern, in "
            "order", kept)
    before = levels(v)
    end(c, v, log)

    v = start(tmp, build, "levels2", ["--log-file", log, "--state", state],
              ready_log=log, info=False)
    c.check(levels(v) == before, "levels restored from the state file",
            (levels(v), before))
    end(c, v, log)
    v = start(tmp, build, "levels3", ["--log-file", log, "--state", state,
                                      "--log-level", "vsw.virtq:info"],
              ready_log=log)
    c.check(levels(v)["vsw.virtq"] == "info", "--log-level wins over the "
            "state file")
    end(c, v, log)


def recv_all(sock, until, timeout=10.0):
    out = []
    end_t = time.monotonic() + timeout
    sock.settimeout(0.2)
    while time.monotonic() < end_t:
        try:
            out.append(sock.recv(4096).decode())
        except socket.timeout:
            if any(re.search(until, m) for m in out):
                break
    return out


def bind_dgram(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    return s


def case_syslog(c, build, tmp):
    path = os.path.join(tmp, "log.sock")
    s = bind_dgram(path)
    v = start(tmp, build, "syslog", ["--log", "syslog:" + path],
              ready_log="")
    msgs = recv_all(s, r"vswd: ready")
    pid = v.p.pid
    ready = [m for m in msgs if "vswd: ready" in m]
    c.check(ready and ready[0].startswith("<%d>vswd[%d]: vswd: ready" % (
        LOG_DAEMON | SYSLOG_NOTICE, pid)), "ready at daemon.notice, "
        "RFC 3164 header with the pid", ready[:1])
    c.check(all(not m.endswith("\n") for m in msgs),
            "messages carry no trailing newline")
    v.ctl("port-add s1 vhost-user")
    msgs = recv_all(s, r"config change")
    audit_m = [m for m in msgs if "config change: port-add s1" in m]
    c.check(audit_m and audit_m[0].startswith("<%d>" % (
        LOG_DAEMON | SYSLOG_INFO)), "an info line at daemon.info",
        audit_m[:1])
    # the syslog daemon restarts: a new socket at the same path
    s.close()
    os.unlink(path)
    s = bind_dgram(path)
    v.ctl("log-reopen")
    v.ctl("port-add s2 vhost-user")
    msgs = recv_all(s, r"port-add s2")
    c.check(any("config change: port-add s2" in m for m in msgs),
            "after log-reopen the lines reach the new socket")
    v.request("shutdown")
    msgs = recv_all(s, r"mbuf pool")
    c.check(any(re.search(r"mbuf pool: 0 in use", m) for m in msgs),
            "the last lines reached syslog")
    c.check(v.p.p.wait(30) == 0, "vswd exited 0")
    v.stop()
    s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", required=True,
                    choices=["rotate", "levels", "syslog"])
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="vsw-logs-")
    c = Checks()
    try:
        {"rotate": case_rotate, "levels": case_levels,
         "syslog": case_syslog}[a.case](c, a.build, tmp)
    except (Exception, CtlError) as e:  # a broken step fails, logs kept
        traceback.print_exc()
        c.fail("%s: %s" % (type(e).__name__, e))
    return c.finish(tmp, a.keep)


if __name__ == "__main__":
    sys.exit(main())
