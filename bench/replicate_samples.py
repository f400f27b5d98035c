#!/usr/bin/python3
"""Make a bigger perf.data file from a real one, for the report speed
benchmark (bench/report_speed.sh): every PERF_RECORD_SAMPLE of IN's data
section is written K times in a row; every other record (COMM, MMAP2, ...)
once. The header's data size and the feature sections' offsets are moved
to match. perf script reads the result like any recording: each copy is
unwound and symbolized on its own, so the time per sample is real work.

  replicate_samples.py IN OUT K     prints the number of samples written
"""
import struct
import sys

PERF_RECORD_SAMPLE = 9


def main(src, dst, k):
    raw = open(src, "rb").read()
    if raw[:8] != b"PERFILE2":
        sys.exit("%s: byte 0: not a perf.data file" % src)
    size, attr_size, a_off, a_size, d_off, d_size = struct.unpack_from("<QQQQQQ", raw, 8)
    feats = struct.unpack_from("<4Q", raw, 72)
    data, out, samples, pos = raw[d_off:d_off + d_size], [], 0, 0
    while pos + 8 <= len(data):
        rtype, _misc, rsize = struct.unpack_from("<IHH", data, pos)
        if rsize < 8 or pos + rsize > len(data):
            sys.exit("%s: byte %d: bad record size %d" % (src, d_off + pos, rsize))
        rec = data[pos:pos + rsize]
        copies = k if rtype == PERF_RECORD_SAMPLE else 1
        out.append(rec * copies)
        samples += copies if rtype == PERF_RECORD_SAMPLE else 0
        pos += rsize
    new_data = b"".join(out)
    delta = len(new_data) - d_size
    nfeat = sum(bin(f).count("1") for f in feats)
    table_at = d_off + d_size
    table = bytearray(raw[table_at:table_at + 16 * nfeat])
    for i in range(nfeat):
        off, sz = struct.unpack_from("<QQ", table, 16 * i)
        struct.pack_into("<QQ", table, 16 * i, off + delta, sz)
    header = bytearray(raw[:d_off])
    struct.pack_into("<Q", header, 48, len(new_data))
    rest = raw[table_at + 16 * nfeat:]
    with open(dst, "wb") as f:
        f.write(bytes(header) + new_data + bytes(table) + rest)
    print(samples)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
