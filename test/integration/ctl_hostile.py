#!/usr/bin/env python3
"""Hostile control-socket clients against a real vswd.

Starts vswd (no ports), then throws at its control socket: malformed and
unknown commands, wrong argument counts, an oversized line, binary garbage
with NUL bytes, a client that connects and never speaks, a client that
sends half a line and vanishes, hundreds of clients at once, and pipelined
requests. After every scenario a well-behaved client must still get a
correct answer; at the end vswd's fd count is back to where it started and
a shutdown exits 0.

usage: ctl_hostile.py BUILD_DIR
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

IDLE_SEC = 10  # VSW_CTL_IDLE_SEC


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def read_reply(s, timeout=5.0):
    s.settimeout(timeout)
    buf = b""
    while b"\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise EOFError("closed before header: %r" % buf)
        buf += chunk
    hdr, rest = buf.split(b"\n", 1)
    status, length = hdr.split()
    length = int(length)
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError("closed mid-body")
        rest += chunk
    return int(status), rest[:length].decode(), rest[length:]


def request(path, line):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(line)
        status, body, _ = read_reply(s)
        return status, body


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def fd_list(pid):
    d = "/proc/%d/fd" % pid
    out = []
    for f in sorted(os.listdir(d), key=int):
        try:
            out.append("%s->%s" % (f, os.readlink(os.path.join(d, f))))
        except OSError:
            pass
    return out


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, cond, detail=""):
        if cond:
            self.passed += 1
            print("ok   ", name)
        else:
            self.failed += 1
            print("FAIL ", name, detail)


def main():
    build = sys.argv[1]
    vswd = os.path.join(build, "switch", "vswd", "vswd")
    tmp = tempfile.mkdtemp(prefix="vsw-ctl-")
    run_dir = os.path.join(tmp, "run")
    path = os.path.join(run_dir, "vswd.ctl")
    log = open(os.path.join(tmp, "vswd.log"), "w+")
    proc = subprocess.Popen(
        [vswd, "--run-dir", run_dir, "--no-default-config", "--",
         "--no-huge", "-m", "256", "--no-shconf", "-l", "0,1",
         "--log-level=*:notice"],
        stdout=log, stderr=subprocess.STDOUT)
    c = Checks()
    try:
        for _ in range(100):
            if os.path.exists(path):
                break
            if proc.poll() is not None:
                log.seek(0)
                fail("vswd exited early:\n" + log.read()[-2000:])
            time.sleep(0.1)
        else:
            fail("control socket never appeared")
        time.sleep(0.2)
        fds0 = fd_count(proc.pid)
        fdl0 = fd_list(proc.pid)

        def alive(name):
            st, body = request(path, b"version\n")
            c.check(name + ": still serving", st == 0 and "vswd" in body,
                    body)

        st, body = request(path, b"version --json\n")
        c.check("version --json", st == 0 and body.startswith("{"), body)

        for line, want in [
            (b"nosuch\n", "unknown command"),
            (b"version extra-arg\n", "usage"),
            (b"log-level\n", "usage"),
            (b"log-level nonsense\n", "bad log level"),
            (b"version 'unterminated\n", "unterminated quote"),
            (b"\n", "empty request"),
            (b"version \x01\x02\n", "control character"),
            (b"\xff\xfe\xfd garbage\n", "unknown command"),
            (b"version\x00hidden\n", "NUL byte"),
            (b"a " * 100 + b"\n", "too many arguments"),
        ]:
            st, body = request(path, line)
            c.check("rejects %r" % line[:24],
                    st == 1 and want in body and body.count("\n") == 1,
                    body)
        st, body = request(path, b"nosuch --json\n")
        c.check("json error", st == 1 and
                body.startswith('{"schema": 1, "error"') and
                "unknown command" in json.loads(body)["error"], body)
        alive("malformed")

        # An oversized line: one error, then the connection is closed.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
            try:
                s.sendall(b"x" * 5000)
            except OSError:
                pass
            st, body, _ = read_reply(s)
            c.check("oversized line", st == 1 and "too long" in body, body)
            s.settimeout(5)
            try:
                closed = s.recv(10) == b""
            except ConnectionResetError:
                closed = True  # closed with our unread bytes pending
            c.check("oversized line closes", closed)
        alive("oversized")

        # Pipelined requests on one connection are answered in order.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
            s.sendall(b"version\nnosuch\nversion --json\n")
            s.settimeout(5)
            buf = b""
            got = []
            while len(got) < 3:
                while True:
                    if b"\n" in buf:
                        hdr, rest = buf.split(b"\n", 1)
                        st, ln = map(int, hdr.split())
                        if len(rest) >= ln:
                            got.append((st, rest[:ln].decode()))
                            buf = rest[ln:]
                            break
                    chunk = s.recv(4096)
                    if not chunk:
                        raise EOFError("pipelined: closed")
                    buf += chunk
            c.check("pipelined", [g[0] for g in got] == [0, 1, 0] and
                    got[2][1].startswith("{"), got)

        # A client that never speaks, one that sends half a line and
        # leaves, and one that leaves without reading its reply.
        idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        idle.connect(path)
        half = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        half.connect(path)
        half.sendall(b"vers")
        half.close()
        rude = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        rude.connect(path)
        rude.sendall(b"help\n")
        rude.close()
        alive("idle client present")

        # Hundreds of clients at once: some are refused with a message,
        # none hangs the daemon.
        many = []
        refused = 0
        for _ in range(300):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
                many.append(s)
            except OSError:
                refused += 1
                s.close()
        time.sleep(0.5)
        busy = 0
        for s in many:
            s.setblocking(False)
            try:
                data = s.recv(100)
                if b"too many control connections" in data:
                    busy += 1
            except BlockingIOError:
                pass
        c.check("connection flood refused politely", busy + refused > 0,
                "busy=%d refused=%d" % (busy, refused))
        for s in many:
            s.close()
        time.sleep(0.3)
        alive("flood")

        # The idle client is closed by the server after its timeout.
        idle.settimeout(IDLE_SEC + 5)
        t0 = time.time()
        try:
            data = idle.recv(10)
        except socket.timeout:
            data = None
        c.check("idle client closed", data == b"" and
                time.time() - t0 <= IDLE_SEC + 5, repr(data))
        idle.close()
        time.sleep(0.3)
        alive("after idle")

        # the last client's close may still be in flight: wait a little
        for _ in range(30):
            fds1 = fd_count(proc.pid)
            if fds1 == fds0:
                break
            time.sleep(0.1)
        c.check("no fd leak", fds1 == fds0, "%d -> %d: %s" % (
            fds0, fds1, set(fd_list(proc.pid)) ^ set(fdl0)))

        # A second vswd on the same run directory is refused.
        second = subprocess.run(
            [vswd, "--run-dir", run_dir, "--no-default-config"],
            capture_output=True, text=True, timeout=30)
        c.check("second instance refused",
                second.returncode != 0 and "already running" in
                second.stderr, second.stderr[-300:])
        alive("second instance")

        st, body = request(path, b"shutdown\n")
        c.check("shutdown acknowledged", st == 0, body)
        rc = proc.wait(timeout=30)
        c.check("exit 0", rc == 0, "rc=%d" % rc)
        c.check("socket removed", not os.path.exists(path))
    except Exception as e:  # noqa: BLE001 - report, then fail
        c.failed += 1
        print("FAIL  exception:", repr(e))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.seek(0)
        if c.failed:
            print("--- vswd log ---")
            print(log.read()[-3000:])
    print("%d passed, %d failed" % (c.passed, c.failed))
    sys.exit(1 if c.failed else 0)


if __name__ == "__main__":
    main()
