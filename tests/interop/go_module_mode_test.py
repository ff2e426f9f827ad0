#!/usr/bin/python3
"""The Go client in module mode, as client/go/README.md tells a user to
vendor it: a service module whose go.mod is the README's, as written
(`require posenc/client/go v0.0.0` and `replace posenc/client/go =>
./third_party/posenc/client/go`), with the client at that path, builds
examples/table as its main package.

No module proxy is reachable here, so `go mod tidy` cannot fetch grpc; the
test makes what `go mod vendor` would: vendor/ with the client (by the
replace) and every module it imports linked from Debian's /usr/share/gocode,
vendor/modules.txt naming them, and those modules required in go.mod as
`go mod tidy` adds them (versions are placeholders: a vendored build
downloads nothing). Then `go build -mod=vendor` with GOPROXY=off, and
`go list -m` must show the replacement. Last, `go get posenc/client/go`
must fail at once on the dotless path, before any lookup.

Usage: go_module_mode_test.py --repo REPO --work DIR [--gocode DIR]
       [--gocache DIR]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys


def run(argv, cwd, env, check=True):
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=600)
    if check and p.returncode != 0:
        sys.exit(f"FAILED: {' '.join(argv)} (in {cwd}):\n{p.stdout}{p.stderr}")
    return p


def placeholder(module):
    """A version for a vendored module: v0.0.0, or vN.0.0 for a major
    version's path (.../v2), which go.mod requires to match."""
    major = re.search(r"/v([2-9]|[1-9][0-9]+)$", module)
    return f"v{major.group(1)}.0.0" if major else "v0.0.0"


