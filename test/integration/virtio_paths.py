#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The ten virtio-user paths of DPDK's loopback test plans (DTS
perf_virtio_user_loopback, loopback_multi_paths_port_restart) through ONE
vswd: for each path a dpdk-testpmd guest with two net_virtio_user ports
(vm1, vm2, cross-connected by vswd) and the path's devargs.

Per path:
  1. the guest comes up; the negotiated features (packed, in-order,
     mergeable) and the RX/TX functions its virtio driver logs are the
     path's (a path silently falling back would test something else);
  2. mixed-size traffic (64..9000 B, io forwarding), counts checked
     (every packet sent is received or a counted drop);
  3. reconnect in the middle: the guest is killed (-9) while forwarding;
  4. a new guest with the same devargs sends frames that carry their own
     proof (vswtest.payload: sequence, length, CRC-32; 38..9000 B, every
     guest-buffer-count boundary) from a pcap file and captures what comes
     back: every frame intact, once, in order, the missing ones counted
     drops (vswd_traffic.contents).
Non-mergeable paths get 9 KiB guest mbufs so a 9000 B frame fits one
buffer. A path DPDK 22.11's driver cannot run here is reported SKIP with
the reason (and counted); the test fails if any path fails.

usage: virtio_paths.py --build BUILD_DIR [--testpmd PATH] [--paths a,b]
"""
import argparse
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vswd_traffic as vt  # noqa: E402  (Case, contents)
from vswtest.checks import Checks  # noqa: E402
from vswtest.testpmd import Guest  # noqa: E402

F_MRG, F_PACKED, F_IN_ORDER = 15, 34, 35
SIMD512 = ("--force-max-simd-bitwidth=512",)

# name: (devargs, EAL extras, RX path, TX path) as the driver logs them
# ("virtio: using <RX> Rx path", "... <TX> Tx path")
PATHS = {
    "split-mrg": ("packed_vq=0,in_order=0,mrg_rxbuf=1", (),
                  "mergeable buffer", "standard"),
    "split-nomrg": ("packed_vq=0,in_order=0,mrg_rxbuf=0", (),
                    "standard", "standard"),
    "split-vec-rx": ("packed_vq=0,in_order=0,mrg_rxbuf=0,vectorized=1", (),
                     "vectorized", "standard"),
    "split-inorder-mrg": ("packed_vq=0,in_order=1,mrg_rxbuf=1", (),
                          "inorder", "inorder"),
    "split-inorder-nomrg": ("packed_vq=0,in_order=1,mrg_rxbuf=0", (),
                            "inorder", "inorder"),
    "packed-mrg": ("packed_vq=1,in_order=0,mrg_rxbuf=1", (),
                   "packed ring mergeable buffer", "packed ring standard"),
    "packed-nomrg": ("packed_vq=1,in_order=0,mrg_rxbuf=0", (),
                     "packed ring standard", "packed ring standard"),
    "packed-inorder-mrg": ("packed_vq=1,in_order=1,mrg_rxbuf=1", (),
                           "packed ring mergeable buffer",
                           "packed ring standard"),
    "packed-inorder-nomrg": ("packed_vq=1,in_order=1,mrg_rxbuf=0", (),
                             "packed ring standard", "packed ring standard"),
    "packed-vec": ("packed_vq=1,in_order=1,mrg_rxbuf=0,vectorized=1",
                   SIMD512, "packed ring vectorized",
                   "packed ring vectorized"),
}
LOG = ("--log-level=pmd.net.virtio.init:info",)


def devarg(devargs, key):
    m = re.search(r"(?:^|,)%s=(\d)" % key, devargs)
    return m is not None and m.group(1) == "1"


def skip_reason(name, devargs):
    """Why this machine's DPDK cannot run the path, or None."""
    if devarg(devargs, "vectorized") and devarg(devargs, "packed_vq"):
        flags = open("/proc/cpuinfo").read()
        if not all(f in flags.split() for f in ("avx512f", "avx512bw",
                                                "avx512vl")):
            return "packed vectorized path needs AVX-512 F/BW/VL"
    return None


