#!/usr/bin/python3
"""Runs the README's commands as written: Quick start and Clients.

Usage: readme_commands.py REPO_ROOT WORK_DIR [--existing-build BUILD_DIR]

Copies the repository's files (tracked and untracked, not ignored) into
WORK_DIR/repo, a fresh tree, and there runs, in README order, every command
block of the README's "Quick start" and "Clients" sections, verbatim:

- `scripts/serve.sh` (the fresh Release build of build-server/, then the
  server on 127.0.0.1:50051) in the background, until it logs "listening on";
- a block of `$ command` lines: each command, its output compared with the
  lines the README shows under it, exactly;
- any other shell block: one `bash -euo pipefail` script;
- a ```python block: with the interpreter of the venv the README made
  (.venv/bin/python); a ```js block: with node, where the README's npm
  install put the package; each must exit 0, and every decimal number in a
  `print(...)`/`console.log(...)` line's comment must begin a number it
  printed.

Blocks it does not run are reported, with the reason, on stdout: grpcurl
(not in Debian 12) runs through tests/docs/grpcurl_shim.py, which makes the
same call with the same proto3 JSON both ways; `scripts/test.sh` (the whole
suite, this run is part of it); C++ and Go fragments (no main: the clients'
own tests compile them); the "Same host" subsection (a second server on the
first one's port). A block the script cannot classify fails the test.
Finally SIGINT must stop the server with exit 0. Exits 1 naming each failure.

scripts/serve.sh first runs scripts/build-grpc.sh, which rebuilds the patched
gRPC (10-25 minutes, into the shared /opt/posenc/grpc) unless that prefix's
stamp is the one the tree's script and patches make. The test computes that
stamp as build-grpc.sh does; when it differs it runs nothing and exits 77
(skipped, with the reason; under CI=true scripts/test.sh counts a skip as a
failure, and there build-grpc.sh has just run). --existing-build, for
iterating on this script only, stands BUILD_DIR's binaries in for
build-server/ instead of running serve.sh, and says so.
"""
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time

README_SECTIONS = ("## Quick start", "## Clients")
SKIPPED_SUBSECTIONS = {
    "### Same host": "starts a second posenc_server on 127.0.0.1:50051, "
                     "which the Quick start's server holds (tests/integration/"
                     "shared_memory_test.cc and docker_compose_shm run it)",
}
failures = []


def log(message):
    print(f"readme_commands: {message}", flush=True)


def fail(message):
    failures.append(message)
    log(f"FAIL: {message}")


def blocks(readme):
    """(section heading, language, text) of each code block of the README's
    chosen sections: fenced (```lang) or indented by 4 spaces ("sh")."""
    out, section, subsection = [], None, None
    lines = readme.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = next((s for s in README_SECTIONS
                            if line.startswith(s)), None)
            subsection = None
        elif line.startswith("### "):
            subsection = line
        if section is None:
            i += 1
            continue
        heading = subsection or section
        fence = re.match(r"```(\w*)", line)
        if fence:
            body = []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((heading, fence.group(1) or "sh", "\n".join(body)))
        elif line.startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            body = []
            while i < len(lines) and (lines[i].startswith("    ") or
                                      not lines[i].strip()):
                body.append(lines[i][4:])
                i += 1
            out.append((heading, "sh", "\n".join(body).strip("\n")))
            continue
        i += 1
    return out


def copy_tree(repo, dest):
    if os.path.exists(dest):
        shutil.rmtree(dest)
    files = subprocess.run(
        ["git", "-C", repo, "ls-files", "-co", "--exclude-standard", "-z"],
        capture_output=True, check=True).stdout.decode().split("\0")
    for name in files:
        if not name or name.startswith("build"):
            continue
        src, dst = os.path.join(repo, name), os.path.join(dest, name)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):  # e.g. client/python/proto -> ../../proto
            os.symlink(os.readlink(src), dst)
        elif os.path.isfile(src):
            shutil.copy2(src, dst)


def bash(script, cwd, env, timeout=900):
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script],
                          cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def numbers_match(comment, output):
    """Every decimal number of `comment` ("…" cut) begins a number of
    `output`."""
    printed = re.findall(r"-?\d+\.\d+(?:e-?\d+)?", output)
    for want in re.findall(r"-?\d+\.\d+", comment.replace("…", "")):
        if not any(p.startswith(want) for p in printed):
            return f"{want} not printed (got {printed[:8]})"
    return None


