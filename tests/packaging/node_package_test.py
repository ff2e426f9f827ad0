#!/usr/bin/env python3
"""The Node client as a user gets it: `npm pack` makes the tarball (with the
proto and the TypeScript declarations), it installs into an empty project
offline (npm ci --offline, from the npm cache that client/node's lockfile
filled), and README's JavaScript example runs against a real posenc_server;
README's TypeScript example compiles with `tsc --strict` against the shipped
declarations, then runs too. A second TypeScript file checks that the
declarations reject misuse (so they are not `any`).

Usage: node_package_test.py --server PATH/posenc_server --source REPO
"""

import base64
import hashlib
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from checklist import Checklist  # noqa: E402
from package_checks import parse_args, run  # noqa: E402
from server_process import ServerProcess  # noqa: E402

README_PORT = "127.0.0.1:50320"
JS_EXPECT = ["float32 [ 16, 4 ]", "0.909297", "0 [ 64, 512 ] [ 0, 1 ]",
             "INVALID_ARGUMENT spec.d must be even"]
TS_EXPECT = ["float64 [ 16, 4 ]", "2 0.9092974268256817",
             "encode float32 [ 2, 256 ]", "true", "OUT_OF_RANGE"]

# Misuse the declarations must reject: each @ts-expect-error line must be an
# error, or tsc fails with "Unused '@ts-expect-error' directive".
MISUSE_TS = """\
import { PosencClient, PosencError, Tensor, bfloat16ToNumber } from 'posenc';

async function misuse(client: PosencClient): Promise<void> {
  // @ts-expect-error maxLen is required
  await client.table({ d: 4 });
  // A grid table needs no maxLen (this line must compile) ...
  await client.table({ d: 16, layout: 'concat_sin_cos', grid: {
    axes: [{ size: 4, channels: 8 }, { size: 4, channels: 8 }],
    channelOrder: [1, 0], sinCos: 'per_axis', extraZeroRows: 1 } });
  // @ts-expect-error ... but its axes
  await client.table({ d: 4, grid: {} });
  // @ts-expect-error no such dtype
  await client.table({ d: 4, maxLen: 4, dtype: 'int8' });
  // @ts-expect-error positions are numbers
  await client.gather({ d: 4, maxLen: 4 }, ['1']);
  // @ts-expect-error rows is an async iterator, not a promise
  const rows: Promise<Tensor> = client.rows({ d: 4, maxLen: 4 });
  // @ts-expect-error no such frequency scheme
  await client.encode({ dim: 4, frequency: 'paper' }, [1]);
  // @ts-expect-error positions are numbers
  await client.encode({ dim: 4 }, ['1']);
  // @ts-expect-error no such method
  client.nonesuch();
  // @ts-expect-error timeoutMs is a number
  new PosencClient('127.0.0.1:1', { timeoutMs: '10' });
  // @ts-expect-error codeName is a string
  const code: number = new PosencError(3, 'x').codeName;
  // @ts-expect-error bits are a number
  bfloat16ToNumber('1');
  void rows; void code;
}
void misuse;
"""


def consumer_lockfile(package_lock, tarball_name, tarball_path):
    """A lockfile for an empty project depending on the tarball: posenc's
    own dependency tree, taken from client/node's lockfile (dev ones left
    out), so `npm ci --offline` needs nothing but the npm cache."""
    with open(package_lock, encoding="utf-8") as f:
        lock = json.load(f)
    with open(tarball_path, "rb") as f:
        integrity = "sha512-" + base64.b64encode(
            hashlib.sha512(f.read()).digest()).decode()
    root = lock["packages"][""]
    spec = f"file:{tarball_name}"
    packages = {
        "": {"name": "posenc-readme-check", "version": "1.0.0",
             "dependencies": {"posenc": spec}},
        "node_modules/posenc": {
            "version": root["version"], "resolved": spec,
            "integrity": integrity, "license": root.get("license"),
            "dependencies": root["dependencies"],
            "engines": root.get("engines", {})},
    }
    for path, entry in lock["packages"].items():
        if path.startswith("node_modules/") and not entry.get("dev"):
            packages[path] = entry
    return {"name": "posenc-readme-check", "version": "1.0.0",
            "lockfileVersion": 3, "requires": True, "packages": packages}


