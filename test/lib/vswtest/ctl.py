# SPDX-License-Identifier: BSD-3-Clause
"""The control-socket client: a request is one line, a reply is a header
line "STATUS LENGTH" and LENGTH bytes of body (switch/ctl)."""
import json
import socket


class CtlError(RuntimeError):
    """A request failed (non-zero status) or its reply was cut short."""


class CtlClosed(CtlError, EOFError):
    """The server closed the connection before the reply was complete."""


def read_reply(s, timeout=10.0):
    """Read one reply from a connected socket: (status, body, bytes read
    past the reply, i.e. the start of a pipelined next one)."""
    s.settimeout(timeout)
    buf = b""
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise CtlClosed("closed before the reply header: %r" % buf)
        buf += chunk
    hdr, rest = buf.split(b"\n", 1)
    status, length = (int(x) for x in hdr.split())
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            raise CtlClosed("closed mid-reply")
        rest += chunk
    return status, rest[:length].decode(), rest[length:]


def request(path, line, timeout=10.0):
    """One request on a fresh connection: (status, body). A str gets its
    newline added; bytes are sent as they are (hostile input)."""
    if isinstance(line, str):
        line = (line + "\n").encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(line)
        status, body, _ = read_reply(s, timeout)
        return status, body


class Ctl:
    """A control socket: request() as is, ctl() for commands that must
    succeed (JSON replies decoded)."""

    def __init__(self, path):
        self.path = path

    def request(self, line, timeout=10.0):
        return request(self.path, line, timeout)

    def ctl(self, line, timeout=10.0):
        status, body = request(self.path, line, timeout)
        if status != 0:
            raise CtlError("%s: %s" % (line, body.strip()))
        return json.loads(body) if "--json" in line.split() else body
