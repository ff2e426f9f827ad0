#!/usr/bin/python3
"""The interop test: C++, Python, Go and Node clients against one server.

Starts posenc_server on a free 127.0.0.1 port with a 1 MiB message limit,
runs the same script of calls (SCRIPT.md) in each language and asserts that
every language prints exactly the lines of tests/golden/interop.txt, the
transcript computed by make_golden with MPFR, and that the worked example
d=4 pos=2 is (0.9093, -0.4161, 0.0200, 0.9998) within 1e-4. With
--make-golden it also checks that the committed goldens are current.

Then a second server with --shm_dir (a fresh directory under /dev/shm,
removed after): the Python, Go and Node clients fetch the script's GetTable tables
through shared memory (--shared-memory), and each line must equal the
golden line of the same name, every table read from the server's files.

Every step has a timeout and the server is stopped on every exit path (and
dies with this process, via PR_SET_PDEATHSIG).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from server_process import ServerProcess, die_with_parent  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"  # Debian's, with python3-grpcio
EXAMPLE = (0.9093, -0.4161, 0.0200, 0.9998)
CLIENT_SECONDS = 40
# The GetTable lines a client fetches through shared memory (SCRIPT.md).
SHM_TABLES = ("d4_f32", "d512_f64_concat", "d1024_f16_t2t", "d64_bf16_cossin",
              "rope_llama3_bf16", "rope_yarn_pairs_f32", "rope_longrope_f64",
              "grid_crop_f16")


def run(name, argv, env=None, timeout=CLIENT_SECONDS):
    """stdout lines of a client run; raises on failure or timeout."""
    try:
        result = subprocess.run(argv, capture_output=True, timeout=timeout,
                                env=env, stdin=subprocess.DEVNULL,
                                preexec_fn=die_with_parent)
    except subprocess.TimeoutExpired as error:
        raise RuntimeError(f"{name}: timed out after {timeout}s") from error
    if result.returncode != 0:
        raise RuntimeError(f"{name}: exit {result.returncode}\n"
                           + result.stderr.decode(errors="replace")[-4000:])
    return result.stdout.decode().splitlines()


def check_example(language, lines):
    """The worked example line holds within 1e-4; returns a failure or None."""
    example = [l for l in lines if l.startswith("Example d4_pos2 ")]
    if len(example) != 1:
        return f"{language}: no Example line"
    values = [float(v) for v in example[0].split()[2:]]
    if len(values) != 4 or any(abs(a - b) > 1e-4
                               for a, b in zip(values, EXAMPLE)):
        return f"{language}: example {values} != {EXAMPLE} (+-1e-4)"
    return None


def check_shared_memory(language, lines, golden):
    """A --shared-memory run: the golden GetTable line of each SHM_TABLES
    name, then every table mapped. Returns the failures."""
    want = [next(g for g in golden if g.startswith(f"GetTable {name} "))
            for name in SHM_TABLES]
    want.append(f"SharedMemory mapped {len(SHM_TABLES)} of "
                f"{len(SHM_TABLES)}")
    if len(lines) != len(want):
        return [f"{language} shared memory: {len(lines)} lines, want "
                f"{len(want)}:\n" + "\n".join(lines)]
    return [f"{language} shared memory: got  {got}\n"
            f"{' ' * len(language)}                want {w}"
            for got, w in zip(lines, want) if got != w]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", required=True)
    parser.add_argument("--cpp", required=True)
    parser.add_argument("--python-path", required=True)
    parser.add_argument("--go", required=True)
    parser.add_argument("--node-dir", required=True)
    parser.add_argument("--golden", required=True)
    parser.add_argument("--make-golden")
    args = parser.parse_args()

    with open(args.golden) as f:
        golden = f.read().splitlines()
    failures = []
    if args.make_golden:
        fresh = run("make_golden", [args.make_golden], timeout=60)
        if fresh != golden:
            failures.append(f"{args.golden} is stale: regenerate it with "
                            "`ninja -C build posenc_regen_golden`")

    subprocess.run([os.path.join(args.node_dir, "install_deps.sh")],
                   check=True, timeout=120, stdin=subprocess.DEVNULL)

    with tempfile.TemporaryDirectory(prefix="posenc-interop-") as tmp:
        server = ServerProcess(args.server, os.path.join(tmp, "server.log"),
                               ["--max_message_bytes=1048576"])
        try:
            target = f"127.0.0.1:{server.wait_for_port()}"
            py_env = dict(os.environ, PYTHONPATH=args.python_path)
            outputs = {
                "cpp": run("cpp", [args.cpp, target]),
                "python": run("python", [PYTHON, os.path.join(
                    HERE, "interop_py.py"), target], env=py_env),
                "go": run("go", [args.go, target]),
                "node": run("node", ["node", os.path.join(
                    HERE, "interop_node.js"), target, args.node_dir]),
            }
        except Exception:
            print("server log:\n" + server.tail(), file=sys.stderr)
            raise
        finally:
            server.stop()

        shm_dir = tempfile.mkdtemp(prefix="posenc-interop-", dir="/dev/shm")
        server = ServerProcess(args.server, os.path.join(tmp, "shm.log"),
                               ["--max_message_bytes=1048576",
                                f"--shm_dir={shm_dir}"])
        try:
            target = f"127.0.0.1:{server.wait_for_port()}"
            shm_outputs = {
                "python": run("python shared memory", [PYTHON, os.path.join(
                    HERE, "interop_py.py"), target, "--shared-memory"],
                    env=py_env),
                "go": run("go shared memory",
                          [args.go, target, "--shared-memory"]),
                "node": run("node shared memory", ["node", os.path.join(
                    HERE, "interop_node.js"), target, args.node_dir,
                    "--shared-memory"]),
            }
        except Exception:
            print("server log:\n" + server.tail(), file=sys.stderr)
            raise
        finally:
            server.stop()
            shutil.rmtree(shm_dir, ignore_errors=True)

    print(f"{'golden':8} " + "\n         ".join(golden))
    for language, lines in outputs.items():
        if lines != outputs["cpp"]:
            failures.append(f"{language} disagrees with cpp")
        if len(lines) != len(golden):
            failures.append(f"{language}: {len(lines)} lines, golden has "
                            f"{len(golden)}")
        for got, want in zip(lines, golden):
            if got != want:
                failures.append(f"{language}: got  {got}\n"
                                f"{' ' * len(language)}  want {want}")
        failure = check_example(language, lines)
        if failure:
            failures.append(failure)
    for language, lines in shm_outputs.items():
        failures += check_shared_memory(language, lines, golden)
    for language, lines in outputs.items():
        same = sum(g == w for g, w in zip(lines, golden))
        print(f"{language:8} {same}/{len(golden)} lines equal the goldens")
    for language, lines in shm_outputs.items():
        print(f"{language:8} shared memory: " + " | ".join(lines[-1:]))

    checks = len(outputs) * (len(golden) + 3) + (1 if args.make_golden else 0)
    checks += len(shm_outputs) * (len(SHM_TABLES) + 1)
    for failure in failures:
        print("FAIL " + failure)
    print(f"interop: {checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
