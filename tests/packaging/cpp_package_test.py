#!/usr/bin/env python3
"""The C++ package as a user gets it: `cmake --install` of this build tree
into a fresh prefix, then an out-of-tree project (cpp_consumer/) configured
with find_package(posenc CONFIG) against that prefix only, built, and run
against the installed posenc_server on 127.0.0.1 (an ephemeral port): it
prints the worked example. The same program built with pkg-config's flags
(posenc.pc) prints it too. Also: the prefix holds what docs/cpp-package.md
lists, the package's version is checked (an incompatible one is refused),
and the consumer's PrintRow2 is client/posenc_client.h's usage example
verbatim.

Usage: cpp_package_test.py --build BUILD_DIR --consumer SOURCE_DIR
         --work DIR --grpc-prefix DIR --cmake CMAKE --generator NAME
         --cxx COMPILER --version X.Y.Z [--cxx-flags FLAGS]
         [--link-flags FLAGS]

--cxx-flags and --link-flags are the build tree's CMAKE_CXX_FLAGS and
CMAKE_EXE_LINKER_FLAGS: a prefix installed from a sanitizer build (the asan
and tsan presets) holds instrumented static libraries, so its consumer needs
the same -fsanitize flags, as any user of such a prefix does.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from checklist import Checklist  # noqa: E402
from server_process import ServerProcess  # noqa: E402

WORKED_EXAMPLE = "0.9093 -0.4161 0.0200 0.9998"


def run(argv, check=True, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True,
                            timeout=600, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {result.returncode}:"
                             f"\n{result.stdout}\n{result.stderr}")
    return result


def header_example(header):
    """The usage example of the header's leading comment, uncommented: the
    lines from the one after `#include` to the closing brace."""
    with open(header, encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"^// Example.*?\n//\n((?://(?:   .*)?\n)+)//\n", text,
                      re.M | re.S)
    if not block:
        return None
    lines = [line[5:] if line.startswith("//   ") else ""
             for line in block.group(1).splitlines()]
    body = "\n".join(lines).strip()
    return body.split("\n", 1)[1].strip() if body.startswith("#include") \
        else body


def main():
    parser = argparse.ArgumentParser()
    for flag in ("build", "consumer", "work", "grpc-prefix", "cmake",
                 "generator", "cxx", "version"):
        parser.add_argument("--" + flag, required=True)
    parser.add_argument("--cxx-flags", default="")
    parser.add_argument("--link-flags", default="")
    args = parser.parse_args()
    checklist = Checklist()
    check = checklist.check

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    prefix = os.path.join(args.work, "prefix")
    run([args.cmake, "--install", args.build, "--prefix", prefix])
    for path in ("bin/posenc_server", "bin/posenc",
                 "include/posenc/client/posenc_client.h",
                 "include/posenc/posenc/v1/posenc.grpc.pb.h",
                 "lib/libposenc_client.a",
                 "lib/cmake/posenc/posencConfig.cmake",
                 "lib/cmake/posenc/posencConfigVersion.cmake",
                 "lib/cmake/posenc/posencTargets.cmake",
                 "lib/pkgconfig/posenc.pc"):
        check(os.path.exists(os.path.join(prefix, path)),
              f"cmake --install puts {path} in the prefix")
    # Relocatable: the installed CMake files name neither the source nor
    # the build tree (the consumer sees the prefix only).
    source = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(args.consumer))))
    cmake_dir = os.path.join(prefix, "lib", "cmake", "posenc")
    leaked = []
    for name in sorted(os.listdir(cmake_dir)):
        with open(os.path.join(cmake_dir, name), encoding="utf-8") as f:
            text = f.read()
        leaked += [f"{name}: {tree}" for tree in (source, args.build)
                   if tree in text]
    check(not leaked, f"no installed CMake file names the source or build "
          f"tree ({leaked})")

    example = header_example(os.path.join(
        prefix, "include", "posenc", "client", "posenc_client.h"))
    with open(os.path.join(args.consumer, "main.cc"), encoding="utf-8") as f:
        consumer_source = f.read()
    check(example is not None and example in consumer_source,
          "cpp_consumer/main.cc holds the installed header's usage example "
          f"verbatim:\n{example}")

    def configure(build_dir, *extra):
        return run([args.cmake, "-S", args.consumer, "-B", build_dir,
                    "-G", args.generator, f"-DCMAKE_CXX_COMPILER={args.cxx}",
                    f"-DCMAKE_PREFIX_PATH={prefix}",
                    f"-DCMAKE_CXX_FLAGS={args.cxx_flags}",
                    f"-DCMAKE_EXE_LINKER_FLAGS={args.link_flags}", *extra],
                   check=False)

    # find_package with the package's own version, then an incompatible one.
    consumer_build = os.path.join(args.work, "consumer-build")
    configured = configure(consumer_build)
    check(configured.returncode == 0,
          "find_package(posenc 0.1 CONFIG REQUIRED) configures the consumer"
          f":\n{configured.stdout[-3000:]}\n{configured.stderr[-3000:]}")
    grpc_prefix = os.path.realpath(args.grpc_prefix)
    found = f"found posenc {args.version} with gRPC 1.51.1 from {grpc_prefix}"
    check(found in configured.stdout.replace(args.grpc_prefix, grpc_prefix),
          f"the package reports '{found}'")
    refused = configure(os.path.join(args.work, "consumer-wrong-version"),
                        "-DPOSENC_WANTED=1.0")
    check(refused.returncode != 0 and
          "version: " + args.version in refused.stderr,
          "find_package(posenc 1.0) is refused, naming the installed "
          f"version:\n{refused.stderr[-2000:]}")

    consumer = os.path.join(consumer_build, "consumer")
    if configured.returncode == 0:
        built = run([args.cmake, "--build", consumer_build], check=False)
        check(built.returncode == 0, "the consumer builds against the prefix"
              f":\n{built.stdout[-4000:]}\n{built.stderr[-2000:]}")

    # pkg-config: the same program, compiled and linked with posenc.pc's
    # flags (gRPC's .pc files are in its own prefix).
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = os.pathsep.join(
        (os.path.join(prefix, "lib", "pkgconfig"),
         os.path.join(args.grpc_prefix, "lib", "pkgconfig")))
    modversion = run(["pkg-config", "--modversion", "posenc"], check=False,
                     env=env)
    check(modversion.stdout.strip() == args.version,
          f"pkg-config --modversion posenc is {args.version} "
          f"({modversion.stdout.strip()!r} {modversion.stderr.strip()})")
    flags = run(["pkg-config", "--cflags", "--libs", "posenc"], check=False,
                env=env)
    pc_consumer = os.path.join(args.work, "consumer-pkg-config")
    if flags.returncode == 0:
        compiled = run([args.cxx, "-std=c++17",
                        *shlex.split(args.cxx_flags), "-o", pc_consumer,
                        os.path.join(args.consumer, "main.cc"),
                        *shlex.split(flags.stdout),
                        *shlex.split(args.link_flags)], check=False)
        check(compiled.returncode == 0,
              "the consumer builds with `pkg-config --cflags --libs posenc`:"
              f"\n{compiled.stderr[-3000:]}")
    else:
        check(False, f"pkg-config --cflags --libs posenc: {flags.stderr}")

    # Both run against the installed server.
    with ServerProcess(os.path.join(prefix, "bin", "posenc_server"),
                       os.path.join(args.work, "server.log")) as server:
        target = f"127.0.0.1:{server.wait_for_port()}"
        for name, binary in (("find_package", consumer),
                             ("pkg-config", pc_consumer)):
            if not os.path.exists(binary):
                check(False, f"{name} consumer was not built")
                continue
            out = run([binary, target], check=False)
            check(out.returncode == 0 and
                  out.stdout.strip() == WORKED_EXAMPLE,
                  f"{name} consumer prints {WORKED_EXAMPLE} from the "
                  f"installed server on {target} (exit {out.returncode}: "
                  f"{out.stdout.strip()!r} {out.stderr.strip()!r})")
    return checklist.summary()


if __name__ == "__main__":
    sys.exit(main())
