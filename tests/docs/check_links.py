#!/usr/bin/python3
"""Every link in the repository's Markdown resolves.

Checks each tracked *.md file (README.md, docs/, BENCHMARKS.md, the
clients' READMEs, ...):
  - a relative link `[text](path)`, `![alt](path)` or `[id]: path` names a
    file or directory that exists and is tracked by git (staged counts), so
    it resolves on GitHub too; `/path` is taken from the repository root;
  - a `#anchor`, alone or after a Markdown file, is the GitHub slug of a
    heading in that file (or an HTML `id=`/`name=` in it); after any other
    file only GitHub's line anchors `#L10` and `#L10-L20` are accepted;
  - an external link is checked for syntax only (http or https with a host,
    or mailto:), never fetched;
  - README.md links every docs/*.md page (its "Read more" index), so no
    page of depth is left unreachable.
Links inside code (fenced or indented blocks, `inline code`) are not links
and are skipped.

Before checking, it checks itself on a scratch tree with one link of each
kind, good and broken, so a broken pattern cannot pass everything.

Usage: check_links.py [REPO_ROOT]   (default: this repository)
Exit status: 0 every link resolves; 1 broken links (each listed as
FILE:LINE: problem); 2 the self-test failed.
"""
import os
import re
import subprocess
import sys
import tempfile
import unicodedata
import urllib.parse

# [text](target) or ![alt](target); target optionally <...>, then an
# optional "title". Text may hold one level of brackets ([`a[0]`](x)).
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]"
    r"\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
# [id]: target "title" (a reference definition, at most 3 spaces in).
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s+(<[^>]*>|\S+)")
# <https://...> autolinks.
AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]*)>")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
HTML_ID = re.compile(r"<[a-zA-Z][^>]*?\s(?:id|name)\s*=\s*[\"']([^\"']+)[\"']")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
LINE_ANCHOR = re.compile(r"L\d+(?:C\d+)?(?:-L\d+(?:C\d+)?)?")


def strip_code_spans(line):
    """The line with every `code span` blanked (same length)."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "`":
            run = len(line[i:]) - len(line[i:].lstrip("`"))
            ticks = line[i:i + run]
            end = line.find(ticks, i + run)
            # A closing run of exactly the same length ends the span.
            while end != -1 and line[end + run:end + run + 1] == "`":
                end = line.find(ticks, end + run + 1)
            if end == -1:
                out.append(ticks)
                i += run
                continue
            out.append(" " * (end + run - i))
            i = end + run
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def prose_lines(text):
    """(line number, line) of every line outside code blocks."""
    fence = None
    previous_blank = True
    in_list = False
    in_indented_code = False
    for number, line in enumerate(text.split("\n"), 1):
        if fence:
            if re.match(r"^ {0,3}" + re.escape(fence[0]) + "{%d,}[ \t]*$"
                        % len(fence), line):
                fence = None
            continue
        match = FENCE.match(line)
        if match:
            fence = match.group(1)
            previous_blank = False
            continue
        blank = not line.strip()
        indented = line.startswith("    ") or line.startswith("\t")
        if in_indented_code and (indented or blank):
            previous_blank = blank
            continue
        in_indented_code = False
        if indented and previous_blank and not in_list and not blank:
            in_indented_code = True
            previous_blank = False
            continue
        if not blank:
            if LIST_ITEM.match(line):
                in_list = True
            elif not line.startswith(" ") and previous_blank:
                in_list = False
        previous_blank = blank
        yield number, line


def github_slug(heading):
    """GitHub's anchor for a heading's text (before de-duplication)."""
    text = heading.strip()
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: text
    text = re.sub(r"<[^>]+>", "", text)                    # HTML tags
    # Emphasis markers go (not inside code spans; an underscore inside a
    # word, as in cold_rows_cpu, is no emphasis), then the backticks.
    parts = re.split(r"(`+[^`]*`+)", text)
    for k in range(0, len(parts), 2):
        parts[k] = re.sub(r"(\*\*|\*)(?=\S)(.+?)(?<=\S)\1", r"\2", parts[k])
        parts[k] = re.sub(r"(?<!\w)(__|_)(?=\S)(.+?)(?<=\S)\1(?!\w)", r"\2",
                          parts[k])
    text = "".join(parts).replace("`", "")
    text = text.lower()
    kept = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch in " -_" or category[0] in "LN" or category[0] == "M":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors_of(text):
    """Every anchor a Markdown file defines: heading slugs and HTML ids."""
    anchors, counts = set(), {}
    lines = list(prose_lines(text))
    previous = None
    for number, line in lines:
        heading = None
        match = ATX_HEADING.match(line)
        if match:
            heading = match.group(2) or ""
        elif (previous is not None and previous[0] == number - 1
              and previous[1].strip() and SETEXT_UNDERLINE.match(line)
              and not ATX_HEADING.match(previous[1])
              and not LIST_ITEM.match(previous[1])
              and (line.strip()[0] == "=" or len(line.strip()) >= 2)):
            heading = previous[1]
        if heading is not None:
            slug = github_slug(heading)
            n = counts.get(slug, 0)
            counts[slug] = n + 1
            anchors.add(slug if n == 0 else f"{slug}-{n}")
        for match in HTML_ID.finditer(line):
            anchors.add(match.group(1))
        previous = (number, line)
    return anchors


def links_of(text):
    """(line number, target) of every link outside code."""
    for number, line in prose_lines(text):
        match = REFERENCE_DEF.match(line)
        if match:
            yield number, match.group(1)
            continue
        line = strip_code_spans(line)
        for match in INLINE_LINK.finditer(line):
            yield number, match.group(1)
        for match in AUTOLINK.finditer(line):
            yield number, match.group(1)


def tracked_files(root):
    """Paths (relative, '/'-separated) in git's index, or None without git."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"],
                             check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}


