#!/usr/bin/python3
"""Offline checks of posenc's ghz configs (bench/ghz/*.json).

For every file: valid JSON object; only keys ghz's config file knows (the
long flag names, runner.Config's json tags); the required keys (call, host,
insecure, data, concurrency, and total or duration; duration-stop "wait" with
a duration); Go durations and byte sizes that parse; host posenc:50051 (the
compose service; override on the command line); `call` names a method of
posenc.v1.PositionalEncoding; `data`, with ghz's call-template actions
replaced by sample values, parses as that method's request message
(json_format over Python stubs protoc generates from proto/); a config that
can receive a message over gRPC's 4 MiB default sets max-recv-message-size
(an Encode reply: points x the EncodingSpec's width).

Usage: check_ghz_configs.py REPO_ROOT GEN_DIR
"""
import glob
import json
import os
import re
import subprocess
import sys

# ghz config-file keys (runner.Config json tags; newer releases add the
# message-size, lb-strategy and template options, named as their flags).
KNOWN_KEYS = {
    "proto", "protoset", "call", "cacert", "cert", "key", "skipTLS",
    "skipFirst", "cname", "authority", "insecure", "total", "async",
    "concurrency", "concurrency-schedule", "concurrency-start",
    "concurrency-end", "concurrency-step", "concurrency-step-duration",
    "concurrency-max-duration", "connections", "rps", "duration",
    "duration-stop", "max-duration", "timeout", "data", "data-file",
    "binary-file", "metadata", "metadata-file", "stream-interval",
    "stream-call-duration", "stream-call-count", "stream-dynamic-messages",
    "reflect-metadata", "output", "format", "connect-timeout", "keepalive",
    "cpus", "import-paths", "name", "tags", "debug", "host",
    "enable-compression", "load-schedule", "load-start", "load-end",
    "load-step", "load-step-duration", "load-max-duration", "lb-strategy",
    "max-recv-message-size", "max-send-message-size",
    "disable-template-functions", "disable-template-data",
}
DURATION_KEYS = {"duration", "max-duration", "timeout", "stream-interval",
                 "stream-call-duration", "connect-timeout", "keepalive",
                 "concurrency-step-duration", "concurrency-max-duration",
                 "load-step-duration", "load-max-duration"}
GO_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")
# go-humanize ParseBytes: a number, optional space, optional SI/IEC unit.
HUMAN_BYTES = re.compile(r"^[0-9]+(\.[0-9]+)? ?([kKmMgGtT]i?[bB]?|[bB])?$")
# ghz call-template variables (www/docs/calldata.md), with sample values.
TEMPLATE_VARS = {
    "RequestNumber": "7", "WorkerID": "w1", "TimestampUnix": "1700000000",
    "TimestampUnixMilli": "1700000000123",
    "TimestampUnixNano": "1700000000123456789", "UUID": "x",
}
DEFAULT_MAX_RECV = 4 << 20
HOST = "posenc:50051"

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def render_templates(value):
    """Replaces {{.Var}} actions in every string of a JSON value."""
    if isinstance(value, str):
        def sub(m):
            name = m.group(1)
            check(name in TEMPLATE_VARS, f"unknown template variable {name}")
            return TEMPLATE_VARS.get(name, "0")
        return re.sub(r"\{\{\s*\.(\w+)\s*\}\}", sub, value)
    if isinstance(value, list):
        return [render_templates(v) for v in value]
    if isinstance(value, dict):
        return {k: render_templates(v) for k, v in value.items()}
    return value


def human_bytes(text):
    m = re.match(r"^([0-9.]+) ?([a-zA-Z]*)$", text)
    units = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "k": 1e3,
             "m": 1e6, "g": 1e9, "kib": 2**10, "mib": 2**20, "gib": 2**30,
             "ki": 2**10, "mi": 2**20, "gi": 2**30}
    return float(m.group(1)) * units[m.group(2).lower()]


def encode_shape(name, request):
    """[points, width] of an EncodeRequest's reply (posenc.proto's
    EncodingSpec: width = 2 * coordinates * half + pad + inputs)."""
    spec = request.spec
    coordinates = spec.coordinates or 1
    octaves = spec.frequency == 2  # FREQUENCY_SCHEME_OCTAVES
    half = spec.num_frequencies if octaves else spec.dim // 2
    check(half > 0, f"{name}: an EncodingSpec without frequencies "
                    "(dim, or num_frequencies with octaves)")
    check(len(request.positions) % coordinates == 0 and request.positions,
          f"{name}: {len(request.positions)} positions are not a whole, "
          f"non-zero number of points of {coordinates} coordinates")
    width = (2 * coordinates * half + (1 if spec.pad_odd_dim else 0) +
             (coordinates if spec.include_input else 0))
    return len(request.positions) // coordinates, width


