#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run inside a network namespace (ip netns exec NS python3 netns_tool.py
...) by vswd_pvp.py; needs no tool beyond Python and iproute2:

  offload-off IFACE     tx checksum, TSO, GSO, GRO off (legacy ethtool
                        ioctls): an af_packet port gets whole, checksummed
                        frames, as from a NIC
  ping ADDR COUNT SIZE INTERVAL
                        ICMP echo (raw socket) with SIZE data bytes every
                        INTERVAL s; print "SENT RECEIVED RTT_US..." (one
                        round-trip time per reply, microseconds)
  tcp-recv ADDR PORT    accept one connection, print "BYTES MD5"
  tcp-send ADDR PORT N  send N bytes of a fixed pseudo-random stream,
                        print "BYTES MD5"
"""
import ctypes
import fcntl
import hashlib
import socket
import os
import struct
import sys
import time

SIOCETHTOOL = 0x8946
ETHTOOL_SET = {"tx": 0x17, "tso": 0x1f, "gso": 0x24, "gro": 0x2c}


def offload_off(ifname):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for cmd in ETHTOOL_SET.values():
            ev = ctypes.create_string_buffer(struct.pack("II", cmd, 0))
            ifr = struct.pack("16sP", ifname.encode(),
                              ctypes.addressof(ev)).ljust(40, b"\0")
            fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifr)


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def ping(addr, count, size, interval):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ident, got, rtts = os.getpid() & 0xffff, 0, []
    payload = bytes((i * 7) & 0xff for i in range(size))
    for seq in range(count):
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        pkt = struct.pack("!BBHHH", 8, 0, csum(hdr + payload), ident,
                          seq) + payload
        t0 = time.monotonic()
        s.sendto(pkt, (addr, 0))
        end = t0 + 2.0
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            s.settimeout(left)
            try:
                r = s.recv(65535)
            except socket.timeout:
                break
            ihl = (r[0] & 15) * 4
            typ, _, _, rid, rseq = struct.unpack("!BBHHH", r[ihl:ihl + 8])
            if typ == 0 and rid == ident and rseq == seq:
                if r[ihl + 8:] == payload:
                    got += 1
                    rtts.append(int((time.monotonic() - t0) * 1e6))
                break
        time.sleep(max(0.0, t0 + interval - time.monotonic()))
    print(count, got, *rtts, flush=True)


def tcp_recv(addr, port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(1)
    s.settimeout(60)
    print("listening", flush=True)
    c, _ = s.accept()
    c.settimeout(60)
    h, n = hashlib.md5(), 0
    while True:
        b = c.recv(65536)
        if not b:
            break
        h.update(b)
        n += len(b)
    c.close()
    print(n, h.hexdigest(), flush=True)


def tcp_send(addr, port, n):
    s = socket.create_connection((addr, port), timeout=20)
    s.settimeout(60)
    h, left, seed = hashlib.md5(), n, b"vsw"
    while left:
        seed = hashlib.sha512(seed).digest()
        b = (seed * 512)[:min(left, 32768)]
        s.sendall(b)
        h.update(b)
        left -= len(b)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)  # the peer's close: everything arrived
    s.close()
    print(n, h.hexdigest(), flush=True)


def main():
    cmd = sys.argv[1]
    if cmd == "offload-off":
        offload_off(sys.argv[2])
    elif cmd == "ping":
        ping(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
             float(sys.argv[5]))
    elif cmd == "tcp-recv":
        tcp_recv(sys.argv[2], int(sys.argv[3]))
    elif cmd == "tcp-send":
        tcp_send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
