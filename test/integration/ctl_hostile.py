#!/usr/bin/env python3
"""Hostile control-socket clients against a real vswd.

Starts vswd (no ports), then throws at its control socket: malformed and
unknown commands, wrong argument counts, an oversized line, binary garbage
with NUL bytes, a client that connects and never speaks, a client that
sends half a line and vanishes, hundreds of clients at once, and pipelined
requests. After every scenario a well-behaved client must still get a
correct answer; at the end vswd's fd count is back to where it started, the
validators found nothing, and a shutdown exits 0 with every mbuf back.

usage: ctl_hostile.py BUILD_DIR
"""
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time

from vswtest.checks import Checks, vswd_end
from vswtest.ctl import read_reply, request
from vswtest.vswd import Vswd

IDLE_SEC = 10  # VSW_CTL_IDLE_SEC
CLIENTS_MAX = 64  # VSW_CTL_CLIENTS_MAX


def served(s):
    """True when the open connection s answers a request (accepted and
    kept), False when the server refused it ("too many") or closed it."""
    try:
        s.sendall(b"version\n")
        st, body, _ = read_reply(s, 5.0)
    except (OSError, EOFError):
        return False
    return st == 0 and "vswd" in body


def refused_busy(s):
    """True when the server refused s at once: the busy error, then EOF."""
    s.settimeout(5.0)
    data = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass
    except socket.timeout:
        return False  # neither refused nor closed: it was served
    return b"too many control connections" in data


def limit_exact(c, path):
    """Exactly CLIENTS_MAX connections are served at once (the last one
    included), the next is refused at once, and a freed slot is reused
    (switch/ctl/ctl_server.c listen_cb: nclients >= max -> reject_busy)."""
    held = []
    try:
        for i in range(CLIENTS_MAX):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            held.append(s)
            if not served(s):
                c.fail("limit: connection %d of %d not served" %
                       (i + 1, CLIENTS_MAX))
                return
        c.check(True, "limit: %d connections served at once" % CLIENTS_MAX)
        for what in ("connection %d" % (CLIENTS_MAX + 1), "again"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(path)
                c.check(refused_busy(s), "limit: %s refused at once" % what)
        # free one slot: the server sees the EOF, the next one is served
        held.pop(0).close()
        ok = False
        for _ in range(20):
            time.sleep(0.05)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            if served(s):
                held.append(s)
                ok = True
                break
            s.close()
        c.check(ok, "limit: a freed slot is reused")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
            c.check(refused_busy(s), "limit: full again after the reuse")
    finally:
        for s in held:
            s.close()
        time.sleep(0.3)  # the server sees every EOF before the next step


def malformed(c, path):
    """Malformed, unknown and wrong-count requests: one error line each."""
    st, body = request(path, b"version --json\n")
    c.check(st == 0 and body.startswith("{"), "version --json", body)

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
        c.check(st == 1 and want in body and body.count("\n") == 1,
                "rejects %r" % line[:24], body)
    st, body = request(path, b"nosuch --json\n")
    c.check(st == 1 and body.startswith('{"schema": 1, "error"') and
            "unknown command" in json.loads(body)["error"],
            "json error", body)


def oversized(c, path):
    """An oversized line: one error, then the connection is closed."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        try:
            s.sendall(b"x" * 5000)
        except OSError:
            pass
        st, body, _ = read_reply(s)
        c.check(st == 1 and "too long" in body, "oversized line", body)
        s.settimeout(5)
        try:
            closed = s.recv(10) == b""
        except ConnectionResetError:
            closed = True  # closed with our unread bytes pending
        c.check(closed, "oversized line closes")


def pipelined(c, path):
    """Pipelined requests on one connection are answered in order."""
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
        c.check([g[0] for g in got] == [0, 1, 0] and
                got[2][1].startswith("{"), "pipelined", got)


def rude_clients(path):
    """A client that never speaks (returned: the server closes it after
    IDLE_SEC, idle_closed()), one that sends half a line and leaves, and
    one that leaves without reading its reply."""
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
    return idle


def flood(c, path):
    """Hundreds of clients at once: some are refused with a message, none
    hangs the daemon."""
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
    c.check(busy + refused > 0, "connection flood refused politely",
            "busy=%d refused=%d" % (busy, refused))
    for s in many:
        s.close()
    time.sleep(0.3)


def idle_closed(c, idle):
    """The idle client is closed by the server after its timeout."""
    idle.settimeout(IDLE_SEC + 5)
    t0 = time.time()
    try:
        data = idle.recv(10)
    except socket.timeout:
        data = None
    c.check(data == b"" and time.time() - t0 <= IDLE_SEC + 5,
            "idle client closed", repr(data))
    idle.close()
    time.sleep(0.3)


def no_fd_leak(c, d, fds0, fdl0):
    """vswd's fd count back where it started (the last client's close may
    still be in flight: wait a little)."""
    for _ in range(30):
        fds1 = d.fds()
        if fds1 == fds0:
            break
        time.sleep(0.1)
    c.check(fds1 == fds0, "no fd leak", "%d -> %d: %s" % (
        fds0, fds1, set(d.fd_list()) ^ set(fdl0)))


def files(c, path, tmp):
    """Issue 10 item 6: the control socket is 0660 from its bind; a path=
    that is a symlink to a file never changes the file; a devargs key that
    opens a file as vswd's user is refused."""
    st0 = os.lstat(path)
    c.check(stat.S_ISSOCK(st0.st_mode) and
            stat.S_IMODE(st0.st_mode) == 0o660,
            "control socket mode 0660", oct(st0.st_mode))
    target = os.path.join(tmp, "root-file")
    with open(target, "w") as f:
        f.write("x")
    os.chmod(target, 0o600)
    link = os.path.join(tmp, "link.sock")
    os.symlink(target, link)
    st, body = request(path, ("port-add ln vhost-user path=%s "
                              "owner=4242 group=4242 sock-mode=0666\n"
                              % link).encode())
    t = os.stat(target)
    c.check(st == 1 and stat.S_IMODE(t.st_mode) == 0o600 and
            t.st_uid == os.geteuid() and os.path.islink(link),
            "path= symlink to a file: refused, the file unchanged",
            "%s / %o uid %d" % (body, t.st_mode, t.st_uid))
    out = os.path.join(tmp, "pcap-out")
    st, body = request(path, ("port-add pc dpdk devargs=net_pcap0,"
                              "tx_pcap=%s\n" % out).encode())
    c.check(st == 1 and "'tx_pcap'" in body and
            "--allow-devargs-files" in body and
            not os.path.exists(out),
            "devargs tx_pcap= refused, no file written", body)


