# SPDX-License-Identifier: BSD-3-Clause
"""vsw-xconnect (bench/vsw-xconnect.c): two vhost-user ports A <-> B on one
poller; its counters come as a "stats begin ... stats end" block on
stdout, on SIGUSR1 and at exit."""
import os
import re
import signal
import time

from vswtest.proc import Proc, rm_runtime_dir


def parse_xc_block(block):
    """A stats block -> {'A': {...}, 'B': {...}, 'poller': {...}, ...}."""
    res = {}
    for line in block.splitlines():
        words = line.split()
        if len(words) < 2 or words[0] != "stats":
            continue
        kv = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        key = kv.pop("port", None) or words[1].split("=")[0]
        res[key] = {k: (int(v) if re.fullmatch(r"\d+", v) else v)
                    for k, v in kv.items()}
    return res


class Xconnect:
    """vsw-xconnect on sockets a and b (server, or client of the guest's
    server=1 sockets); info=True adds vsw.* info logs."""

    name = "vsw"

    def __init__(self, exe, a, b, log_dir, tag, queues=None, client=False,
                 info=False):
        self.prefix = "vswx%d-%s" % (os.getpid(), tag)
        argv = [exe, "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
                "--file-prefix=" + self.prefix, "--lcores", "0@0,1@1",
                "--log-level=*:notice"]
        if info:
            argv.append("--log-level=vsw.*:info")
        argv += ["--", "--a", a, "--b", b]
        if queues is not None:
            argv += ["--queues", str(queues)]
        if client:
            argv.append("--client")
        self.p = Proc("xconnect" + tag, argv, log_dir)
        self.p.wait_for(r"^xconnect ready", 0, 30)

    def snapshot(self):
        """SIGUSR1 -> the next stats block, parsed."""
        start = self.p.mark()
        self.p.p.send_signal(signal.SIGUSR1)
        m = self.p.wait_for(r"(?s)^stats begin reason=signal.*?^stats end$",
                            start, 10)
        return parse_xc_block(m.group(0))

    def snap(self):
        """The poller's counters for the benchmarks: {t, pkts, busy, deq,
        enq, free} (cycles are rdtsc over iterations that moved packets)."""
        s = self.snapshot()["poller"]
        return {"t": time.monotonic(), "pkts": s["packets"],
                "busy": s["busy_cycles"], "deq": s["deq_cycles"],
                "enq": s["enq_cycles"], "free": s["free_cycles"]}

    def wait_up(self, connects, vrings, timeout=30.0):
        """Both ports running with vrings live queues, connects reached."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            s = self.snapshot()
            if all(s[p]["running"] == 1 and s[p]["queues_live"] == vrings and
                   s[p]["connects"] >= connects for p in ("A", "B")):
                return
            time.sleep(0.2)
        raise RuntimeError("xconnect ports not up (connection %d)" %
                           connects)

    def exit_stats(self, sig=signal.SIGTERM):
        """Stop; (exit code, the final stats block parsed)."""
        start = self.p.mark()
        rc = self.stop(sig)
        m = self.p.wait_for(r"(?s)^stats begin reason=exit.*?^stats end$",
                            start, 5)
        return rc, parse_xc_block(m.group(0))

    def stop(self, sig=signal.SIGTERM):
        rc = self.p.stop(sig)
        rm_runtime_dir(self.prefix)
        return rc