def check_external(target):
    parsed = urllib.parse.urlsplit(target)
    if parsed.scheme == "mailto":
        return None if parsed.path and " " not in target else "bad mailto link"
    if parsed.scheme not in ("http", "https"):
        return f"unknown link scheme {parsed.scheme!r}"
    try:
        host = parsed.hostname
        parsed.port  # raises on a bad port
    except ValueError:
        host = None
    if not host or any(c.isspace() for c in target):
        return "malformed external URL"
    return None


def check_repo(root, md_files=None):
    """Problems as 'FILE:LINE: message' strings, and the link count."""
    root = os.path.abspath(root)
    tracked = tracked_files(root)
    if md_files is None:
        if tracked is None:
            md_files = []
            for base, dirs, files in os.walk(root):
                dirs[:] = [d for d in dirs if not d.startswith((".", "build"))
                           and d not in ("node_modules", "third_party")]
                md_files += [os.path.relpath(os.path.join(base, f), root)
                             for f in files if f.endswith(".md")]
        else:
            md_files = [p for p in tracked if p.endswith(".md")]
    tracked_dirs = set()
    for path in tracked or ():
        parts = path.split("/")
        for i in range(1, len(parts)):
            tracked_dirs.add("/".join(parts[:i]))
    anchor_cache = {}

    def anchors(rel):
        if rel not in anchor_cache:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                anchor_cache[rel] = anchors_of(f.read())
        return anchor_cache[rel]

    problems, count = [], 0
    linked_from_readme = set()
    for rel in sorted(md_files):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        for number, target in links_of(text):
            count += 1
            where = f"{rel}:{number}"
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1]
            if not target:
                problems.append(f"{where}: empty link target")
                continue
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                message = check_external(target)
                if message:
                    problems.append(f"{where}: {message}: {target}")
                continue
            path, _, fragment = target.partition("#")
            path = urllib.parse.unquote(path)
            fragment = urllib.parse.unquote(fragment)
            if path:
                base = root if path.startswith("/") else os.path.join(
                    root, os.path.dirname(rel))
                full = os.path.normpath(os.path.join(base, path.lstrip("/")))
                dest = os.path.relpath(full, root).replace(os.sep, "/")
                if dest.startswith("../") or dest == "..":
                    problems.append(f"{where}: {target} leaves the repository")
                    continue
                if not os.path.exists(full):
                    problems.append(f"{where}: {target}: no such file")
                    continue
                if tracked is not None and dest != "." and (
                        dest not in tracked and dest not in tracked_dirs):
                    problems.append(f"{where}: {target}: not tracked by git "
                                    f"(git add it, or it breaks on GitHub)")
                    continue
            else:
                dest = rel
            if rel == "README.md":
                linked_from_readme.add(dest)
            if not fragment:
                if "#" in target and not path:
                    problems.append(f"{where}: empty anchor")
                continue
            if dest.endswith(".md") and os.path.isfile(
                    os.path.join(root, dest)):
                if fragment not in anchors(dest):
                    problems.append(f"{where}: {target}: no heading or id "
                                    f"'#{fragment}' in {dest}")
            elif os.path.isdir(os.path.join(root, dest)) or not (
                    LINE_ANCHOR.fullmatch(fragment)):
                problems.append(f"{where}: {target}: anchor '#{fragment}' "
                                f"can only be checked in a Markdown file")
    if "README.md" in md_files:
        for rel in sorted(md_files):
            if (rel.startswith("docs/") and "/" not in rel[len("docs/"):]
                    and rel not in linked_from_readme):
                problems.append(f"README.md: {rel} is not linked from the "
                                f"README (add it to \"Read more\")")
    return problems, count


