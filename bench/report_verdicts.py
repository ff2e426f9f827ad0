#!/usr/bin/python3
"""bench/report_verdicts.py: the verdict table of BENCHMARKS.md, generated.

bench/report.sh runs every benchmark that has a target and keeps each tool's
output verbatim under a "### <title>" heading, in a fenced block. This reads
those sections and prints one markdown table row per verdict the tools
printed, so the table is never edited by hand and cannot disagree with the
output beside it.

A verdict line is any output line that names a target (a bound: ">=", "<=",
"≥" or "≤" before a number) and ends a clause with one of the verdicts of the one
noise rule (bench/noise.py): "met", "within noise", "MISSED" (a table's
"within-noise" and a lower-case "missed" count as the same). Each tool already prints its figure,
its interval and its target on that line; the row keeps the line whole.
A row of a tool's own markdown table whose last cell is a verdict counts too
(the tool then prints the target above its table).

Usage: bench/report_verdicts.py SECTIONS.md   (prints the table on stdout)
Exit status 0; 2 if the file cannot be read.
"""
import re
import sys

VERDICT = re.compile(
    r"(?<![\w-])(met|within[ -]noise|MISSED|missed)(?![\w-])")
# bench/noise.py's three verdicts, worst first, and how the tools spell them.
WORST_FIRST = ("MISSED", "within noise", "met")
SPELLINGS = {w.lower(): w for w in WORST_FIRST}
TARGET = re.compile(r"(>=|<=|≥|≤)\s*-?[0-9.]")
# A row of a tool's own markdown table whose verdict column holds the word
# (scheme_cold_ratio prints its target once, above the table).
VERDICT_CELL = re.compile(
    r"^\|.*\|\s*(met|within[ -]noise|MISSED|missed)\s*\|\s*$")


def verdict_of(line):
    """The line's verdict ("met", "within noise", "MISSED") or None."""
    if not TARGET.search(line) and not VERDICT_CELL.match(line):
        return None
    found = VERDICT.findall(line)
    if not found:
        return None
    # A line may carry several clauses (a ratio and its CPU twin): the worst
    # verdict is the line's. The words are read, never decided, here.
    return min((SPELLINGS[v.lower().replace("-", " ")] for v in found),
               key=WORST_FIRST.index)


def sections(text):
    """Yields (title, [lines inside the section's fenced blocks])."""
    title, lines, fenced = None, [], False
    for raw in text.splitlines():
        if not fenced and raw.startswith("### "):
            if title is not None:
                yield title, lines
            title, lines = raw[4:].strip(), []
        elif raw.startswith("```"):
            fenced = not fenced
        elif fenced and title is not None:
            lines.append(raw)
    if title is not None:
        yield title, lines


def cell(s):
    """Markdown-table-safe text."""
    return " ".join(s.split()).replace("|", "\\|")


def table(text):
    rows, counts = [], dict.fromkeys(WORST_FIRST, 0)
    for title, lines in sections(text):
        for line in lines:
            v = verdict_of(line)
            if v is None:
                continue
            counts[v] += 1
            shown = v if WORST_FIRST.index(v) else f"**{v}**"
            rows.append(f"| {cell(title)} | `{cell(line).replace(chr(96), chr(39))}` | {shown} |")
    out = [f"{counts['met']} met, {counts['within noise']} within noise, "
           f"{counts['MISSED']} MISSED.", "",
           "| tool | its verdict line | verdict |", "|---|---|---|"]
    return "\n".join(out + rows) + "\n"


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        text = open(argv[1], encoding="utf-8").read()
    except OSError as e:
        print(f"report_verdicts.py: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(table(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
