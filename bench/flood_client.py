#!/usr/bin/env python3
"""A noisy neighbour for bench/noisy_neighbor.sh: one-row GetRows calls, each
on a table family never asked for before (a fresh `base`), back to back on
one channel, until a deadline or a call count.

Prints one line: "ok N refused N other N seconds S".
Usage: flood_client.py TARGET SECONDS MAX_CALLS SEED [D:MAX_LEN ...]
Needs only Debian's python3-grpcio: the request is encoded here by hand.
"""
import random
import struct
import sys
import time

import grpc


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def get_rows_request(d, base, max_len, position):
    # TableSpec { uint32 d = 1; double base = 2; uint32 max_len = 3; }
    spec = b"\x08" + varint(d) + b"\x11" + struct.pack("<d", base) + b"\x18" + varint(max_len)
    # GetRowsRequest { TableSpec spec = 1; repeated uint32 positions = 2; }
    positions = varint(position)
    return (b"\x0a" + varint(len(spec)) + spec + b"\x12" + varint(len(positions)) + positions)


def main():
    target, seconds, max_calls, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    shapes = [tuple(int(x) for x in s.split(":")) for s in sys.argv[5:]] or [(512, 1 << 20)]
    rng = random.Random(seed)
    counts = {"ok": 0, "refused": 0, "other": 0}
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary("/posenc.v1.PositionalEncoding/GetRows")
        start = time.monotonic()
        deadline = start + seconds
        n = 0
        while n < max_calls and time.monotonic() < deadline:
            d, max_len = shapes[n % len(shapes)]
            base = 2.0 + rng.random() * 1e6  # a family nobody asked for
            try:
                call(get_rows_request(d, base, max_len, rng.randrange(max_len)), timeout=30)
                counts["ok"] += 1
            except grpc.RpcError as error:
                key = "refused" if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED else "other"
                counts[key] += 1
            n += 1
        elapsed = time.monotonic() - start
    print("ok %d refused %d other %d seconds %.3f" % (counts["ok"], counts["refused"], counts["other"], elapsed))


if __name__ == "__main__":
    main()
