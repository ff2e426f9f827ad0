#!/usr/bin/env python3
"""Every service that posenc_server's reflection lists resolves through
reflection, and the resolved descriptors are good enough to call Health/Check
the way grpcurl does (no compiled-in stubs).

Debian's python3-grpcio has no reflection module, so this speaks the
grpc.reflection.v1alpha protocol over raw bytes and decodes the replies with
protobuf's descriptor_pb2.

Usage: reflection_check.py --server PATH/posenc_server
"""

import argparse
import os
import sys
import tempfile

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from protobuf_wire import pb_bytes, read_varint  # noqa: E402
from server_process import ServerProcess  # noqa: E402

REFLECTION = ("/grpc.reflection.v1alpha.ServerReflection/"
              "ServerReflectionInfo")
# The services the server must list (channelz with --channelz).
EXPECTED = {"posenc.v1.PositionalEncoding", "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection",
            "grpc.channelz.v1.Channelz"}


# --- protobuf wire format, just what ServerReflectionRequest/Response need.
def string_field(number, text):
    return pb_bytes(number, text.encode())


def fields(data):
    """(field number, value) of a message; value is bytes or int."""
    i = 0
    while i < len(data):
        key, i = read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(data, i)
            yield number, value
        elif wire == 2:
            length, i = read_varint(data, i)
            yield number, data[i:i + length]
            i += length
        else:
            raise ValueError(f"unexpected wire type {wire}")


class Reflection:
    """One request, one reply, on a ServerReflectionInfo stream each."""

    def __init__(self, channel):
        self.call = channel.stream_stream(REFLECTION)

    def ask(self, request):
        replies = list(self.call(iter([request]), timeout=10))
        if len(replies) != 1:
            raise AssertionError(f"{len(replies)} replies to one request")
        reply = dict()
        for number, value in fields(replies[0]):
            reply.setdefault(number, []).append(value)
        if 7 in reply:  # error_response
            error = dict(fields(reply[7][0]))
            raise LookupError(f"reflection error {error.get(1)}: "
                              f"{error.get(2, b'').decode()}")
        return reply

    def list_services(self):
        reply = self.ask(string_field(7, "*"))
        return [dict(fields(service))[1].decode()
                for service in (v for _, v in fields(reply[6][0]))]

    def files(self, request):
        reply = self.ask(request)
        return [descriptor_pb2.FileDescriptorProto.FromString(raw)
                for _, raw in fields(reply[4][0])]

    def resolve(self, symbol):
        """A pool holding the file that defines symbol and its imports."""
        pool = descriptor_pool.DescriptorPool()
        pending = self.files(string_field(4, symbol))
        added = set()
        by_name = {}
        while pending:
            proto = pending.pop()
            by_name[proto.name] = proto
            for dep in proto.dependency:
                if dep not in by_name:
                    pending.extend(self.files(string_field(3, dep)))
        def add(name):
            if name in added:
                return
            for dep in by_name[name].dependency:
                add(dep)
            pool.Add(by_name[name])
            added.add(name)
        for name in list(by_name):
            add(name)
        return pool


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    args = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp, ServerProcess(
            args.server, os.path.join(tmp, "server.log"),
            ["--channelz"]) as server:
        target = f"127.0.0.1:{server.wait_for_port()}"
        with grpc.insecure_channel(target) as channel:
            reflection = Reflection(channel)
            services = reflection.list_services()
            print("listed:", ", ".join(sorted(services)))
            missing = EXPECTED - set(services)
            if missing:
                failures.append(f"not listed: {sorted(missing)}")
            for name in services:
                try:
                    pool = reflection.resolve(name)
                    service = pool.FindServiceByName(name)
                    if not service.methods:
                        raise LookupError("no methods")
                    print(f"resolved {name}: "
                          f"{', '.join(m.name for m in service.methods)}")
                except Exception as e:  # noqa: BLE001 - report every service
                    failures.append(f"{name}: {e}")

            # Call Health/Check with message classes built from the
            # reflected descriptors alone, as grpcurl does.
            try:
                status = health_check(reflection, channel)
                print("Health/Check:", status)
                if status != "SERVING":
                    failures.append(f"Health/Check answered {status}")
            except Exception as e:  # noqa: BLE001
                failures.append(f"Health/Check through reflection: {e}")
    for failure in failures:
        print("FAIL", failure)
    print(f"{len(services) + 1 - len(failures)} passed, "
          f"{len(failures)} failed")
    return 1 if failures else 0


def health_check(reflection, channel):
    """Health/Check's status name, with messages made from reflection."""
    pool = reflection.resolve("grpc.health.v1.Health")
    check = pool.FindServiceByName(
        "grpc.health.v1.Health").FindMethodByName("Check")
    factory = message_factory.MessageFactory(pool)
    request_class = factory.GetPrototype(check.input_type)
    response_class = factory.GetPrototype(check.output_type)
    call = channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=request_class.SerializeToString,
        response_deserializer=response_class.FromString)
    reply = call(request_class(service=""), timeout=10)
    status = check.output_type.fields_by_name["status"].enum_type \
        .values_by_number[reply.status].name
    return status


if __name__ == "__main__":
    sys.exit(main())
