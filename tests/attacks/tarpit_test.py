#!/usr/bin/python3
"""An abusive HTTP/2 peer is held unread, then told to go away; a stream
the peer reset gets no frame back.

gRPC patch third_party/grpc/patches/posenc-abuse-tarpit.patch: once a peer
trips a rule (too many premature resets; a frame that cannot be parsed) the
server parses nothing more of what it sent, and sends GOAWAY and closes the
connection only when the tarpit ends, one second later. Before it, the
GOAWAY came at once and the attacker reconnected at once.

Each scenario sends, in one write on a fresh connection, what trips the rule
and then a valid GetRows. It asserts:
  - the GOAWAY's code (ENHANCE_YOUR_CALM for resets; PROTOCOL_ERROR or any
    error but NO_ERROR for an unparsable frame);
  - the GOAWAY comes no sooner than 0.5 s after the write (a slow machine
    only makes it later) and within 10 s;
  - the valid GetRows after the trip is never answered (it was not parsed);
  - afterwards a fresh connection gets the exact GetRows answer.

Usage: tarpit_test.py --server-binary PATH [--scenario NAME]
"""
import argparse
import socket
import struct
import sys
import os
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench", "attacks"))
import h2_attacks as h2a  # noqa: E402

GOAWAY = 0x7
RST_STREAM = 0x3
PROTOCOL_ERROR = 0x1
ENHANCE_YOUR_CALM = 0xB
MIN_HOLD_S = 0.5
MAX_WAIT_S = 10.0
RESETS = 300  # past the rule's 200


def read_frames(sock, until):
    """Frames the server sends until GOAWAY, EOF or `until`: (a list of
    (type, flags, stream id, payload, seconds since the call), seconds to
    EOF or None)."""
    t0 = time.monotonic()
    buf = b""
    frames = []
    eof_at = None
    while time.monotonic() < until:
        sock.settimeout(max(0.01, until - time.monotonic()))
        try:
            chunk = sock.recv(1 << 16)
        except socket.timeout:
            break
        except ConnectionResetError:
            eof_at = time.monotonic() - t0
            break
        if not chunk:
            eof_at = time.monotonic() - t0
            break
        buf += chunk
        while len(buf) >= 9:
            length = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + length:
                break
            ftype, flags = buf[3], buf[4]
            sid = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
            frames.append((ftype, flags, sid, buf[9:9 + length],
                           time.monotonic() - t0))
            buf = buf[9 + length:]
        if any(f[0] == GOAWAY for f in frames):
            break
    return frames, eof_at


def scenario(port, trip, valid_sid):
    """Sends preface, `trip` and a valid GetRows on `valid_sid` in one write;
    returns read_frames' answer."""
    authority = f"127.0.0.1:{port}"
    block = h2a.stateless_block(h2a.request_headers("GetRows", authority))
    body = h2a.grpc_message(h2a.get_rows_request(
        h2a.table_spec(h2a.PROBE_D, h2a.PROBE_MAX_LEN), [h2a.PROBE_POSITION]))
    valid = (h2a.frame(h2a.HEADERS, h2a.END_HEADERS, valid_sid, block)
             + h2a.frame(h2a.DATA, h2a.END_STREAM, valid_sid, body))
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.sendall(h2a.PREFACE + h2a.settings_frame({})
                     + trip(block, body) + valid)
        frames = read_frames(sock, time.monotonic() + MAX_WAIT_S)
    finally:
        sock.close()
    return frames


def resets(block, body):
    out = []
    for k in range(RESETS):
        sid = 1 + 2 * k
        out.append(h2a.frame(h2a.HEADERS, h2a.END_HEADERS, sid, block))
        out.append(h2a.frame(h2a.DATA, h2a.END_STREAM, sid, body))
        out.append(h2a.frame(RST_STREAM, 0, sid,
                             h2a.CANCEL.to_bytes(4, "big")))
    return b"".join(out)


