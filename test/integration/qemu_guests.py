#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration test: two Linux guests (QEMU, TCG, Debian's 6.1 kernel, see
vswtest/qemu.py) switched by vswd with the `normal` rule.

One pair of boots serves every scenario: each guest has three NICs, one per
vhost-user mode and one with packed virtqueues, on separate subnets and on
six vswd ports in one L2 domain:

    guest a  nic0 169.254.1.1 --- a-srv  vswd  b-srv --- nic0 169.254.1.2  guest b
             nic1 169.254.2.1 --- a-cli        b-cli --- nic1 169.254.2.2
             nic2 169.254.3.1 --- a-pk         b-pk  --- nic2 169.254.3.2

    *-srv  vswd is the vhost-user server (QEMU connects)
    *-cli  vswd is the client (QEMU owns the socket: server=on,wait=off)
    *-pk   server mode, QEMU's virtio-net-pci packed=on: port-show must say
           packed rings there (split on the others)

Scenarios, per mode ("packed" the third; the subnet picks the NIC pair):
    ping   a -> b and b -> a, ARP resolved through the switch's flood
    jumbo  8000-byte pings at MTU 9000 (8042-byte frames)
    tcp    --mib MiB of random data a -> b, then b -> a (busybox nc),
           md5 of what was received == md5 of what was sent

Around each scenario the counters of all four ports settle and are read:
per port, guest tx_packets/tx_bytes (/sys/class/net/IF/statistics) ==
vswd deq_packets (+ dequeue drops)/deq_bytes, vswd enq_packets/enq_bytes ==
guest rx_packets/rx_bytes, and over the switch sent = received + counted
drops (vswtest.checks.identity). Floods reach the NICs of the other pair:
the per-port identities hold for them too. Neighbours are pinned after the
first ping, so no ARP refresh lands between two reads.

vswd runs at nice 19: its PMD busy-polls a core, and the guests' TCG vCPU
threads must win that core when they have work (the PMD still runs
whenever a guest waits for a packet).