def check_features(c, name, devargs):
    want = {F_PACKED: devarg(devargs, "packed_vq"),
            F_IN_ORDER: devarg(devargs, "in_order"),
            F_MRG: devarg(devargs, "mrg_rxbuf")}
    for port, p in sorted(c.vswd.ports().items()):
        got = {b: bool(p["features"] >> b & 1) for b in want}
        c.check(got == want, "%s: %s negotiated packed %d in-order %d "
                "mergeable %d (%#x)" % (name, port, got[F_PACKED],
                                        got[F_IN_ORDER], got[F_MRG],
                                        p["features"]))


def check_driver_path(c, name, g, rx, tx):
    out = g.p.buf
    for kind, want in (("Rx", rx), ("Tx", tx)):
        used = set(re.findall(r"virtio: using (.+?) %s path on port [01]\b"
                              % kind, out))
        c.check(used == {want}, "%s: the guest driver runs the %s %s path "
                "on both ports (logged: %s)" % (name, want, kind,
                                               sorted(used) or "nothing"))


def run_path(c, name, devargs, eal, rx, tx, life):
    nomrg = not devarg(devargs, "mrg_rxbuf")
    mbuf = 9344 if nomrg else 0
    c.args.devargs, c.args.eal, c.args.mbuf_size = devargs, eal, mbuf
    g = Guest(c.args.testpmd, c.gsocks, c.tmp, "%s-1" % name,
              devargs=devargs, eal=LOG + eal, extra=vt.mbuf_extra(c.args))
    c.guests.append(g)
    g.ready()
    c.vswd.wait_up(("vm1", "vm2"), 2)
    check_features(c, name, devargs)
    check_driver_path(c, name, g, rx, tx)
    gs, x = c.traffic(g, c.args.seconds)
    c.identity("%s mixed 64..9000 B" % name, gs, x)
    # reconnect in the middle: killed while forwarding
    g.cmd("start tx_first %d" % c.args.tx_first)
    time.sleep(0.3)
    g.kill()
    c.guests.remove(g)
    vt.contents(c, name, mbuf_size=mbuf or None)
    conns = {n: p["connects"] for n, p in c.vswd.ports().items()}
    c.check(all(v == 2 * life for v in conns.values()),
            "%s: each port saw %d connections: %s" % (name, 2 * life, conns))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--testpmd", default=shutil.which("dpdk-testpmd"))
    ap.add_argument("--paths", default=",".join(PATHS),
                    help="comma-separated subset of: " + " ".join(PATHS))
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--tx-first", type=int, default=8)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = ap.parse_args()
    if not args.testpmd or not os.access(args.testpmd, os.X_OK):
        print("dpdk-testpmd not found: skipped")
        return 77
    names = [n for n in args.paths.split(",") if n]
    bad = [n for n in names if n not in PATHS]
    if bad:
        ap.error("unknown paths: %s" % " ".join(bad))
    tmp = tempfile.mkdtemp(prefix="vsw-paths-")
    checks = Checks()
    args.case, args.devargs, args.mbuf_size, args.eal = "paths", "", 0, ()
    c = vt.Case(args, tmp, checks)
    print("virtio paths %s, temp dir %s" % (" ".join(names), tmp))
    ran, skipped = [], []

    def body(c):
        c.start_vswd()
        for name in names:
            devargs, eal, rx, tx = PATHS[name]
            why = skip_reason(name, devargs)
            if why:
                print("SKIP %s: %s" % (name, why))
                skipped.append(name)
                continue
            t0 = time.monotonic()
            run_path(c, name, devargs, eal, rx, tx, len(ran) + 1)
            ran.append(name)
            print("path %s: %.1f s" % (name, time.monotonic() - t0))
        c.finish()
    rc = c.run_case(body)
    print("paths: %d run, %d skipped%s" % (
        len(ran), len(skipped),
        (" (%s)" % " ".join(skipped)) if skipped else ""))
    return rc


if __name__ == "__main__":
    sys.exit(main())