def second_instance(c, d, run_dir):
    """A second vswd on the same run directory is refused."""
    second = subprocess.run(
        [d.vswd, "--run-dir", run_dir, "--no-default-config"],
        capture_output=True, text=True, timeout=30)
    c.check(second.returncode != 0 and "already running" in
            second.stderr, "second instance refused",
            second.stderr[-300:])


def main():
    build = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="vsw-ctl-")
    run_dir = os.path.join(tmp, "run")
    d = Vswd(build, run_dir, tmp, "ctl", default_config=False,
             eal=["--no-huge", "-m", "256", "-l", "0,1"])
    path = d.ctl_path
    c = Checks()
    try:
        d.ready(30)
        time.sleep(0.2)
        fds0 = d.fds()
        fdl0 = d.fd_list()

        def alive(name):
            st, body = request(path, b"version\n")
            c.check(st == 0 and "vswd" in body, name + ": still serving",
                    body)

        malformed(c, path)
        alive("malformed")
        oversized(c, path)
        alive("oversized")
        pipelined(c, path)
        time.sleep(0.3)  # every earlier connection's EOF is seen
        limit_exact(c, path)
        alive("connection limit")
        idle = rude_clients(path)
        alive("idle client present")
        flood(c, path)
        alive("flood")
        idle_closed(c, idle)
        alive("after idle")
        no_fd_leak(c, d, fds0, fdl0)
        files(c, path, tmp)
        alive("path/devargs")
        second_instance(c, d, run_dir)
        alive("second instance")

        vswd_end(c, d)
    except Exception as e:  # noqa: BLE001 - report, then fail
        c.fail("exception: %r" % e)
    finally:
        if d.alive():
            d.stop()
        if c.failures:
            print("--- vswd log ---")
            print(d.p.tail())
    return c.finish(tmp)


if __name__ == "__main__":
    sys.exit(main())
