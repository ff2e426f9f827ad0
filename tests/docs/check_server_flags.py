#!/usr/bin/env python3
"""docs/operations.md's flag table matches `posenc_server --helpfull`.

Usage: check_server_flags.py REPO_ROOT POSENC_SERVER

The server's own flags are those --helpfull lists under "Flags from
server/...:" (Abseil's are under their own files). Every one of them must
have a row in the table of docs/operations.md's "## Flags" section, with the
same default, and the table must have no row for a flag the server does not
have. A default cell is compared by its first `code` span; a cell without
one that says "empty" is the empty string. Exits 1 naming each mismatch.
"""
import re
import subprocess
import sys


def server_flags(binary):
    out = subprocess.run([binary, "--helpfull"], capture_output=True,
                         text=True, timeout=30, check=False)
    if out.returncode != 0:
        sys.exit(f"{binary} --helpfull exited {out.returncode}: {out.stderr}")
    flags, own = {}, False
    for line in out.stdout.splitlines():
        section = re.match(r"\s*Flags from (\S+):$", line)
        if section:
            own = section.group(1).startswith("/server/") or \
                section.group(1).startswith("server/")
            continue
        flag = re.match(r"\s+--(\w+) \(.*\); default: (.*);$", line)
        if flag and own:
            default = flag.group(2)
            if default.startswith('"') and default.endswith('"'):
                default = default[1:-1]
            flags[flag.group(1)] = default
    return flags


def doc_flags(path):
    text = open(path, encoding="utf-8").read()
    section = text.split("\n## Flags\n", 1)[1].split("\n## ", 1)[0]
    flags = {}
    for line in section.splitlines():
        row = re.match(r"\|\s*`--(\w+)`\s*\|([^|]*)\|", line)
        if not row:
            continue
        cell = row.group(2)
        code = re.search(r"`([^`]*)`", cell)
        if code:
            flags[row.group(1)] = code.group(1)
        elif "empty" in cell:
            flags[row.group(1)] = ""
        else:
            flags[row.group(1)] = cell.strip()
    return flags


def compare(server, doc):
    errors = []
    for name, default in sorted(server.items()):
        if name not in doc:
            errors.append(f"--{name} (default {default!r}) has no row in "
                          "docs/operations.md's flag table")
        elif doc[name] != default:
            errors.append(f"--{name}: the table says default {doc[name]!r}, "
                          f"--helpfull says {default!r}")
    for name in sorted(set(doc) - set(server)):
        errors.append(f"--{name} is in docs/operations.md's flag table but "
                      "posenc_server has no such flag")
    return errors


def self_check():
    """The comparison catches each kind of drift (a test that cannot fail is
    a defect)."""
    server = {"listen": "127.0.0.1:50051", "metrics_listen": ""}
    assert compare(server, dict(server)) == []
    assert len(compare(server, {"listen": "127.0.0.1:50051"})) == 1
    assert len(compare(server, {**server, "gone": "1"})) == 1
    assert len(compare(server, {**server, "listen": "0.0.0.0:1"})) == 1


def main():
    self_check()
    repo, binary = sys.argv[1], sys.argv[2]
    server = server_flags(binary)
    if len(server) < 10:
        sys.exit(f"only {len(server)} server flags parsed from --helpfull: "
                 "has its layout changed?")
    errors = compare(server, doc_flags(f"{repo}/docs/operations.md"))
    for error in errors:
        print(error)
    if errors:
        return 1
    print(f"docs/operations.md's flag table matches --helpfull: "
          f"{len(server)} flags")
    return 0


if __name__ == "__main__":
    sys.exit(main())
