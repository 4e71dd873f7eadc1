# SPDX-License-Identifier: BSD-3-Clause
"""Child processes whose output is collected, and what /proc says about
them (fds, threads, scheduler waits)."""
import os
import re
import signal
import subprocess
import threading
import time


class Proc:
    """A child process whose merged output is collected by a thread (and
    written to LOG_DIR/NAME.log); env: its environment (default ours)."""

    def __init__(self, name, argv, log_dir, stdin=False, env=None):
        self.name = name
        self.buf = ""
        self.lock = threading.Condition()
        self.log = open(os.path.join(log_dir, name + ".log"), "w")
        self.p = subprocess.Popen(
            argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        self.t = threading.Thread(target=self._reader, daemon=True)
        self.t.start()

    def _reader(self):
        fd = self.p.stdout.fileno()
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            text = data.decode(errors="replace")
            self.log.write(text)
            self.log.flush()
            with self.lock:
                self.buf += text
                self.lock.notify_all()

    @property
    def pid(self):
        return self.p.pid

    def alive(self):
        return self.p.poll() is None

    def mark(self):
        with self.lock:
            return len(self.buf)

    def tail(self, n=3000):
        with self.lock:
            return self.buf[-n:]

    def wait_for(self, regex, since=0, timeout=20.0):
        """Wait until regex matches output after offset since."""
        rx = re.compile(regex, re.M)
        end = time.monotonic() + timeout
        with self.lock:
            while True:
                m = rx.search(self.buf, since)
                if m:
                    return m
                left = end - time.monotonic()
                if left <= 0 or self.p.poll() is not None:
                    m = rx.search(self.buf, since)
                    if m:
                        return m
                    raise RuntimeError("%s: timeout/exit waiting for %r; "
                                       "tail:\n%s" % (self.name, regex,
                                                      self.buf[-3000:]))
                self.lock.wait(min(left, 0.2))

    def send(self, line):
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()

    def cmd(self, line, timeout=20.0):
        """Send a testpmd command, return its output up to the prompt."""
        start = self.mark()
        self.send(line)
        m = self.wait_for(r"testpmd> ", start, timeout)
        return self.buf[start:m.start()]

    def stop(self, sig=signal.SIGTERM, timeout=10.0):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(5)
        self.t.join(5)
        if not self.log.closed:
            self.log.close()
        return self.p.returncode


def wait_path(path, proc, timeout=30.0):
    """Wait for a file (a socket) that proc (a Proc) creates."""
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > end or proc.p.poll() is not None:
            raise RuntimeError("%s never appeared" % path)
        time.sleep(0.05)


def rm_runtime_dir(prefix):
    """EAL makes /var/run/dpdk/PREFIX (or the XDG one) even with
    --no-shconf; remove it once empty (our process has exited)."""
    for base in ("/var/run/dpdk", os.path.join(
            os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")):
        try:
            os.rmdir(os.path.join(base, prefix))
        except OSError:
            pass


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def fd_list(pid):
    """'fd->target' for every open fd of pid (to name a leak)."""
    d = "/proc/%d/fd" % pid
    out = []
    for f in sorted(os.listdir(d), key=int):
        try:
            out.append("%s->%s" % (f, os.readlink(os.path.join(d, f))))
        except OSError:
            pass
    return out


def worker_tid(pid, name="worker-1"):
    """The EAL worker thread (a poller / testpmd's forwarding lcore)."""
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip().endswith(name):  # lcore-/rte-
                    return int(tid)
        except OSError:
            pass
    return None


def sched_wait_ns(pid, tid):
    """(ns on a CPU, ns runnable but waiting for one) of a thread
    (schedstat); (0, 0) if it is gone."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
            run, wait, _ = f.read().split()
        return int(run), int(wait)
    except (OSError, TypeError, ValueError):
        return 0, 0
