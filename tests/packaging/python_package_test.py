#!/usr/bin/env python3
"""The Python client as a user gets it: `python3 -m build` makes a wheel
(protoc runs in the build hook), the wheel installs into a fresh venv on
Debian's interpreter (--system-site-packages, no index: Debian's grpcio,
protobuf and numpy must satisfy the declared dependencies), and README's
sync and asyncio examples run, as written, against a real posenc_server.
The README's one-line source install is checked the same way.

Usage: python_package_test.py --server PATH/posenc_server --source REPO
"""

import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from checklist import Checklist  # noqa: E402
from package_checks import parse_args, run  # noqa: E402
from server_process import ServerProcess  # noqa: E402

PYTHON = "/usr/bin/python3"  # Debian's, with python3-grpcio
README_PORT = "127.0.0.1:50320"

# What each README example must print (its comments say so too).
SYNC_EXPECT = ["float32 (16, 4)", "0.9092974", "encode float32 (2, 256)",
               "INVALID_ARGUMENT"]
ASYNC_EXPECT = ["float32 (16, 4)", "2 [ 0.9092974", "(2, 4)",
                "INVALID_ARGUMENT"]


# Beyond the README: asyncio streams raise PosencError, and leaving an
# `async for` early ends the stream cleanly.
AIO_STREAMS = """\
import asyncio
import sys

import posenc


async def main():
    async with posenc.aio.Client(sys.argv[1], timeout=10) as client:
        try:
            async for _ in client.rows(posenc.TableSpec(d=4, max_len=16),
                                       start=20):
                pass
        except posenc.PosencError as error:
            print("stream error", error.code_name)
        seen = 0
        async for _, batch in client.batches(
                posenc.TableSpec(d=512, max_len=1000000), rows_per_batch=16):
            seen += batch.shape[0]
            if seen >= 32:
                break
        print("left after", seen)
        stats = await client.stats()
        print("budget", stats.cache.budget_bytes > 0)


asyncio.run(main())
"""
AIO_EXPECT = ["stream error OUT_OF_RANGE", "left after 32", "budget True"]


def clean_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PIP_NO_INPUT"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def readme_examples(readme):
    with open(readme, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def make_venv(path):
    run([PYTHON, "-m", "venv", "--system-site-packages", path])
    return os.path.join(path, "bin", "python")


def main():
    args = parse_args()
    package_dir = os.path.join(args.source, "client", "python")
    checklist = Checklist()
    check = checklist.check

    examples = readme_examples(os.path.join(package_dir, "README.md"))
    check(len(examples) == 2, f"README has 2 Python examples ({len(examples)})")
    env = clean_env()
    with tempfile.TemporaryDirectory() as tmp, ServerProcess(
            args.server, os.path.join(tmp, "server.log")) as server:
        dist = os.path.join(tmp, "dist")
        run([PYTHON, "-m", "build", "--no-isolation", "--outdir", dist,
             package_dir], env=env)
        wheels = [f for f in os.listdir(dist) if f.endswith(".whl")]
        check(wheels == ["posenc-0.1.0-py3-none-any.whl"],
              f"python3 -m build makes one wheel: {wheels}")

        venv_python = make_venv(os.path.join(tmp, "venv-wheel"))
        run([venv_python, "-m", "pip", "install", "--no-index",
             os.path.join(dist, wheels[0])], env=env)
        source_python = make_venv(os.path.join(tmp, "venv-source"))
        run([source_python, "-m", "pip", "install", "--no-index",
             "--no-build-isolation", package_dir], env=env)

        target = f"127.0.0.1:{server.wait_for_port()}"
        for name, python in (("wheel", venv_python),
                             ("source", source_python)):
            venv = os.path.dirname(os.path.dirname(python))
            where = run([python, "-c",
                         "import os, posenc, posenc.aio, posenc.v1.posenc_pb2"
                         " as pb; d = os.path.dirname(posenc.__file__);"
                         " print(d);"
                         " print(os.path.exists(os.path.join(d, 'py.typed')));"
                         " print(os.path.exists(pb.__file__[:-3] + '.pyi'))"],
                        env=env, cwd=tmp).split()
            check(where[0].startswith(venv + os.sep),
                  f"{name}: posenc imports from the venv ({where[0]})")
            check(where[1:] == ["True", "True"],
                  f"{name}: py.typed and posenc_pb2.pyi installed")
            for example, expected in zip(examples,
                                         (SYNC_EXPECT, ASYNC_EXPECT)):
                kind = "async" if "asyncio" in example else "sync"
                script = os.path.join(tmp, f"example_{kind}.py")
                with open(script, "w", encoding="utf-8") as f:
                    f.write(example.replace(README_PORT, target))
                try:
                    out = run([python, script], env=env, cwd=tmp)
                except AssertionError as e:
                    check(False, f"{name}: README {kind} example runs: {e}")
                    continue
                missing = [text for text in expected if text not in out]
                check(not missing, f"{name}: README {kind} example prints "
                      f"{expected} (missing {missing}):\n{out}")
        script = os.path.join(tmp, "aio_streams.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(AIO_STREAMS)
        out = run([venv_python, script, target], env=env, cwd=tmp)
        missing = [text for text in AIO_EXPECT if text not in out]
        check(not missing, f"wheel: asyncio stream errors and early exit "
              f"{AIO_EXPECT} (missing {missing}):\n{out}")
    return checklist.summary()


if __name__ == "__main__":
    sys.exit(main())