--case mq-subset: 1-vCPU guests on queues=2 ports; the guest enables one
pair of two: the ports come up, pings pass (issue 12's reproduction).

--case mq (CI: qemu-mq): guest a has 1 vCPU, b 2; each has a NIC on a
queues=1, a queues=2 (packed=on: packed rings) and a queues=4 port (one
boot, several scenarios; mq-packed: 8000-byte pings and TCP md5 both ways
over the packed pair, b sending from both vCPUs).
port-show's per-pair state (enabled, live, why, tx_to) against what the
guest uses (min(pairs, vCPUs), then `ethtool -L`), and per pair the
guest's `ethtool -S` queue counters == vswd's, no send counted as not
ready, disabled pairs carry nothing; b's second vCPU sends on its pair 1,
which vswd re-steers into a's only pair; then `ethtool -L` up and down on
both guests during a TCP transfer (md5), and up again.

--case restart (CI: qemu-restart): QEMU is the vhost-user server, vswd's
client ports are kept in its --state file; vswd is killed with SIGKILL
during a TCP transfer and a ping and started again: it reconnects, the
transfer's md5 matches, the new vswd's counters add up.

mq and restart run vswd with the PMD idle back-off (--pmd-sleep, default
200 us) as well as nice 19: TCG guests with 2 vCPUs need both cores.

Exit 77 (skipped) when qemu-system-x86_64 is not installed.

--case offload (issue 12, part 2): nic0 of both guests negotiates CSUM and
TSO (frames up to 64 KiB cross vswd whole), guest b's nic1 has every
offload off in QEMU (vswd segments and checksums for it); TCP both ways
with md5 on each pair, and vswd's counters say which path was taken.

usage: qemu_guests.py --build BUILD_DIR [--case default|mq-subset|offload]
                      [--mib N] [--vswd-nice N] [--keep]
"""
import argparse
import os
import re
import signal
import sys
import tempfile
import time

from vswtest import qemu as qemu_guest
from vswtest.checks import Checks
from vswtest.qemu import Nic
from vswtest.vswd import snap_delta
from qemu_guests_mq import case_mq
from qemu_guests_rig import MAC, MODES, NAMES, SUBNET, VSWD_NICE, Rig, \
    pin_neighbours, ping, tcp, tcp_during


def case_default(rig, args):
    lines = ["# qemu-guests: two server-mode and two client-mode ports, "
             "two server-mode ports for packed rings"]
    for n in NAMES:
        lines.append("port-add %s-srv vhost-user" % n)
    for n in NAMES:
        lines.append("port-add %s-cli vhost-user-client path=%s" % (
            n, os.path.join(rig.tmp, "%s-cli.sock" % n)))
    for n in NAMES:
        lines.append("port-add %s-pk vhost-user" % n)
    lines.append("flow-add priority=0,actions=normal")
    rig.start_vswd(lines)
    for gi, n in enumerate(NAMES):
        rig.ports[(gi, 0)] = "%s-srv" % n
        rig.ports[(gi, 1)] = "%s-cli" % n
        rig.ports[(gi, 2)] = "%s-pk" % n

    def nics(gi):
        return [Nic(os.path.join(rig.run, "%s-srv.sock" % NAMES[gi]),
                    MAC % (gi + 1, 0), "%s.%d/24" % (SUBNET["server"], gi + 1),
                    9000),
                Nic(os.path.join(rig.tmp, "%s-cli.sock" % NAMES[gi]),
                    MAC % (gi + 1, 1), "%s.%d/24" % (SUBNET["client"], gi + 1),
                    9000, server=True),
                Nic(os.path.join(rig.run, "%s-pk.sock" % NAMES[gi]),
                    MAC % (gi + 1, 2), "%s.%d/24" % (SUBNET["packed"], gi + 1),
                    9000, dev_opts="packed=on")]
    rig.boot(nics)
    rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=60)
    for name in rig.ports.values():
        rings = rig.vswd.port(name).get("rings")
        want = "packed" if name.endswith("-pk") else "split"
        rig.c.check(rings == want, "%s: port-show says %s rings (%s)" % (
            name, want, rings))
    a, b = rig.guests
    for mode in MODES:
        ni = MODES.index(mode)
        if mode not in args.modes:
            continue

        def do_ping():
            ping(a, b.nics[ni].ip, 10, tag=mode + "-ping")
            ping(b, a.nics[ni].ip, 5, tag=mode + "-ping")
            pin_neighbours(rig, mode)
        rig.scenario(mode + "-ping", do_ping)
        rig.scenario(mode + "-jumbo", lambda: (
            ping(a, b.nics[ni].ip, 10, 8000, mode + "-jumbo"),
            ping(b, a.nics[ni].ip, 10, 8000, mode + "-jumbo")))
        rig.scenario(mode + "-tcp", lambda: (
            tcp(rig, a, b, ni, args.mib, mode + "-tcp"),
            tcp(rig, b, a, ni, args.mib, mode + "-tcp")))


def case_mq_subset(rig, args):
    """Issue 12 part 1: a 1-vCPU guest enables one of two queue pairs."""
    rig.start_vswd(["# mq-subset: queues=2 ports, 1-vCPU guests"] +
                   ["port-add %s-mq vhost-user queues=2" % n for n in NAMES] +
                   ["flow-add priority=0,actions=normal"])
    for gi, n in enumerate(NAMES):
        rig.ports[(gi, 0)] = "%s-mq" % n
    rig.boot(lambda gi: [Nic(os.path.join(rig.run, "%s-mq.sock" % NAMES[gi]),
                             MAC % (gi + 1, 0), "169.254.3.%d/24" % (gi + 1),
                             1500, queues=2)], cpus=1)
    time.sleep(3)
    a, b = rig.guests
    print(rig.vswd.ctl("port-show"))
    for g in rig.guests:
        print("%s: %s" % (g.name, g.run("cat /sys/class/net/eth0/"
                                        "{operstate,carrier} 2>&1; ls "
                                        "/sys/class/net/eth0/queues")[1]))
    try:
        rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=20)
        rig.c.check(True, "mq-subset: ports up with one pair of two enabled")
    except RuntimeError as e:
        rig.c.fail("mq-subset: %s" % e)
    rig.scenario("mq-subset-ping", lambda: ping(a, b.nics[0].ip, 5,
                                                tag="mq-subset-ping"))
    print(rig.vswd.ctl("port-show"))


# ---- issue 12 part 2: checksum/TSO offloads ----

# QEMU's device options that take every offload away from one NIC
NO_OFFLOADS = ("csum=off,guest_csum=off,host_tso4=off,host_tso6=off,"
               "guest_tso4=off,guest_tso6=off")


def case_offload(rig, args):
    """Both guests negotiate the offloads on nic0 (TSO frames cross vswd
    whole); guest b's nic1 has none (QEMU device options), so vswd segments
    and checksums what a's nic1 sends it. TCP both ways with md5 on each
    pair; vswd's counters show which path the frames took."""
    rig.start_vswd(["# offload: nic0 both offloading, b's nic1 not"] +
                   ["port-add %s%d vhost-user" % (n, i) for i in (0, 1)
                    for n in NAMES] + ["flow-add priority=0,actions=normal"])
    for gi, n in enumerate(NAMES):
        for ni in (0, 1):
            rig.ports[(gi, ni)] = "%s%d" % (n, ni)

    def nics(gi):
        return [Nic(os.path.join(rig.run, "%s%d.sock" % (NAMES[gi], ni)),
                    MAC % (gi + 1, ni), "169.254.%d.%d/24" % (4 + ni, gi + 1),
                    1500, dev_opts=NO_OFFLOADS if (gi, ni) == (1, 1) else "")
                for ni in (0, 1)]
    rig.boot(nics)
    rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=60)
    a, b = rig.guests
    feats = {n: p["features"] for n, p in rig.vswd.ports().items()}
    gso_bits = (1 << 7) | (1 << 11)  # GUEST_TSO4, HOST_TSO4
    for n, f in sorted(feats.items()):
        print("offload: %s features 0x%x" % (n, f))
    rig.c.check(all(feats[n] & gso_bits == gso_bits for n in
                    ("a0", "b0", "a1")) and feats["b1"] & gso_bits == 0,
                "offload: TSO negotiated on a0, b0, a1, not on b1")

    def ping_pin():
        for ni in (0, 1):
            ping(a, b.nics[ni].ip, 3, tag="offload-ping")
            ping(b, a.nics[ni].ip, 3, tag="offload-ping")
            pin_neighbours(rig, MODES[ni])
    rig.scenario("offload-ping", ping_pin)
    for ni, tag in ((0, "offload-tso-through"), (1, "offload-sw-gso")):
        v0 = rig.vswd.snapshot()
        rig.scenario(tag, lambda: (tcp(rig, a, b, ni, args.mib, tag),
                                   tcp(rig, b, a, ni, args.mib, tag)))
        x = snap_delta(rig.vswd.snapshot(), v0)
        p, pmd = x["ports"], x["pmd"]
        print("%s: a%d deq_gso %d csum %d | b%d enq_gso %d | b%d deq_gso %d"
              " | sw_gso %d (+%d segments) sw_csum %d drop_offload %d" % (
                  tag, ni, p["a%d" % ni]["deq_gso_packets"],
                  p["a%d" % ni]["deq_csum_partial"], ni,
                  p["b%d" % ni]["enq_gso_packets"], ni,
                  p["b%d" % ni]["deq_gso_packets"],
                  pmd.get("sw_gso_packets", 0),
                  pmd.get("sw_gso_extra_segments", 0),
                  pmd.get("sw_csum_packets", 0),
                  pmd.get("drop_offload", 0)))
        rig.c.check(p["a%d" % ni]["deq_gso_packets"] > 0,
                    "%s: a sent TSO frames" % tag)
        rig.c.check(pmd.get("drop_offload", 0) == 0,
                    "%s: no offload drops" % tag)
        if ni == 0:
            rig.c.check(p["b0"]["enq_gso_packets"] > 0 and
                        p["a0"]["enq_gso_packets"] > 0,
                        "%s: both receivers got GSO frames whole" % tag)
            rig.c.check(pmd.get("sw_gso_packets", 0) == 0,
                        "%s: no software segmentation" % tag)
        else:
            rig.c.check(p["b1"]["enq_gso_packets"] == 0 and
                        p["b1"]["deq_gso_packets"] == 0,
                        "%s: b1 neither got nor sent GSO frames" % tag)
            rig.c.check(pmd.get("sw_gso_packets", 0) > 0,
                        "%s: vswd segmented for b1" % tag)




