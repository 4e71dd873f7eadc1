#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""net_af_packet ports added and deleted again and again (overlay-evpn's
rare PACKET_FANOUT EINVAL on a port-add).

DPDK 22.11's net_af_packet opens one socket per queue pair at probe, puts
them in PACKET_FANOUT group (pid ^ ifindex) & 0xffff, and closes them only
in dev_stop. vswd in its own namespace with a veth pair pa -- pb:
  1. port-add e on pa / port-del e, 30 times in a row: every add works,
     vswd's fd count is back at its baseline;
  2. a port whose device does not start (queues=2 on a device of one
     queue pair): refused, and its sockets closed (fd count at baseline;
     DPDK 22.11.0-22.11.9 left them open, in pa's fanout group);
  3. then e on pa again: frames of 64 flows sent from pb all arrive
     (none taken by a socket left in the group);
  4. another process holds fanout group (vswd's pid ^ pa's ifindex) on
     pb (what a second vswd whose pid ^ ifindex is the same 16 bits does):
     port-add e on pa is refused with the group named, vswd lives, its
     fds are back; once the holder is gone the add works.
Needs root.

usage: vswd_af_packet.py --build BUILD_DIR
"""
import os
import signal
import subprocess
import sys
import time

from vswtest import netns
from vswtest.checks import Checks, vswd_end
from vswtest.vswd import Vswd

ROUNDS = 30
FLOWS = 64
# PACKET_FANOUT_HASH | (PACKET_FANOUT_FLAG_DEFRAG | _ROLLOVER) << 16, as
# DPDK 22.11's net_af_packet asks
FANOUT_FLAGS = (0x8000 | 0x1000) << 16

HOLDER = r'''
import socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 3))
s.setsockopt(263, 18, struct.pack("I", int(sys.argv[2])))  # PACKET_FANOUT
print("held", flush=True)
sys.stdin.read()
'''

SENDER = r'''
import socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for i in range(int(sys.argv[2])):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 46, i, 0, 64, 17, 0,
                     bytes([10, 9, 0, 1]), bytes([10, 9, 0, 2]))
    udp = struct.pack("!HHHH", 1024 + i, 4789, 26, 0)
    s.send(b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" +
           b"\x08\x00" + ip + udp + bytes(18))
'''


def fds_back(v, base):
    for _ in range(40):
        if v.fds() == base:
            return True
        time.sleep(0.05)
    return v.fds() == base


def run(c, ns, build, tmp, vs):
    ifindex = int(netns.in_ns(ns, "cat", "/sys/class/net/pa/ifindex"))
    os.makedirs(os.path.join(tmp, "run"))
    v = Vswd(build, os.path.join(tmp, "run"), tmp, "afp",
             default_config=False, wrap=["ip", "netns", "exec", ns],
             args=["--allow-devargs-files"])
    vs.append(v)
    v.ready()
    base = v.fds()
    add = "port-add e dpdk devargs=net_af_packet0,iface=pa"
    fails = []
    t0 = time.monotonic()
    for i in range(ROUNDS):
        st, body = v.request(add)
        if st != 0:
            fails.append("add %d: %s" % (i, body.strip()))
            break
        v.ctl("port-del e")
    c.check(not fails, "%d port-add/port-del of pa in a row (%.1f s)" % (
        ROUNDS, time.monotonic() - t0), "; ".join(fails))
    c.check(fds_back(v, base), "fds back at %d after them (%d)" % (
        base, v.fds()))

    st, body = v.request(add + ",qpairs=1 queues=2")
    c.check(st != 0 and "cannot start device" in body,
            "a port whose device does not start is refused", body.strip())
    c.check(fds_back(v, base), "its sockets closed: fds back at %d (%d)" %
            (base, v.fds()))

    v.ctl(add)
    rx0 = v.port("e")["rx"]
    netns.in_ns(ns, sys.executable, "-c", SENDER, "pb", str(FLOWS))
    got = 0
    for _ in range(40):
        got = v.port("e")["rx"] - rx0
        if got >= FLOWS:
            break
        time.sleep(0.05)
    c.check(got == FLOWS, "frames of %d flows from pb all received on e "
            "(%d)" % (FLOWS, got))
    v.ctl("port-del e")

    group = (v.p.pid ^ ifindex) & 0xffff
    h = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c",
                          HOLDER, "pb", str(group | FANOUT_FLAGS)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    try:
        c.check(h.stdout.readline().strip() == "held",
                "fanout group 0x%04x held on pb by another process" % group)
        st, body = v.request(add)
        c.check(st != 0 and ("0x%04x" % group) in body,
                "port-add on pa refused, naming group 0x%04x" % group,
                body.strip())
        c.check(v.request("version")[0] == 0, "vswd still answers")
        c.check(fds_back(v, base), "fds back at %d (%d)" % (base, v.fds()))
    finally:
        h.stdin.close()
        h.wait(5)
    st, body = v.request(add)
    c.check(st == 0, "port-add on pa once the group is free", body.strip())
    vswd_end(c, v)


def main():
    opened = netns.opening("vsw-afp-")
    if opened is None:
        return netns.SKIP
    args, tmp = opened
    checks = Checks()
    rig = netns.Rig()
    ns = "vswafp%d" % os.getpid()
    vs = []
    try:
        rig.ns_add(ns)
        rig.veth("pa", "pb", a_ns=ns, b_ns=ns)
        rig.nic("pa", ns)
        rig.nic("pb", ns)
        run(checks, ns, args.build, tmp, vs)
    except Exception as e:  # a failed step: report, keep the logs
        checks.fail("vswd-af-packet: %s" % e)
    finally:
        for v in vs:
            if v.alive():
                v.stop(signal.SIGKILL)
        rig.down()
    return checks.finish(tmp, args.keep)


if __name__ == "__main__":
    sys.exit(main())