def main():
    root, gen = sys.argv[1], sys.argv[2]
    os.makedirs(gen, exist_ok=True)
    subprocess.run(["protoc", f"--proto_path={root}/proto",
                    f"--python_out={gen}", "posenc/v1/posenc.proto"],
                   check=True)
    sys.path.insert(0, gen)
    from google.protobuf import json_format
    from google.protobuf import message_factory
    from posenc.v1 import posenc_pb2

    service = posenc_pb2.DESCRIPTOR.services_by_name["PositionalEncoding"]
    configs = sorted(glob.glob(os.path.join(root, "bench/ghz/*.json")))
    check(len(configs) >= 5, f"expected >= 5 configs, found {configs}")
    for path in configs:
        name = os.path.relpath(path, root)
        try:
            with open(path) as f:
                cfg = json.load(f)
        except ValueError as e:
            check(False, f"{name}: not JSON: {e}")
            continue
        if not check(isinstance(cfg, dict), f"{name}: not a JSON object"):
            continue
        for key in cfg:
            check(key in KNOWN_KEYS, f"{name}: unknown ghz key {key!r}")
        for key in ("call", "host", "insecure", "data", "concurrency"):
            check(key in cfg, f"{name}: missing required key {key!r}")
        check("total" in cfg or "duration" in cfg,
              f"{name}: needs 'total' or 'duration' (bounded run)")
        if "duration" in cfg:
            check(cfg.get("duration-stop") == "wait",
                  f"{name}: a duration needs \"duration-stop\": \"wait\"")
        check(cfg.get("insecure") is True, f"{name}: insecure must be true")
        check(cfg.get("host") == HOST, f"{name}: host must be {HOST}")
        for key in ("concurrency", "connections", "total"):
            if key in cfg:
                check(isinstance(cfg[key], int) and cfg[key] > 0,
                      f"{name}: {key} must be a positive integer")
        if isinstance(cfg.get("total"), int) and isinstance(
                cfg.get("concurrency"), int):
            check(cfg["total"] >= cfg["concurrency"],
                  f"{name}: total < concurrency")
        for key in DURATION_KEYS & cfg.keys():
            check(isinstance(cfg[key], str) and GO_DURATION.match(cfg[key]),
                  f"{name}: {key} {cfg[key]!r} is not a Go duration")
        for key in ("max-recv-message-size", "max-send-message-size"):
            if key in cfg:
                check(isinstance(cfg[key], str) and
                      HUMAN_BYTES.match(cfg[key]),
                      f"{name}: {key} {cfg[key]!r} is not a byte size")

        call = cfg.get("call", "")
        m = re.match(r"^posenc\.v1\.PositionalEncoding[./](\w+)$", call)
        if not check(m, f"{name}: call {call!r} is not "
                        "posenc.v1.PositionalEncoding.<Method>"):
            continue
        method = service.methods_by_name.get(m.group(1))
        if not check(method is not None,
                     f"{name}: no RPC {m.group(1)} in posenc.proto"):
            continue
        request_class = message_factory.MessageFactory().GetPrototype(
            method.input_type)
        try:
            request = json_format.Parse(
                json.dumps(render_templates(cfg.get("data"))),
                request_class())
        except json_format.ParseError as e:
            check(False, f"{name}: data is not a {method.input_type.full_name}"
                         f": {e}")
            continue
        # Unary replies carry the whole answer: over 4 MiB needs the option.
        if not method.server_streaming and request.HasField("spec"):
            size = {0: 4, 1: 4, 2: 8, 3: 2, 4: 2}[request.spec.dtype]
            if method.name == "Encode":
                rows, width = encode_shape(name, request)
            else:
                rows = (len(request.positions) if method.name == "GetRows"
                        else request.spec.max_len)
                width = request.spec.d
            reply = rows * width * size
            limit = (human_bytes(cfg["max-recv-message-size"])
                     if "max-recv-message-size" in cfg else DEFAULT_MAX_RECV)
            check(reply + 64 <= limit,
                  f"{name}: a {reply}-byte reply needs max-recv-message-size "
                  f">= {reply + 64} (have {int(limit)})")
        print(f"ok {name}: {call} with a valid "
              f"{method.input_type.full_name}")

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