def run_snippet(heading, command, path, code, cwd, env):
    result = subprocess.run(command + [path], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        fail(f"{heading}: {os.path.basename(path)} exited "
             f"{result.returncode}: {result.stderr[-2000:]}")
        return
    log(f"{heading}: {' '.join(command)} printed {result.stdout.strip()!r}")
    for line in code.splitlines():
        shown = re.search(r"(?:print|console\.log)\(.*?(?:#|//)\s*(.*)$",
                          line)
        if shown:
            problem = numbers_match(shown.group(1), result.stdout)
            if problem:
                fail(f"{heading}: `{line.strip()}`: {problem}")


def run_prompt_block(heading, text, cwd, env):
    """`$ command` lines, each followed by its expected output."""
    command, expected = None, []

    def check():
        if command is None:
            return
        result = bash(command, cwd, env)
        got = result.stdout.rstrip("\n").splitlines()
        if result.returncode != 0 or got != expected:
            fail(f"{heading}: `{command}` exited {result.returncode}, "
                 f"printed {got}, the README shows {expected}; "
                 f"stderr: {result.stderr[-1000:]}")
        else:
            log(f"{heading}: `{command}` printed what the README shows")

    for line in text.splitlines():
        if line.startswith("$ "):
            check()
            command, expected = line[2:], []
        else:
            expected.append(line)
    check()


def wait_for_server(process, log_path, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with open(log_path, errors="replace") as f:
            if "listening on" in f.read():
                return True
        if process.poll() is not None:
            return False
        time.sleep(1)
    return False


def grpc_stamp(repo):
    """The stamp scripts/build-grpc.sh computes for its release flavor
    (stamp_input: the flavor, the pinned hashes, the series, each patch, the
    script itself; SHA-256, 16 hex)."""
    script = open(os.path.join(repo, "scripts/build-grpc.sh"), "rb").read()
    text = script.decode()
    orig = re.search(r"^orig_sha256=(\S+)", text, re.M).group(1)
    debian = re.search(r"^debian_sha256=(\S+)", text, re.M).group(1)
    patches = os.path.join(repo, "third_party/grpc/patches")
    series = open(os.path.join(patches, "series"), "rb").read()
    data = f"release {orig} {debian}\n".encode() + series
    for line in series.decode().splitlines():
        if not line.startswith("#"):
            for name in line.split():
                with open(os.path.join(patches, name), "rb") as f:
                    data += f.read()
    return hashlib.sha256(data + script).hexdigest()[:16]


def main():
    repo, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    existing = None
    if sys.argv[3:4] == ["--existing-build"]:
        existing = os.path.abspath(sys.argv[4])
        log(f"--existing-build {existing}: NOT the fresh build; serve.sh is "
            "replaced by that build's posenc_server")
    else:
        prefix = os.environ.get("POSENC_GRPC_PREFIX", "/opt/posenc/grpc")
        try:
            installed = open(os.path.join(prefix, "posenc-stamp")).read().strip()
        except OSError:
            installed = "(none)"
        if installed != grpc_stamp(repo):
            log(f"SKIPPED: {prefix}/posenc-stamp is {installed}, this tree's "
                f"scripts/build-grpc.sh makes {grpc_stamp(repo)}: "
                "scripts/serve.sh would rebuild the shared patched gRPC "
                "first (run scripts/build-grpc.sh, then this test)")
            return 77
    tree = os.path.join(work, "repo")
    with open(os.path.join(repo, "README.md"), encoding="utf-8") as f:
        found = blocks(f.read())
    if not any("scripts/serve.sh" == text.strip() for _, _, text in found):
        sys.exit("README's Quick start has no `scripts/serve.sh` block")
    log(f"{len(found)} command blocks in Quick start and Clients; copying "
        f"the tree to {tree}")
    copy_tree(repo, tree)
    env = dict(os.environ)
    stubs = os.path.join(work, "stubs")
    subprocess.run([os.path.join(tree, "client/python/gen_stubs.sh"), stubs],
                   check=True)
    shim_dir = os.path.join(work, "bin")
    os.makedirs(shim_dir, exist_ok=True)
    shim = os.path.join(shim_dir, "grpcurl")
    have_grpcurl = shutil.which("grpcurl") is not None
    if not have_grpcurl:
        with open(shim, "w") as f:
            f.write("#!/bin/sh\nexec /usr/bin/python3 "
                    f"{os.path.dirname(os.path.abspath(__file__))}"
                    "/grpcurl_shim.py \"$@\"\n")
        os.chmod(shim, 0o755)
        env["PATH"] = f"{shim_dir}:{env['PATH']}"
        env["POSENC_STUBS"] = stubs

    server, server_log = None, os.path.join(work, "serve.log")
    try:
        for heading, language, text in found:
            first = text.strip().splitlines()[0] if text.strip() else ""
            skip = next((why for prefix, why in SKIPPED_SUBSECTIONS.items()
                         if heading.startswith(prefix)), None)
            if skip:
                log(f"NOT RUN ({heading}): `{first}`: {skip}")
            elif language in ("cpp", "go"):
                log(f"NOT RUN ({heading}): the {language} block is a fragment "
                    "(no main); the client's own tests compile and run it")
            elif text.strip() == "scripts/serve.sh" and existing:
                os.symlink(existing, os.path.join(tree, "build-server"))
                server = subprocess.Popen(
                    [os.path.join(existing, "server/posenc_server")],
                    cwd=tree, env=env, stdout=open(server_log, "w"),
                    stderr=subprocess.STDOUT)
                if not wait_for_server(server, server_log, 60):
                    fail("the existing build's posenc_server did not serve")
                    return 1
                log(f"{heading}: serve.sh replaced by {existing}'s server")
            elif text.strip() == "scripts/serve.sh":
                log(f"{heading}: scripts/serve.sh (fresh build of "
                    f"build-server/, then the server; log: {server_log})")
                server = subprocess.Popen(
                    ["bash", "-c", "exec scripts/serve.sh"], cwd=tree,
                    env=env, stdout=open(server_log, "w"),
                    stderr=subprocess.STDOUT)
                if not wait_for_server(server, server_log, 3000):
                    with open(server_log, errors="replace") as f:
                        tail = f.read()[-3000:]
                    fail(f"scripts/serve.sh did not serve: {tail}")
                    return 1
                log("the server is listening")
            elif text.strip() == "scripts/test.sh":
                log(f"NOT RUN ({heading}): scripts/test.sh runs every suite, "
                    "this test among them (it would run itself)")
            elif language == "sh" and text.lstrip().startswith("$ "):
                run_prompt_block(heading, text, tree, env)
            elif language == "sh":
                if "grpcurl" in text and not have_grpcurl:
                    log(f"{heading}: grpcurl is not installed (not in "
                        "Debian 12): its call runs through "
                        "tests/docs/grpcurl_shim.py, the same call with "
                        "proto3 JSON both ways, the rest of the line as "
                        "written")
                result = bash(text, tree, env)
                if result.returncode != 0:
                    fail(f"{heading}: block `{first}` exited "
                         f"{result.returncode}: {result.stderr[-2000:]}")
                else:
                    log(f"{heading}: `{first}` ... ran "
                        f"({len(text.splitlines())} lines); printed "
                        f"{result.stdout.strip()[-300:]!r}")
                    shown = re.search(r"It prints row 2, `([^`]*)`",
                                      open(os.path.join(repo, "README.md"),
                                           encoding="utf-8").read())
                    if "grpcurl" in text and shown:
                        problem = numbers_match(shown.group(1), result.stdout)
                        if problem:
                            fail(f"{heading}: grpcurl line: {problem}")
            elif language == "python":
                path = os.path.join(work, "readme_snippet.py")
                with open(path, "w") as f:
                    f.write(text + "\n")
                run_snippet(heading, [os.path.join(tree, ".venv/bin/python")],
                            path, text, tree, env)
            elif language == "js":
                path = os.path.join(tree, "readme_snippet.js")
                with open(path, "w") as f:
                    f.write(text + "\n")
                run_snippet(heading, ["node"], path, text, tree, env)
            else:
                fail(f"{heading}: a ```{language} block this test cannot "
                     "run; teach tests/docs/readme_commands.py")
    finally:
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                code = server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                code = "none (killed after 60 s)"
            if code != 0:
                fail(f"the server exited {code} on SIGINT")
            else:
                log("SIGINT: the server drained and exited 0")
    if failures:
        log(f"{len(failures)} failure(s)")
        return 1
    log("PASS: the README's Quick start and Clients commands work as written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