def readme_go_mod(readme):
    """The README's go.mod block: the fenced block that starts with
    `module example.com/yourservice`."""
    text = open(readme, encoding="utf-8").read()
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M):
        if block.startswith("module example.com/yourservice\n"):
            return block
    sys.exit(f"FAILED: no go.mod block (module example.com/yourservice) "
             f"in {readme}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--gocode", default="/usr/share/gocode")
    ap.add_argument("--gocache", help="GOCACHE (default: one in --work)")
    a = ap.parse_args()
    client = os.path.join(a.repo, "client", "go")
    src = os.path.join(a.gocode, "src")
    shutil.rmtree(a.work, ignore_errors=True)
    svc = os.path.join(a.work, "yourservice")
    os.makedirs(os.path.join(svc, "third_party"))
    base_env = dict(os.environ, GOPROXY="off", GOFLAGS="",
                    GOCACHE=a.gocache or os.path.join(a.work, "gocache"),
                    GOPATH=os.path.join(a.work, "gopath"))

    # The service: the README's go.mod, the client where its replace points
    # (a link to this repository, as a git submodule would be), and
    # examples/table as the code that imports it.
    go_mod = readme_go_mod(os.path.join(client, "README.md"))
    m = re.search(r"^replace posenc/client/go => (\S+)$", go_mod, re.M)
    if not m or not re.search(r"^require posenc/client/go v0\.0\.0$",
                              go_mod, re.M):
        sys.exit(f"FAILED: the README's go.mod lacks the require and "
                 f"replace of posenc/client/go:\n{go_mod}")
    replace_dir = m.group(1)
    if replace_dir != "./third_party/posenc/client/go":
        sys.exit(f"FAILED: the test expects the client at "
                 f"./third_party/posenc/client/go, the README says "
                 f"{replace_dir}")
    os.symlink(a.repo, os.path.join(svc, "third_party", "posenc"))
    shutil.copy(os.path.join(client, "examples", "table", "main.go"), svc)

    # The packages the client imports, and the modules that hold them, from
    # a GOPATH build of the client (client/go/go.sh).
    env = dict(base_env, POSENC_GOPATH=os.path.join(a.work, "gopath-link"))
    deps = run([os.path.join(client, "go.sh"), "list", "-deps", "-f",
                "{{if not .Standard}}{{.ImportPath}} {{.Dir}}{{end}}",
                "./", "./posencv1"], client, env).stdout.split("\n")
    own, modules, roots = [], {}, {}
    for line in filter(None, deps):
        path, d = line.split(" ", 1)
        if path == "posenc/client/go" or path.startswith("posenc/client/go/"):
            own.append(path)
            continue
        root = d
        while not os.path.exists(os.path.join(root, "go.mod")):
            root = os.path.dirname(root)
            if not root.startswith(src + os.sep):
                sys.exit(f"FAILED: no go.mod above {d}")
        # A major version's module (github.com/cespare/xxhash/v2) sits in
        # GOPATH without its /v2, where GOPATH mode names its packages; in
        # module mode they are under the module's path.
        with open(os.path.join(root, "go.mod")) as f:
            module = re.search(r"^module (\S+)$", f.read(), re.M)
        if not module:
            sys.exit(f"FAILED: no module line in {root}/go.mod")
        mod = module.group(1)
        roots[mod] = root
        modules.setdefault(mod, []).append(
            mod + d[len(root):].replace(os.sep, "/"))
    for need in ("google.golang.org/grpc", "google.golang.org/protobuf",
                 "github.com/cespare/xxhash/v2"):
        if need not in modules:
            sys.exit(f"FAILED: the client imports nothing from {need}?")

    # vendor/: what `go mod vendor` writes, by links.
    vendor = os.path.join(svc, "vendor")
    lines = [f"# posenc/client/go v0.0.0 => {replace_dir}",
             "## explicit; go 1.19", *sorted(own)]
    os.makedirs(os.path.join(vendor, "posenc", "client"))
    os.symlink(client, os.path.join(vendor, "posenc", "client", "go"))
    for mod in sorted(modules):
        with open(os.path.join(roots[mod], "go.mod")) as f:
            go_version = re.search(r"^go (\S+)$", f.read(), re.M)
        lines.append(f"# {mod} {placeholder(mod)}")
        lines.append("## explicit" +
                     (f"; go {go_version.group(1)}" if go_version else ""))
        lines += sorted(modules[mod])
        os.makedirs(os.path.dirname(os.path.join(vendor, mod)),
                    exist_ok=True)
        os.symlink(roots[mod], os.path.join(vendor, mod))
    lines.append(f"# posenc/client/go => {replace_dir}")  # a path replace
    with open(os.path.join(vendor, "modules.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(svc, "go.mod"), "w") as f:
        f.write(go_mod + "\nrequire (\n" +
                "".join(f"\t{mod} {placeholder(mod)} // indirect\n"
                        for mod in sorted(modules)) + ")\n")

    env = dict(base_env, GO111MODULE="on", GOFLAGS="-mod=vendor")
    out = os.path.join(a.work, "yourservice-bin")
    run(["go", "build", "-o", out, "."], svc, env)
    run(["go", "vet", "."], svc, env)
    listed = run(["go", "list", "-m", "posenc/client/go"], svc, env).stdout
    if listed.strip() != f"posenc/client/go v0.0.0 => {replace_dir}":
        sys.exit(f"FAILED: go list -m posenc/client/go: {listed!r}")
    imports = run(["go", "list", "-deps", "."], svc, env).stdout.split()
    for need in ("posenc/client/go", "posenc/client/go/posencv1",
                 "google.golang.org/grpc"):
        if need not in imports:
            sys.exit(f"FAILED: the service does not import {need}")

    # Nobody can serve this path: go get refuses it before any lookup (in
    # a module of its own, with nothing else to look up).
    fresh = os.path.join(a.work, "fresh")
    os.makedirs(fresh)
    with open(os.path.join(fresh, "go.mod"), "w") as f:
        f.write("module example.com/fresh\n\ngo 1.19\n")
    got = run(["go", "get", "posenc/client/go"], fresh,
              dict(base_env, GO111MODULE="on"), check=False)
    if got.returncode == 0 or "missing dot in first path element" \
            not in got.stderr:
        sys.exit(f"FAILED: go get posenc/client/go: exit {got.returncode}"
                 f"\n{got.stderr}")
    print(f"module mode: the README's go.mod builds examples/table against "
          f"posenc/client/go => {replace_dir} with {len(modules)} modules "
          f"vendored from {src}; go get refuses the path")
    shutil.rmtree(a.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
