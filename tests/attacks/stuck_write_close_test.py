#!/usr/bin/python3
"""A transport that closes while its write is stuck is gone within seconds.

The PING flood of bench/attacks/h2_attacks.py, made deterministic (gRPC patch
third_party/grpc/patches/posenc-ping-flood-delayed-close.patch):
  1. one connection asks for a 16 MiB table and never reads, with its
     receive buffer at the minimum and flow control wide open, so the
     server's write of the table blocks on the socket and stays in progress;
  2. it then sends PINGs without data: past --max_ping_strikes the server
     sends GOAWAY and closes the transport, a close that has to wait for the
     write in progress.
gRPC 1.51.1 waited for ever (while parsing every further frame of the peer's,
each one another GOAWAY, another close, and an error that re-encoded all the
earlier ones). The patched one shuts the connection down after 1 s. The test
asserts that the server process lets go of the connection (its descriptor
count is back to what it was before the connection) within 10 s, and still
answers. (Whether the peer sees a RST or a FIN depends on what was left
unread; a FIN waits in the kernel behind the unsent table.)

Usage: stuck_write_close_test.py --server-binary PATH
"""
import argparse
import array
import fcntl
import os
import socket
import struct
import sys
import tempfile
import termios
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench", "attacks"))
import h2_attacks as h2a  # noqa: E402

CLOSE_WITHIN_S = 10.0


def unread_bytes(sock):
    n = array.array("i", [0])
    fcntl.ioctl(sock, termios.FIONREAD, n)
    return n[0]


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server-binary", required=True)
    args = ap.parse_args()
    log_dir = tempfile.mkdtemp(prefix="posenc-stuck-write.")
    server = h2a.Server(args.server_binary, ["--max_ping_strikes=2"], 4096,
                        log_dir, "stuck_write")
    failures = []
    try:
        time.sleep(0.2)
        baseline = open_fds(server.pid)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        authority = f"127.0.0.1:{server.port}"
        block = h2a.stateless_block(h2a.request_headers("GetTable", authority))
        body = h2a.grpc_message(h2a.get_table_request(h2a.table_spec(512,
                                                                     8192)))
        sock.sendall(
            h2a.PREFACE
            + h2a.settings_frame({h2a.SETTING.INITIAL_WINDOW_SIZE:
                                  h2a.MAX_WINDOW})
            + h2a.window_update(0, h2a.MAX_WINDOW - 65535)
            + h2a.frame(h2a.HEADERS, h2a.END_HEADERS, 1, block)
            + h2a.frame(h2a.DATA, h2a.END_STREAM, 1, body))
        # The server computes the table (a second or more on a busy machine)
        # and starts writing it: once its first bytes are here the socket
        # buffers fill at once, and the write stays in progress. Then the
        # PINGs (no data).
        deadline = time.monotonic() + 30
        while unread_bytes(sock) < 2048 and time.monotonic() < deadline:
            time.sleep(0.05)
        if unread_bytes(sock) < 2048:
            failures.append("the table's first bytes did not arrive in 30 s")
        time.sleep(0.3)
        sock.setblocking(False)
        pings = 0
        try:
            for _ in range(64):
                sock.send(h2a.frame(h2a.PING, 0, 0, struct.pack(">Q", pings)))
                pings += 1
        except (BlockingIOError, OSError):
            pass
        print(f"sent {pings} PINGs with the table's write stuck")
        if pings <= 2:
            failures.append(f"only {pings} PINGs sent: no strike past the "
                            "limit")
        start = time.monotonic()
        fds = open_fds(server.pid)
        while fds > baseline and time.monotonic() - start < CLOSE_WITHIN_S:
            time.sleep(0.05)
            fds = open_fds(server.pid)
        waited = time.monotonic() - start
        print(f"server descriptors {fds} (before the connection {baseline}) "
              f"after {waited:.2f} s")
        if fds > baseline:
            failures.append(f"the server kept the connection for "
                            f"{CLOSE_WITHIN_S:g} s after the strikes, its "
                            "write stuck (a delayed close that never ends)")
        sock.close()
        ok, after, err = h2a.probe_until(f"127.0.0.1:{server.port}", 10.0,
                                         server.alive)
        if not ok:
            failures.append(f"the server did not answer afterwards: {err}")
    finally:
        server.stop()
        if failures:
            print(server.tail(2000), file=sys.stderr)
        os.remove(server.log_path)
        os.rmdir(log_dir)
    for f in failures:
        print("FAILED: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