SELF_TEST_FILES = {
    "README.md": (
        "# Top\n\n"
        "## The `posenc` command-line client\n\n"
        "## bench/load.sh: a fraction\n\n"
        "## Scale-out: one table, one replica\n\n"
        "## Twice\n\n## Twice\n\n"
        "Setext heading\n--------------\n\n"
        "<a id=\"custom\"></a>\n\n"
        "[ok](docs/a.md) [ok](docs/a.md#section-one) [ok](#top)\n"
        "[ok](#the-posenc-command-line-client) [ok](#benchloadsh-a-fraction)\n"
        "[ok](#scale-out-one-table-one-replica) [ok](#twice-1) [ok](#custom)\n"
        "[ok](#setext-heading) [ok](docs/) [ok](<docs/a.md>) [ok](src/x.cc#L3)\n"
        "[ok](https://example.com/a_(b)) <https://example.com> [ok](/docs/a.md)\n"
        "![ok](docs/a.md \"title\") [ok][ref] [ok](mailto:a@example.com)\n"
        "`[code](missing.md)`\n\n"
        "```\n[code](missing.md)\n```\n\n"
        "    [indented code](missing.md)\n\n"
        "- a list\n\n"
        "    [list paragraph, not code](nothere.md)\n\n"
        "[bad](missing.md) [bad](#nowhere) [bad](docs/a.md#nowhere)\n"
        "[bad](#twice-2) [bad](untracked.md) [bad](https://) [bad](ftp://x.y)\n"
        "| `--a` | [bad](c.md) `--b` | [bad](src/x.cc#main) [bad](../outside.md)\n\n"
        "[ref]: docs/a.md#section-one\n"
        "[badref]: docs/missing.md\n"),
    "docs/a.md": "# A\n\n## Section one\n\n[ok](../README.md#top)\n",
    "docs/unlinked.md": "# Not in the README\n",
    "src/x.cc": "int main() {}\n",
    "untracked.md": "# untracked\n",
}
SELF_TEST_EXPECTED = [
    "README.md:34: nothere.md: no such file",
    "README.md:36: missing.md: no such file",
    "README.md:36: #nowhere: no heading or id '#nowhere' in README.md",
    "README.md:36: docs/a.md#nowhere: no heading or id '#nowhere' in docs/a.md",
    "README.md:37: #twice-2: no heading or id '#twice-2' in README.md",
    "README.md:37: untracked.md: not tracked by git",
    "README.md:37: malformed external URL: https://",
    "README.md:37: unknown link scheme 'ftp': ftp://x.y",
    "README.md:38: c.md: no such file",
    "README.md:38: src/x.cc#main: anchor '#main' can only be checked",
    "README.md:38: ../outside.md leaves the repository",
    "README.md:41: docs/missing.md: no such file",
    "README.md: docs/unlinked.md is not linked from the README",
]


def self_test():
    """Runs the checker on a scratch repository; True when it behaves."""
    with tempfile.TemporaryDirectory(prefix="posenc-check-links.") as tmp:
        for rel, text in SELF_TEST_FILES.items():
            os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
                f.write(text)
        subprocess.run(["git", "init", "-q", tmp], check=True)
        subprocess.run(["git", "-C", tmp, "add", "README.md", "docs", "src"],
                       check=True)
        problems, count = check_repo(tmp)
    # Each expected problem is a prefix-or-substring match of one problem,
    # in order; nothing else may be reported.
    ok = len(problems) == len(SELF_TEST_EXPECTED) and all(
        expected.split(": ", 1)[0] == got.split(": ", 1)[0]
        and expected.split(": ", 1)[1] in got
        for expected, got in zip(SELF_TEST_EXPECTED, problems))
    if not ok:
        print("check_links.py: self-test FAILED\nexpected:\n  "
              + "\n  ".join(SELF_TEST_EXPECTED) + "\ngot:\n  "
              + "\n  ".join(problems), file=sys.stderr)
    return ok, count


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..")
    ok, self_count = self_test()
    if not ok:
        return 2
    problems, count = check_repo(root)
    for problem in problems:
        print(f"check_links.py: {problem}", file=sys.stderr)
    if problems:
        print(f"check_links.py: {len(problems)} problem(s) in {count} links",
              file=sys.stderr)
        return 1
    print(f"check_links.py: {count} links resolve (self-test: "
          f"{self_count} links, {len(SELF_TEST_EXPECTED)} broken, found)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