def unparsable(block, body):
    # A WINDOW_UPDATE of the connection with a zero increment: a connection
    # error (RFC 9113 6.9, PROTOCOL_ERROR).
    return h2a.frame(0x8, 0, 0, struct.pack(">I", 0))


SETTINGS_FRAMES = 40  # past the budget of 32 a second
CALM_NOTES = 8  # too_many_pings GOAWAYs that make an address refused


def many_settings(block, body):
    return h2a.settings_frame({h2a.SETTING.MAX_CONCURRENT_STREAMS: 100}) * \
        SETTINGS_FRAMES


def check_calm_refusal(port):
    """gRPC patch posenc-ping-settings-flood.patch: an address told
    too_many_pings CALM_NOTES times has its next connection closed at
    accept (nothing sent back), and is served again 2 s after its last
    note."""
    failures = []
    ping = h2a.frame(h2a.PING, 0, 0, b"posenc!!")
    for k in range(CALM_NOTES):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            sock.sendall(h2a.PREFACE + h2a.settings_frame({}) + ping * 10)
            frames, eof_at = read_frames(sock, time.monotonic() + MAX_WAIT_S)
        finally:
            sock.close()
        goaways = [f for f in frames if f[0] == GOAWAY]
        if not goaways or int.from_bytes(goaways[0][3][4:8], "big") != \
                ENHANCE_YOUR_CALM:
            failures.append(f"connection {k + 1}: no GOAWAY ENHANCE_YOUR_CALM"
                            f" for 10 PINGs (frames {[f[0] for f in frames]})")
            return failures
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        sock.sendall(h2a.PREFACE + h2a.settings_frame({}))
        frames, eof_at = read_frames(sock, time.monotonic() + 2.0)
    except OSError as e:  # reset by the server: refused too
        frames, eof_at = [], str(e)
    finally:
        sock.close()
    if frames or eof_at is None:
        failures.append("the connection after the notes was served "
                        f"(frames {[f[0] for f in frames]}), not refused")
    else:
        print(f"CalmPeer: connection {CALM_NOTES + 1} closed at accept")
    time.sleep(2.5)
    ok, err = h2a.probe(f"127.0.0.1:{port}", 5.0)
    if not ok:
        failures.append(f"2.5 s later a fresh connection got no exact "
                        f"answer: {err}")
    return failures


SCENARIOS = {
    # name: (trip, the valid stream's id, accepted GOAWAY codes)
    "TooManyResets_HeldUnreadThenGoaway": (resets, 1 + 2 * RESETS,
                                           {ENHANCE_YOUR_CALM}),
    "UnparsableFrame_HeldUnreadThenGoaway": (unparsable, 1, None),
    "TooManySettings_HeldUnreadThenGoaway": (many_settings, 1,
                                             {ENHANCE_YOUR_CALM}),
    "CalmPeer_RefusedAtAcceptThenServedAgain": None,  # check_calm_refusal
    "ResetStreams_NoFramesOnThem": None,  # check_reset_streams
}


