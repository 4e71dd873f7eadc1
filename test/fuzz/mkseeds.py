#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpora in test/fuzz/corpus/<target>/ (small, meaningful
inputs, one per file, named for what they show). Re-run after changing an
input format; the files are checked in so CI needs no Python for them."""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def out(target, name, data):
    d = os.path.join(HERE, 'corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


# --- control lines: byte 0 = word limit for the direct split call ---------
CTL = {
    'echo': b'echo hello world',
    'echo-json': b'echo --json a "b c" \'d\'',
    'set': b'set key value',
    'set-empty-key-json': b'set "" v --json',
    'help': b'help',
    'help-json': b'--json help',
    'fail': b'fail x',
    'unknown': b'frobnicate now',
    'usage': b'set onlyone',
    'comment': b'# a comment',
    'crlf': b'port-show vm1\r\n',
    'quotes': b'echo "a\\"b" \'c\\d\' e\\ f',
    'unterminated': b'echo "open',
    'tab': b'echo\ta\tb',
    'many-words': b'echo ' + b' '.join(b'w%d' % i for i in range(70)),
}
for name, line in CTL.items():
    out('ctl', name, bytes([64]) + line)
out('ctl', 'limit-2', bytes([2]) + b'echo a b c')

# --- rules: byte 0 = flags (bit0 match-only, bit1 no names, errlen<<2) -----
RULES = [
    ('ovs-example', 0, 'priority=100,in_port=vm1,tcp,nw_dst=10.0.0.0/8,'
        'tp_dst=80,actions=output:2'),
    ('l2', 0, 'dl_src=00:11:22:33:44:55/ff:ff:ff:00:00:00,'
        'dl_dst=01:00:5e:00:00:01,dl_vlan=10,actions=strip_vlan,normal'),
    ('untagged', 0, 'dl_vlan=0xffff,actions=push_vlan:100,output:vm2'),
    ('ipv6', 0, 'ipv6,nw_src=2001:db8::/32,nw_dst=fe80::1/ffff:ffff::,'
        'nw_tos=8,actions=flood'),
    ('udp6-mask', 0, 'udp6,tp_src=53/0xff00,tp_dst=0x35,actions=output:1,'
        'output:uplink'),
    ('arp', 0, 'arp,nw_proto=1,nw_src=192.168.0.1,actions=normal'),
    ('dl_type', 0, 'dl_type=0x88cc,priority=0,actions=drop'),
    ('empty-actions', 0, 'in_port=3 actions='),
    ('match-only', 1, 'tcp,tp_dst=22,in_port=br-int'),
    ('netmask', 0, 'ip,nw_src=10.1.0.0/255.255.0.0,actions=output:65535'),
    ('numbers-only', 2, 'in_port=7,icmp,actions=output:8'),
    ('bad-order', 0, 'actions=output:1,strip_vlan'),
    ('bad-field', 0, 'tp_dst=80,actions=drop'),
    ('bad-port', 0, 'in_port=nosuch,actions=drop'),
    ('twice', 0, 'ip,ip,actions=drop'),
    ('sctp', 0, 'sctp,nw_tos=252,tp_src=1/0,actions=output:2'),
]
for name, flags, text in RULES:
    out('rule_parse', name, bytes([flags | 63 << 2]) + text.encode())
out('rule_parse', 'short-errbuf', bytes([2 << 2]) + b'nw_src=1.2.3.4,actions=')


# --- packets: in_port(2), nseg, cuts(6), extra; then the frame -------------
def eth(dst, src, etype, payload):
    return dst + src + struct.pack('>H', etype) + payload


MAC1 = bytes.fromhex('001122334455')
MAC2 = bytes.fromhex('66778899aabb')


def ipv4(proto, payload, frag=0, opts=b''):
    ihl = 5 + len(opts) // 4
    tot = ihl * 4 + len(payload)
    return struct.pack('>BBHHHBBH4s4s', 0x40 | ihl, 0x2e, tot, 1, frag, 64,
                       proto, 0, bytes([10, 0, 0, 1]),
                       bytes([10, 0, 0, 2])) + opts + payload


def ipv6(nxt, payload):
    return struct.pack('>IHBB16s16s', 0x60000000 | 0xb8 << 20, len(payload),
                       nxt, 64, bytes(range(16)), bytes(range(16, 32))) + payload


TCP = struct.pack('>HHIIBBHHH', 1234, 80, 1, 0, 0x50, 0x12, 1024, 0, 0)
UDP = struct.pack('>HHHH', 53, 5353, 12, 0) + b'data'
SCTP = struct.pack('>HHII', 2905, 2905, 0, 0)
ICMP = bytes([8, 0, 0, 0]) + b'ping'
ICMP6 = bytes([128, 0, 0, 0])
ARP = struct.pack('>HHBBH6s4s6s4s', 1, 0x0800, 6, 4, 1, MAC1,
                  bytes([10, 0, 0, 1]), bytes(6), bytes([10, 0, 0, 2]))
VLAN = struct.pack('>HH', 0x2064, 0x0800)
PKTS = {
    'tcp4': eth(MAC1, MAC2, 0x0800, ipv4(6, TCP)),
    'udp4-pad': eth(MAC1, MAC2, 0x0800, ipv4(17, UDP)) + bytes(16),
    'icmp4-opts': eth(MAC1, MAC2, 0x0800,
                      ipv4(1, ICMP, opts=bytes([1, 1, 1, 0]))),
    'frag4-later': eth(MAC1, MAC2, 0x0800, ipv4(6, TCP, frag=0x2010)),
    'sctp4-vlan': eth(MAC1, MAC2, 0x8100,
                      struct.pack('>H', 0x0064) + struct.pack('>H', 0x0800)
                      + ipv4(132, SCTP)),
    'qinq-udp4': eth(MAC1, MAC2, 0x88a8, struct.pack('>HH', 0x0005, 0x8100)
                     + VLAN + ipv4(17, UDP)),
    'tcp6': eth(MAC1, MAC2, 0x86dd, ipv6(6, TCP)),
    'udp6-ext': eth(MAC1, MAC2, 0x86dd, ipv6(
        0, bytes([43, 0]) + bytes(6) + bytes([44, 0]) + bytes(6)
        + bytes([17, 0, 0, 0, 0, 0, 0, 1]) + UDP)),
    'icmp6': eth(MAC1, MAC2, 0x86dd, ipv6(58, ICMP6)),
    'arp': eth(b'\xff' * 6, MAC1, 0x0806, ARP),
    'short-eth': MAC1 + MAC2,
    'truncated-tcp4': eth(MAC1, MAC2, 0x0800, ipv4(6, TCP))[:40],
}
for i, (name, frame) in enumerate(PKTS.items()):
    hdr = struct.pack('<H', i + 1) + bytes([i % 4, 1, 3, 5, 7, 11, 13, i * 5])
    out('flow_extract', name, hdr + frame)


# --- virtqueues (layout: fuzz_virtq.h) --------------------------------------
def region(how, pages, trim=0, gpa=0):
    pg = pages - 1 if pages <= 8 else 0xc0 | (pages - 1)
    return struct.pack('<BBHQ', how, pg, trim, gpa)


def addr(region_idx, off, align):
    """aligned offset inside a region (sel < 0x80)"""
    assert off % align == 0
    return struct.pack('<BI', region_idx, off // align)


def raw_off(region_idx, off):
    """any offset around a region (0x80 <= sel < 0xf0)"""
    return struct.pack('<BI', 0x80 + region_idx, off)


def qhdr(regions, log2, mode, last_avail=0, last_used=0, max_pkt=0,
         desc=None, avail=None, used=None):
    return (bytes([len(regions) - 1]) + b''.join(regions)
            + bytes([log2, mode]) + struct.pack('<HHH', last_avail, last_used,
                                                max_pkt)
            + desc + avail + used)


def op_chain(base, bufs, indirect=None):
    """bufs: [(region, offset, len)]; indirect: (region, offset) or None"""
    b = (len(bufs) - 1) | (0x80 if indirect else 0)
    s = bytes([3, b]) + struct.pack('<H', base)
    if indirect:
        s += addr(indirect[0], indirect[1], 16)
    for r, off, ln in bufs:
        s += raw_off(r, off) + struct.pack('<H', ln - 1)
    return s


def op_desc(idx, r, off, ln, flags, nxt):
    return bytes([0]) + struct.pack('<H', idx) + raw_off(r, off) + \
        struct.pack('<IHH', ln, flags, nxt)


def op_avail(pos, head):
    return bytes([1]) + struct.pack('<HH', pos, head)


def op_avail_move(delta):
    return bytes([2]) + struct.pack('<H', delta)


def op_flags(flags, used_event):
    return bytes([6]) + struct.pack('<HH', flags, used_event)


def op_burst(n):
    return bytes([7 | (n - 1) << 3])


V1, MRG, IND, EVT, NODEQALIGN, COALIGN, NOTIFY, SMALL = (
    0x08, 0x01, 0x02, 0x04, 0x10, 0x20, 0x40, 0x80)
# region 0: 4 pages for rings at 0x100000; region 1: 16 pages right after it
REGS = [region(0, 4), region(1, 16)]
RINGS = dict(desc=addr(0, 0, 16), avail=addr(0, 4096, 2),
             used=addr(0, 8192, 4))


def vq(log2=8, mode=V1, regs=REGS, **kw):
    args = dict(RINGS)
    args.update(kw)
    return qhdr(regs, log2, mode, **args)


W = 2  # VRING_DESC_F_WRITE


def pkts(*lens):
    # below 2048 as is; longer ones need the top bit (fuzz_virtq_enqueue.c)
    return b''.join(struct.pack('<HB', ln if ln < 2048 else 0x8000 | ln, 255)
                    for ln in lens)


for tgt, dirflag in (('virtq_dequeue', 0), ('virtq_enqueue', W)):
    def burst(n, *lens):
        if tgt == 'virtq_enqueue':
            return op_burst(n) + pkts(*(lens or (64,) * n))
        return op_burst(n)
    s = {}
    s['one-chain'] = vq() + op_chain(0, [(1, 0x100, 1514)]) + burst(1)
    s['split-header'] = vq() + op_chain(0, [(1, 0, 4), (1, 100, 8),
                                            (1, 200, 600)]) + burst(1)
    s['indirect'] = vq(mode=V1 | IND) + op_chain(
        5, [(1, 0x1000, 12), (1, 0x2000, 1500)], indirect=(0, 12288)) + \
        burst(1)
    s['span-regions'] = vq() + op_chain(3, [(0, 16384 - 100, 2000)]) + burst(1)
    s['many'] = vq(mode=V1 | EVT | NOTIFY) + b''.join(
        op_chain(i * 2, [(1, i * 2048, 1024)]) for i in range(20)) + \
        op_flags(0, 5) + burst(32, *range(60, 60 + 32 * 40, 40))
    s['mrg-big'] = vq(mode=MRG | NOTIFY) + b''.join(
        op_chain(i, [(1, i * 4096, 4000)]) for i in range(8)) + \
        burst(2, 9000, 60)
    s['legacy-hdr'] = vq(mode=0) + op_chain(0, [(1, 0, 10), (1, 64, 64)]) + \
        burst(1)
    s['wrap-idx'] = vq(log2=4, last_avail=0xfffe, last_used=0xfffe) + \
        b''.join(op_chain(i, [(1, i * 256, 200)]) for i in range(4)) + \
        burst(4)
    s['small-ring-max'] = vq(log2=0, max_pkt=100) + \
        op_chain(0, [(1, 0, 300)]) + burst(1) + \
        op_chain(0, [(1, 0, 50)]) + burst(1)
    s['small-pool'] = vq(mode=V1 | SMALL | NODEQALIGN | COALIGN) + b''.join(
        op_chain(i, [(1, 0, 4096), (1, 4096, 4096), (1, 8192, 4096)])
        for i in range(8)) + burst(8, *([9000] * 8))
    # hostile
    s['loop'] = vq() + op_desc(0, 1, 0, 100, 1 | dirflag, 1) + \
        op_desc(1, 1, 200, 100, 1 | dirflag, 0) + op_avail(0, 0) + \
        op_avail_move(1) + burst(1)
    s['head-out-of-range'] = vq() + op_chain(0, [(1, 0, 64)]) + \
        op_avail(1, 300) + op_avail_move(1) + burst(2)
    s['avail-jump'] = vq() + op_avail_move(1000) + burst(1)
    s['zero-len'] = vq() + op_desc(0, 1, 0, 0, dirflag, 0) + \
        op_avail(0, 0) + op_avail_move(1) + burst(1)
    s['wrong-dir'] = vq() + op_desc(0, 1, 0, 100, W - dirflag, 0) + \
        op_avail(0, 0) + op_avail_move(1) + burst(1)
    s['outside'] = vq() + op_desc(0, 1, 65536 - 10, 100, dirflag, 0) + \
        op_avail(0, 0) + op_avail_move(1) + burst(1)
    s['indirect-nested'] = vq(mode=V1 | IND) + \
        op_desc(0, 0, 12288, 32, 4, 0) + \
        bytes([5]) + raw_off(0, 12288) + bytes([16]) + \
        struct.pack('<QIHH', 0x100000 + 12288, 16, 4, 0) + \
        op_avail(0, 0) + op_avail_move(1) + burst(1)
    s['ring-outside'] = vq(used=raw_off(1, 65536 - 8)) + burst(1)
    s['bad-size'] = vq(log2=0xfe) + burst(1)
    # exact limits of every bound on guest input (issue 11): the last value
    # that passes next to the first that fails, so an off-by-one in either
    # direction changes an outcome the oracle predicts, or touches a guard
    # page. Region 2 (when present) is one page at 0x300000 (or at the top
    # of the space), nothing around it; region 3 is a spare page at
    # 0x400000, so that with 4 regions raw_off's selector maps as it does
    # with 2 (sel % nregions).
    fr = tgt == 'virtq_enqueue'
    SPARE = region(0, 1)
    R2 = REGS + [region(0, 1), SPARE]
    R2GPA, R1GPA = 0x300000, 0x104000

    def desc(a, ln, flags, nxt):
        return struct.pack('<QIHH', a, ln, flags, nxt)

    def raw(r, off, data):
        assert len(data) < 64
        return bytes([5]) + raw_off(r, off) + bytes([len(data)]) + data

    def post(pos, head):
        return op_avail(pos, head) + op_avail_move(1)
    # next = size - 1 passes, next = size: the descriptor table ends the page
    # (RX: the second frame needs the descriptor after the chain's last)
    s['limit-next-eq-size'] = vq(regs=R2, desc=addr(2, 0, 16)) + \
        op_desc(254, 1, 0, 100, 1 | dirflag, 255) + \
        op_desc(255, 1, 100, 100, dirflag, 0) + post(0, 254) + \
        burst(1, 150) + op_desc(255, 1, 100, 100, 1 | dirflag, 256) + \
        post(1, 254) + burst(1, 250)
    # avail head = size - 1 works, = size breaks the ring
    s['limit-head-eq-size'] = vq() + op_chain(255, [(1, 0, 200)]) + \
        burst(1) + post(1, 256) + burst(1)
    # indirect: next = length - 1 passes, = length: the table ends the page
    tbl = 4096 - 32
    s['limit-indirect-index'] = vq(mode=V1 | IND, regs=R2) + \
        raw(2, tbl, desc(R1GPA, 100, 1 | dirflag, 1) +
            desc(R1GPA + 100, 100, dirflag, 0)) + \
        op_desc(5, 2, tbl, 32, 4, 0) + post(0, 5) + burst(1, 150) + \
        raw(2, tbl + 16, desc(R1GPA + 100, 100, 1 | dirflag, 2)) + \
        post(1, 5) + burst(1, 250)
    # indirect length: 16 and ring-size entries pass; 17, 15, size + 1 fail
    t4 = b''.join(desc(R1GPA + 100 * i, 100, (1 if i < 3 else 0) | dirflag,
                       i + 1) for i in range(5))
    s['limit-indirect-len'] = vq(log2=2, mode=V1 | IND) + \
        raw(0, 12288, t4[:48]) + raw(0, 12288 + 48, t4[48:]) + \
        op_desc(0, 0, 12288, 64, 4, 0) + post(0, 0) + burst(1, 388) + \
        op_desc(0, 0, 12288, 80, 4, 0) + post(1, 0) + burst(1, 388) + \
        op_desc(0, 0, 12288, 17, 4, 0) + post(2, 0) + burst(1) + \
        op_desc(0, 0, 12288, 15, 4, 0) + post(3, 0) + burst(1) + \
        op_desc(0, 0, 12288 + 48, 16, 4, 0) + post(0, 0) + burst(1, 88)
    # chain length = ring size passes, size + 1 is a loop (TX: at the limit)
    ring8 = b''.join(op_desc(i, 1, 10 * i, 10, 1 | dirflag, (i + 1) % 8)
                     for i in range(8))
    s['limit-chain-loop'] = vq(log2=3, max_pkt=0 if fr else 80) + ring8 + \
        op_desc(7, 1, 70, 10, dirflag, 0) + post(0, 0) + burst(1, 68) + \
        op_desc(7, 1, 70, 10, 1 | dirflag, 0) + post(1, 0) + burst(1, 69)
    # a buffer ending exactly at a region's end (poisoned tail after it)
    # and one byte past; one starting at the end
    RT = REGS + [region(0, 1, trim=100), SPARE]
    s['limit-region-end'] = vq(regs=RT) + \
        op_chain(0, [(2, 3996 - 300, 300)]) + burst(1, 288) + \
        op_chain(1, [(2, 3996 - 300, 301)]) + burst(1, 289) + \
        op_chain(2, [(2, 3996 - 300, 300), (2, 3996, 1)]) + burst(1, 289)
    # across the seam of regions 0 and 1, exactly at the boundary
    s['limit-span-seam'] = vq() + \
        op_chain(0, [(0, 16384 - 150, 150), (1, 0, 150)]) + burst(1, 288) + \
        op_chain(2, [(0, 16384 - 150, 300)]) + burst(1, 288)
    # a region at the top of the space: a buffer ending at 2^64 - 1, and
    # one byte more (wraps)
    RTOP = REGS + [region(3, 1), SPARE]
    s['limit-top-of-space'] = vq(regs=RTOP) + \
        op_chain(0, [(2, 4096 - 300, 300)]) + burst(1, 288) + \
        op_chain(1, [(2, 4096 - 300, 301)]) + burst(1, 289)
    # avail index exactly size ahead (a full ring), then size + 1
    s['limit-avail-ahead'] = vq(log2=2) + b''.join(
        op_chain(i, [(1, 256 * i, 200)]) for i in range(4)) + \
        burst(8) + op_avail_move(5) + burst(1)
    # max_pkt_len: exactly the limit passes, one byte more is too large
    s['limit-max-pkt'] = vq(max_pkt=100) + \
        op_chain(0, [(1, 0, 100)]) + burst(1, 88) + \
        op_chain(1, [(1, 200, 101)]) + burst(1, 89) + \
        op_chain(2, [(1, 400, 60), (1, 500, 41)]) + burst(1, 88)
    # ring areas ending exactly at a region's end, and 2 bytes past
    s['limit-used-at-end'] = vq(regs=R2, used=addr(2, 4096 - 2052, 4)) + \
        op_chain(0, [(1, 0, 200)]) + burst(1)
    s['limit-avail-event-at-end'] = vq(
        mode=V1 | EVT | NOTIFY, regs=R2, avail=addr(2, 4096 - 518, 2)) + \
        op_chain(0, [(1, 0, 200)]) + burst(1)
    s['limit-avail-event-past-end'] = vq(
        mode=V1 | EVT, regs=R2, avail=addr(2, 4096 - 516, 2)) + burst(1)
    s['limit-used-event-past-end'] = vq(
        mode=V1 | EVT, regs=R2, used=addr(2, 4096 - 2052, 4)) + burst(1)
    # a first RX chain of exactly hdr_len bytes (frame in the next), then
    # one byte less (SHORT_HDR); TX: both are header-only chains
    s['limit-rx-short-hdr'] = vq(mode=MRG) + \
        op_chain(0, [(1, 0, 12)]) + op_chain(1, [(1, 100, 200)]) + \
        burst(1, 100) + op_chain(2, [(1, 400, 11)]) + \
        op_chain(3, [(1, 500, 200)]) + burst(1, 100)
    # RX spread over 7 buffers (num_buffers > 5), multi-segment mbufs
    s['mrg-many-buffers'] = vq(mode=MRG | NOTIFY) + b''.join(
        op_chain(i, [(1, i * 2048, 1500)]) for i in range(16)) + \
        op_burst(2) + struct.pack('<HBHB', 0x8000 | 9000, 3, 1400, 0) + \
        op_burst(1) + struct.pack('<HB', 1488, 255)
    for name, data in s.items():
        out(tgt, name, data)

# --- net_hdr: virtio-net header (12 B), features byte (1 CSUM, 2 TSO4,
# 4 TSO6), segment count, 3 cut bytes, then the packet --------------------
def nh_frame(ipv, proto, payload, vlan=False):
    eth = b'\x02' * 6 + b'\x0a' * 6 + (b'\x81\x00\x00\x07' if vlan else b'')
    l4 = (struct.pack('>HHIIBBHHH', 1000, 80, 1, 0, 0x50, 0x10, 65535, 0, 0)
          if proto == 6 else struct.pack('>HHHH', 53, 53, 8 + payload, 0))
    body = l4 + bytes(i * 7 % 256 for i in range(payload))
    if ipv == 4:
        ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(body), 1, 0, 64,
                         proto, 0, b'\x0a\0\0\x01', b'\x0a\0\0\x02')
        return eth + b'\x08\x00' + ip + body, len(eth) + 2 + 20
    ip = struct.pack('>IHBB16s16s', 0x60000000, len(body), proto, 64,
                     b'\xfd' + b'\0' * 15, b'\xfd' + b'\0' * 14 + b'\x02')
    return eth + b'\x86\xdd' + ip + body, len(eth) + 2 + 40


def nh(flags, gso, hdr_len, gso_size, start, off, feat, segs, pkt):
    return struct.pack('<BBHHHHH', flags, gso, hdr_len, gso_size, start,
                       off, 0) + bytes([feat, segs, 30, 60, 90]) + pkt


f4, l4_4 = nh_frame(4, 6, 3000)
f6, l4_6 = nh_frame(6, 6, 3000, vlan=True)
u4, l4_u = nh_frame(4, 17, 0)
NH = {
    'tso4': nh(1, 1, l4_4 + 20, 1448, l4_4, 16, 7, 0, f4),
    'tso6-vlan-3segs': nh(1, 4, l4_6 + 20, 1440, l4_6, 16, 7, 2, f6),
    'csum-udp-at-limit': nh(1, 0, 0, 0, l4_u, 6, 1, 0, u4),
    'csum-range-len-plus-1': nh(1, 0, 0, 0, l4_u, 7, 1, 1, u4),
    'csum-wrap': nh(1, 0, 0, 0, 0xffff, 0xffff, 1, 0, u4),
    'gso-size-0': nh(1, 1, 0, 0, l4_4, 16, 7, 0, f4),
    'hdr-len-plus-1': nh(1, 1, len(f4) + 1, 1448, l4_4, 16, 7, 0, f4),
    'tso6-on-ipv4': nh(1, 4, 0, 1448, l4_4, 16, 7, 0, f4),
    'gso-no-csum': nh(0, 1, 0, 1448, l4_4, 16, 7, 0, f4),
    'not-negotiated': nh(1, 1, 0, 1448, l4_4 + 1, 16, 0, 0, f4),
}
for name, data in NH.items():
    out('net_hdr', name, data)

print('seeds written under', os.path.join(HERE, 'corpus'), file=sys.stderr)
