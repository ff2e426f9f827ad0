#!/usr/bin/python3
"""Slow StreamBatches reader for bench/memory_check.sh.

Opens posenc.v1.PositionalEncoding/StreamBatches with a request given as a
serialized StreamBatchesRequest file, reads one message every --interval
seconds for --seconds seconds, then cancels the call. Prints the messages
and bytes read and the final status. Uses Debian's python3-grpcio
(/usr/bin/python3); no generated stubs are needed (raw bytes in and out).
"""
import argparse
import sys
import time

import grpc


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--target", required=True)
    ap.add_argument("--request", required=True,
                    help="file holding a serialized StreamBatchesRequest")
    ap.add_argument("--interval", type=float, default=0.02)
    ap.add_argument("--seconds", type=float, default=4.0)
    args = ap.parse_args()
    with open(args.request, "rb") as f:
        request = f.read()
    channel = grpc.insecure_channel(args.target)
    call = channel.unary_stream(
        "/posenc.v1.PositionalEncoding/StreamBatches",
        request_serializer=None, response_deserializer=None)(
            request, timeout=600)
    messages = nbytes = 0
    deadline = time.monotonic() + args.seconds
    try:
        for message in call:
            messages += 1
            nbytes += len(message)
            if time.monotonic() >= deadline:
                break
            time.sleep(args.interval)
    finally:
        call.cancel()
    code = call.code()
    print(f"slow_reader: read {messages} messages, {nbytes} bytes in "
          f"~{args.seconds:g}s, then cancelled: {code.name if code else None}")
    channel.close()
    return 0 if code == grpc.StatusCode.CANCELLED else 1


if __name__ == "__main__":
    sys.exit(main())