def main():
    args = parse_args()
    node_dir = os.path.join(args.source, "client", "node")
    checklist = Checklist()
    check = checklist.check

    with open(os.path.join(node_dir, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    js_examples = re.findall(r"```js\n(.*?)```", readme, re.S)
    ts_examples = re.findall(r"```ts\n(.*?)```", readme, re.S)
    check(len(js_examples) == 1 and len(ts_examples) == 1,
          "README has one JavaScript and one TypeScript example")

    # client/node's own dependencies (and typescript), from its lockfile.
    run([os.path.join(node_dir, "install_deps.sh")])
    tsc = os.path.join(node_dir, "node_modules", ".bin", "tsc")

    with tempfile.TemporaryDirectory() as tmp, ServerProcess(
            args.server, os.path.join(tmp, "server.log")) as server:
        name = run(["npm", "pack", "--silent", "--pack-destination", tmp],
                   cwd=node_dir).strip().splitlines()[-1]
        tarball = os.path.join(tmp, name)
        listing = run(["tar", "tzf", tarball]).split()
        for path in ("package/src/index.d.ts",
                     "package/proto/posenc/v1/posenc.proto",
                     "package/src/index.js"):
            check(path in listing, f"the tarball holds {path}")
        check(not os.path.exists(os.path.join(node_dir, "proto")),
              "npm pack leaves no proto copy in client/node")

        project = os.path.join(tmp, "project")
        os.mkdir(project)
        os.rename(tarball, os.path.join(project, name))
        lock = consumer_lockfile(os.path.join(node_dir, "package-lock.json"),
                                 name, os.path.join(project, name))
        with open(os.path.join(project, "package.json"), "w") as f:
            json.dump({"name": "posenc-readme-check", "version": "1.0.0",
                       "private": True,
                       "dependencies": {"posenc": f"file:{name}"}}, f)
        with open(os.path.join(project, "package-lock.json"), "w") as f:
            json.dump(lock, f)
        run(["npm", "ci", "--offline", "--ignore-scripts", "--no-audit",
             "--no-fund", "--loglevel=error"], cwd=project)
        check(os.path.exists(os.path.join(
            project, "node_modules", "posenc", "src", "index.d.ts")),
            "npm ci --offline installed the tarball")

        target = f"127.0.0.1:{server.wait_for_port()}"
        with open(os.path.join(project, "example.js"), "w") as f:
            f.write(js_examples[0].replace(README_PORT, target))
        try:
            out = run(["node", "example.js"], cwd=project)
            missing = [t for t in JS_EXPECT if t not in out]
            check(not missing, f"README JavaScript example prints {JS_EXPECT}"
                  f" (missing {missing}):\n{out}")
        except AssertionError as e:
            check(False, f"README JavaScript example runs: {e}")

        with open(os.path.join(project, "example.ts"), "w") as f:
            f.write(ts_examples[0].replace(README_PORT, target))
        with open(os.path.join(project, "misuse.ts"), "w") as f:
            f.write(MISUSE_TS)
        tsc_flags = ["--strict", "--target", "es2020", "--module", "commonjs",
                     "--moduleResolution", "node", "--types", "node",
                     "--outDir", "out"]
        try:
            run([tsc, *tsc_flags, "example.ts", "misuse.ts"], cwd=project)
            check(True, "tsc --strict accepts the README TypeScript example "
                  "and rejects every misuse")
            out = run(["node", os.path.join("out", "example.js")],
                      cwd=project)
            missing = [t for t in TS_EXPECT if t not in out]
            check(not missing, f"README TypeScript example prints {TS_EXPECT}"
                  f" (missing {missing}):\n{out}")
        except AssertionError as e:
            check(False, f"README TypeScript example: {e}")
    return checklist.summary()


if __name__ == "__main__":
    sys.exit(main())