# ---- vswd killed -9 and restarted from its state (issue 12 part 3) ----

def case_restart(rig, args):
    """QEMU is the vhost-user server, vswd's ports are clients kept in its
    --state file: vswd is killed with SIGKILL in the middle of a TCP
    transfer (and a ping) and started again with --state and a --config
    without the ports (they come back from the state); it reconnects, the transfer completes with the right md5,
    and the counters of the new vswd add up against the guests'."""
    state = os.path.join(rig.tmp, "vswd.state")
    lines = ["# restart: client-mode ports, kept in the state file",
             "pmd-sleep-set %d" % args.pmd_sleep]
    for n in NAMES:
        lines.append("port-add %s-cli vhost-user-client path=%s" % (
            n, os.path.join(rig.tmp, "%s-cli.sock" % n)))
    lines.append("flow-add priority=0,actions=normal")
    rig.start_vswd(lines, "first", ["--state", state])
    for gi, n in enumerate(NAMES):
        rig.ports[(gi, 0)] = "%s-cli" % n
    rig.boot(lambda gi: [Nic(os.path.join(rig.tmp, "%s-cli.sock" % NAMES[gi]),
                             MAC % (gi + 1, 1), "%s.%d/24" % (
                                 SUBNET["client"], gi + 1), 1500,
                             server=True)])
    rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=60)
    a, b = rig.guests

    def first():
        ping(a, b.nics[0].ip, 5, tag="restart")
        ping(b, a.nics[0].ip, 5, tag="restart")
        pin_neighbours(rig, "server")  # NIC 0 of each guest
    rig.scenario("restart-before", first)
    old = rig.vswd.p.p.pid

    def kill_and_restart():
        b.check("ping -c 40 -i 0.2 -W 1 %s >/tmp/ping.out 2>&1 &" %
                a.nics[0].ip)
        time.sleep(1.5)
        rig.vswd.stop(signal.SIGKILL)
        print("restart: vswd %d killed (SIGKILL)" % old)
        t0 = time.monotonic()
        # a config without the ports: they come back from the state file
        rig.start_vswd(["# restart: everything from the state file"],
                       "second", ["--state", state])
        rig.vswd.wait_up(list(rig.ports.values()), 2, timeout=60)
        print("restart: new vswd %d serving both ports %.1f s later" % (
            rig.vswd.p.p.pid, time.monotonic() - t0))
        rig.times.append(("restart (kill to up)", time.monotonic() - t0))
    try:
        tcp_during(rig, 0, args.mib, kill_and_restart, "restart")
    except Exception as e:  # noqa: BLE001 -- reported, the rest still runs
        rig.c.fail("restart: %s" % e)
    out = b.check("n=0; while pidof ping >/dev/null; do usleep 100000; "
                  "n=$((n+1)); [ $n -lt 200 ] || break; done; "
                  "cat /tmp/ping.out", 40)
    m = re.search(r"(\d+) packets transmitted, (\d+) packets received", out)
    print("restart: ping across the restart: %s" % (
        "%s of %s answered" % (m.group(2), m.group(1)) if m else out[-200:]))
    rig.c.check(rig.vswd.p.p.pid != old and
                "starting from state file" in rig.vswd.p.buf,
                "restart: the new vswd started from its state file")
    ps = rig.vswd.ports()
    rig.c.check(sorted(ps) == sorted(rig.ports.values()) and
                all(p["connects"] == 1 for p in ps.values()),
                "restart: both ports back from the state, reconnected once")
    # the new vswd's counters against the guests', both ways
    rig.scenario("restart-after", lambda: (
        ping(a, b.nics[0].ip, 5, tag="restart-after"),
        ping(b, a.nics[0].ip, 5, tag="restart-after"),
        tcp(rig, b, a, 0, max(1, args.mib // 2), "restart-after")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--case", choices=("default", "mq-subset", "offload",
                                       "mq", "restart"),
                    default="default")
    ap.add_argument("--mq-mib", type=int, default=12,
                    help="MiB of the TCP transfer across ethtool -L")
    ap.add_argument("--mq-packed-mib", type=int, default=4,
                    help="mq: MiB each way over the packed queues=2 NICs")
    ap.add_argument("--pmd-sleep", type=int, default=200,
                    help="mq: vswd's PMD idle back-off (pmd-sleep-set, us)")
    ap.add_argument("--modes", default="server,client,packed",
                    help="vhost-user modes of vswd's ports to test")
    ap.add_argument("--mib", type=int, default=8,
                    help="MiB per TCP transfer")
    ap.add_argument("--vswd-nice", type=int, default=VSWD_NICE,
                    help="nice value of vswd (0: compete as an equal)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--trace-vhost", action="store_true",
                    help="log the vhost-user messages (vswd's log)")
    args = ap.parse_args()
    args.modes = args.modes.split(",")
    sys.stdout.reconfigure(line_buffering=True)  # progress in the log
    if qemu_guest.qemu_binary() is None:
        print("qemu-system-x86_64 not installed: skipped")
        return 77
    qemu_guest.exit_on_sigterm()
    tmp = tempfile.mkdtemp(prefix="vsw-qemu-")
    c = Checks()
    print("case %s, temp dir %s" % (args.case, tmp))
    rig = Rig(args, tmp, c)
    t0 = time.monotonic()
    try:
        if args.case == "mq-subset":
            case_mq_subset(rig, args)
        elif args.case == "offload":
            case_offload(rig, args)
        elif args.case == "mq":
            case_mq(rig, args)
        elif args.case == "restart":
            case_restart(rig, args)
        else:
            case_default(rig, args)
        rig.stop()
    except Exception as e:  # noqa: BLE001 -- report, clean up, fail
        c.fail("ERROR: %s" % e)
    finally:
        rig.kill()
    return c.finish_timed(rig.times, t0, tmp, args.keep, width=22)


if __name__ == "__main__":
    sys.exit(main())
