# SPDX-License-Identifier: BSD-3-Clause
"""Named checks and the one end-of-test report; the counter identities
between a guest and vswd; the end of every vswd: validators silent, a
clean exit, every mbuf back, sockets gone."""
import os
import shutil
import time

from vswtest.vswd import PMD_SWITCH_DROPS, VIRTQ_DEQ_DROPS, VIRTQ_ENQ_DROPS


class Checks:
    """Collects results: check() prints "ok"/"FAIL" per named check,
    finish() is the closing report and the exit status."""

    def __init__(self):
        self.passed = 0
        self.failures = []

    def check(self, cond, what, detail=""):
        if cond:
            self.passed += 1
            print("ok   " + what)
        else:
            self.failures.append(what)
            print("FAIL " + what + (" " + str(detail) if detail else ""))
        return cond

    def fail(self, what):
        self.check(False, what)

    def finish_timed(self, times, t0, tmp=None, keep=False, width=34):
        """finish() for the QEMU rigs: their (tag, seconds) stage times and
        the total since t0 (time.monotonic()), then each failure again."""
        for tag, dt in times:
            print("time %-*s %6.1f s" % (width, tag, dt))
        print("time %-*s %6.1f s" % (width, "total", time.monotonic() - t0))
        for f in self.failures:
            print("failed: %s" % f)
        return self.finish(tmp, keep)

    def finish(self, tmp=None, keep=False):
        """End of a test script: keep the logs on failure (or --keep),
        print the counts, return the exit status."""
        if tmp:
            if self.failures:
                print("logs kept in %s" % tmp)
            elif not keep:
                shutil.rmtree(tmp, ignore_errors=True)
        print("%d passed, %d failed" % (self.passed, len(self.failures)))
        return 1 if self.failures else 0


def identity(c, tag, guest_stats, pairs, x):
    """The per-port identities between guest and vswd counters.

    guest_stats: {guest port: testpmd port stats} (deltas of one guest
    lifetime); pairs: {guest port: vswd port name}; x: snap_delta() over
    the same window. Per port: guest TX = vswd dequeued + dequeue drops,
    vswd delivered = guest RX, vswd handed to the port = delivered +
    enqueue drops; over the switch: received + clones = handed to ports +
    tx drops + switch drops; end to end: sent = received + counted drops.
    Returns (sent, received, drops).
    """
    sent = recv = drops = 0
    sw_rx = sw_tx = 0
    for gp, name in sorted(pairs.items()):
        g, v = guest_stats[gp], x["ports"][name]
        deq_drops = sum(v[k] for k in VIRTQ_DEQ_DROPS)
        enq_drops = sum(v[k] for k in VIRTQ_ENQ_DROPS)
        grx = g["RX-packets"] + g.get("RX-errors", 0)
        print("%s: %s guest TX %d RX %d | vswd deq %d (+%d drops) rx %d, "
              "tx %d (tx_drops %d) enq %d (+%d drops)" % (
                  tag, name, g["TX-packets"], grx, v["deq_packets"],
                  deq_drops, v["rx"], v["tx"], v["tx_drops"],
                  v["enq_packets"], enq_drops))
        c.check(g["TX-packets"] == v["deq_packets"] + deq_drops,
                "%s: %s guest TX == vswd dequeued + dequeue drops" %
                (tag, name))
        c.check(g["TX-bytes"] == v["deq_bytes"],
                "%s: %s guest TX bytes == vswd dequeued bytes" % (tag, name))
        c.check(v["rx"] == v["deq_packets"],
                "%s: %s switch rx == dequeued" % (tag, name))
        c.check(v["tx"] == v["enq_packets"] and v["tx_drops"] == enq_drops,
                "%s: %s switch tx == delivered, tx_drops == enqueue drops" %
                (tag, name))
        c.check(v["enq_packets"] == grx,
                "%s: %s vswd delivered == guest RX" % (tag, name))
        c.check(v["enq_bytes"] == g["RX-bytes"],
                "%s: %s delivered bytes == guest RX bytes" % (tag, name))
        c.check(v["err_ring_broken"] == 0, "%s: %s ring intact" % (tag, name))
        sent += g["TX-packets"]
        recv += grx
        drops += deq_drops + enq_drops  # tx_drops: the same enqueue drops
        sw_rx += v["rx"]
        sw_tx += v["tx"]
    pmd = x["pmd"]
    sw_drops = sum(pmd.get(k, 0) for k in PMD_SWITCH_DROPS)
    tx_drops = sum(x["ports"][n]["tx_drops"] for n in pairs.values())
    drops += sw_drops
    # software segmentation adds packets the way a flood's clones do
    clones = (pmd.get("multi_output_clones", 0) +
              pmd.get("sw_gso_extra_segments", 0))
    c.check(sw_rx + clones == sw_tx + tx_drops + sw_drops,
            "%s: switch rx %d + clones %d == tx %d + tx drops %d + switch "
            "drops %d" % (tag, sw_rx, clones, sw_tx, tx_drops, sw_drops))
    c.check(pmd.get("rx_packets", 0) == sw_rx,
            "%s: pmd rx_packets == sum of port rx" % tag)
    c.check(sent + clones == recv + drops,
            "%s: sent %d == received %d + counted drops %d (%s)" % (
                tag, sent, recv, drops, ", ".join(
                    "%s %d" % (k, pmd[k]) for k in PMD_SWITCH_DROPS
                    if pmd.get(k))))
    return sent, recv, drops


VALIDATORS = {"copy": "copy validator", "lookup": "classifier autovalidator"}


def validators_silent(c, vswd):
    """The copy validator and the classifier autovalidator found no
    mismatch over vswd's life. In a validator build (meson sets
    VSW_VALIDATOR=1 for -Dvalidator=true) they must also have been on, so
    the zero means something."""
    want_on = os.environ.get("VSW_VALIDATOR") == "1"
    for key, (on, n) in sorted(vswd.validators().items()):
        c.check(n == 0, "%s: %d mismatches (%s)" % (
            VALIDATORS[key], n, "on" if on else "off"))
        if want_on:
            c.check(on, "%s on in a validator build" % VALIDATORS[key])


def vswd_end(c, vswd, how="shutdown"):
    """The end of every vswd in a test: validators silent, then a graceful
    stop (`shutdown` or SIGTERM) with exit code 0, every mbuf back ("mbuf
    pool: 0 in use") and its sockets unlinked."""
    validators_silent(c, vswd)
    r = vswd.shutdown(how)
    if how == "shutdown":
        c.check(r["status"] == 0, "vswctl shutdown accepted")
    c.check(r["rc"] == 0, "vswd exited with 0 after %s (rc %s, %.1f s)" %
            (how, r["rc"], r["seconds"]))
    c.check(r["in_use"] == 0, "mbuf pool back to 0 in use (%s)" %
            (r["pool"] or "no pool line"))
    left = [f for f in os.listdir(vswd.run_dir)
            if f.endswith(".sock") or f.endswith(".ctl")]
    c.check(not left, "sockets unlinked (left: %s)" % left)
    return r