def check_reset_streams(port):
    """Streams the peer resets (HEADERS, the request, RST_STREAM) get no
    frame back: gRPC 1.51.1 wrote trailers and a RST_STREAM(NO_ERROR) for
    each (gRPC patch posenc-no-frames-after-reset.patch)."""
    authority = f"127.0.0.1:{port}"
    block = h2a.stateless_block(h2a.request_headers("GetRows", authority))
    body = h2a.grpc_message(h2a.get_rows_request(
        h2a.table_spec(h2a.PROBE_D, h2a.PROBE_MAX_LEN), [h2a.PROBE_POSITION]))
    reset_sids = [1, 3, 5, 7, 9]
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.sendall(h2a.PREFACE + h2a.settings_frame({}) + b"".join(
            h2a.frame(h2a.HEADERS, h2a.END_HEADERS, sid, block)
            + (h2a.frame(h2a.DATA, h2a.END_STREAM, sid, body) if sid > 3
               else b"")
            + h2a.frame(RST_STREAM, 0, sid, h2a.CANCEL.to_bytes(4, "big"))
            for sid in reset_sids)
            # Then a call that is not reset: its answer shows the server
            # has dealt with everything before it.
            + h2a.frame(h2a.HEADERS, h2a.END_HEADERS, 11, block)
            + h2a.frame(h2a.DATA, h2a.END_STREAM, 11, body))
        t_end = time.monotonic() + MAX_WAIT_S
        frames = []
        while time.monotonic() < t_end:
            got, eof_at = read_frames(sock, min(t_end,
                                                time.monotonic() + 0.5))
            frames += got
            if eof_at is not None or any(
                    f[2] == 11 and f[1] & h2a.END_STREAM for f in frames):
                break
    finally:
        sock.close()
    failures = []
    if not any(f[2] == 11 and f[1] & h2a.END_STREAM for f in frames):
        failures.append("the call after the reset streams got no answer")
    on_reset = [(f[0], f[2]) for f in frames if f[2] in reset_sids]
    if on_reset:
        failures.append(f"frames on reset streams (type, stream): {on_reset}")
    return failures


def check(name, port):
    if name == "ResetStreams_NoFramesOnThem":
        return check_reset_streams(port)
    if name == "CalmPeer_RefusedAtAcceptThenServedAgain":
        return check_calm_refusal(port)
    trip, valid_sid, codes = SCENARIOS[name]
    frames, eof_at = scenario(port, trip, valid_sid)
    failures = []
    goaways = [f for f in frames if f[0] == GOAWAY]
    if not goaways:
        failures.append(f"no GOAWAY within {MAX_WAIT_S} s" + (
            f" (closed without one after {eof_at:.3f} s)"
            if eof_at is not None else ""))
    else:
        payload, at = goaways[0][3], goaways[0][4]
        code = int.from_bytes(payload[4:8], "big")
        if codes is not None and code not in codes:
            failures.append(f"GOAWAY code {code:#x}, expected "
                            f"{sorted(hex(c) for c in codes)}")
        if codes is None and code == 0:
            failures.append("GOAWAY NO_ERROR for a protocol error")
        if at < MIN_HOLD_S:
            failures.append(f"GOAWAY after {at:.3f} s: the peer was not "
                            f"held (at least {MIN_HOLD_S} s)")
        print(f"{name}: GOAWAY code {code:#x} after {at:.3f} s")
    if trip is many_settings:
        acks = sum(1 for f in frames if f[0] == h2a.SETTINGS and f[1] & 1)
        # The client's first (empty) SETTINGS and 31 of the flood's.
        if acks > 32:
            failures.append(f"{acks} SETTINGS acked, over the budget of 32")
        print(f"{name}: {acks} SETTINGS acked")
    answered = [f for f in frames if f[2] == valid_sid and f[0] != RST_STREAM]
    if answered:
        failures.append(f"the request after the trip (stream {valid_sid}) "
                        "was answered: the server kept parsing")
    ok, err = h2a.probe(f"127.0.0.1:{port}", 5.0)
    if not ok:
        failures.append(f"a fresh connection got no exact answer: {err}")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server-binary", required=True)
    ap.add_argument("--scenario", choices=sorted(SCENARIOS), action="append")
    args = ap.parse_args()
    log_dir = tempfile.mkdtemp(prefix="posenc-tarpit.")
    server = h2a.Server(args.server_binary, [], 4096, log_dir, "tarpit")
    failed = False
    try:
        for name in args.scenario or sorted(SCENARIOS):
            failures = check(name, server.port)
            for f in failures:
                print(f"FAILED {name}: {f}")
            failed |= bool(failures)
            if not failures:
                print(f"PASSED {name}")
    finally:
        server.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
