# SPDX-License-Identifier: BSD-3-Clause
"""Frames that carry their own proof, and the pcap files a testpmd guest
reads them from and writes what it received to (net_pcap).

A frame: Ethernet header (ethertype 0x88b5), magic "vswp", stream id (4),
sequence number (8), length (4), a pattern derived from stream and
sequence number, CRC-32 (zlib) over everything after the Ethernet header.
The same layout as hostile_frontend's traffic mode (magic aside), so a
corrupted, truncated, duplicated or reordered frame is recognised, and a
missing one can be held against the drops vswd counted.
"""
import random
import struct
import zlib

MAGIC = b"vswp"
HDR = 14 + 4 + 4 + 8 + 4
MIN_LEN = HDR + 4  # 38 B: shorter frames cannot carry the proof
ETH = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5])


def frame(stream, seq, length):
    body = MAGIC + struct.pack("<IQI", stream, seq, length)
    n = length - HDR - 4
    pat = bytes((seq * 131 + stream * 7 + i) & 0xff for i in range(256))
    body += (pat * (n // 256 + 1))[:n]
    crc = zlib.crc32(body)
    return ETH + body + struct.pack("<I", crc)


def sweep_sizes(buf_lens, limit=9000, seed=1, n_random=200):
    """Every size at the buffer-count boundaries (for each guest buffer
    size in buf_lens: a frame of n*buf - 12 B fills n buffers exactly,
    the 12 B virtio-net header first), the Ethernet limits, 9000, and
    random sizes: MIN_LEN .. limit, sorted, no repeats."""
    s = {MIN_LEN, 60, 64, 1514, 1518, 2048, limit}
    for b in buf_lens:
        n = 1
        while n * b - 12 - 1 <= limit:
            s.update(x for x in (n * b - 13, n * b - 12, n * b - 11)
                     if MIN_LEN <= x <= limit)
            n += 1
    rng = random.Random(seed)
    s.update(rng.randint(MIN_LEN, limit) for _ in range(n_random))
    return sorted(s)


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    """The frames of a pcap file (micro- or nanosecond, either order);
    a truncated capture (caplen < len) is returned as captured."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    e = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    out, off = [], 24
    while off + 16 <= len(data):
        _, _, cap, _ = struct.unpack(e + "IIII", data[off:off + 16])
        out.append(data[off + 16:off + 16 + cap])
        off += 16 + cap
    return out


class Verdict:
    """What the receiver saw, against what was sent (streams: {id: n})."""

    def __init__(self, streams):
        self.streams = streams
        self.good = self.bad = self.dup = self.reordered = 0
        self.seen = set()
        self.last = {}
        self.bad_examples = []
        self.good_lens = set()

    def rx(self, fr, where=""):
        ok = (len(fr) >= MIN_LEN and fr[14:18] == MAGIC and
              zlib.crc32(fr[14:-4]) == struct.unpack("<I", fr[-4:])[0])
        if ok:
            stream, seq, length = struct.unpack("<IQI", fr[18:34])
            ok = (length == len(fr) and stream in self.streams and
                  seq < self.streams[stream] and
                  fr == frame(stream, seq, length))
        if not ok:
            self.bad += 1
            if len(self.bad_examples) < 3:
                self.bad_examples.append("%s%d B %s" % (where, len(fr),
                                                        fr[:40].hex()))
            return
        key = (stream, seq)
        if key in self.seen:
            self.dup += 1
            return
        self.seen.add(key)
        self.good += 1
        self.good_lens.add(len(fr))
        # order: within one stream on one path (a queue), seq rises
        lk = (where, stream)
        if self.last.get(lk, -1) > seq:
            self.reordered += 1
        self.last[lk] = seq

    @property
    def sent(self):
        return sum(self.streams.values())

    @property
    def missing(self):
        return self.sent - self.good

    def __str__(self):
        return ("sent %d good %d bad %d dup %d reordered %d missing %d%s" % (
            self.sent, self.good, self.bad, self.dup, self.reordered,
            self.missing,
            (" bad: " + "; ".join(self.bad_examples))
            if self.bad_examples else ""))
