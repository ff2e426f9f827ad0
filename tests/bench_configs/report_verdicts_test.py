#!/usr/bin/python3
"""bench/report_verdicts.py turns the tools' own verdict lines into
BENCHMARKS.md's verdict table: only lines inside a section's output blocks
that name a target and carry a verdict become rows, a line's worst verdict
is its verdict, the counts add up, and a '|' in a line cannot break the
table."""
import subprocess
import sys
import tempfile

SAMPLE = """## Run

Prose that says target >= 0.5: met is not a tool's output.

### cold_path

Command: `bench/cold_path` ...

```
GetTable cold/hot 1.09 (95% CI of the median 1.03..1.23; target <= 1.5: met)
StreamBatches cold/hot 0.97 (95% CI 0.93..1.11; target >= 0.8: within noise)
a line with the word met but no target
```

### load.sh

```
1 GetRows | req/s 50420 58824 0.908 >=0.85 within-noise 0.97 0.72
2 GetTable 1.013 >=0.85 met
[wall] x = 1.2 (target >= 1): met; [cpu] x = 0.4 (target >= 1): missed
```

### scheme_cold_ratio

```
ratio = scheme over plain; target >= 0.50
| dtype | scheme | median ratio | verdict |
| --- | --- | --- | --- |
| float32 | rope-yarn | 1.014 | met |
| float16 | rope-yarn | 0.40 | MISSED |
| float16 | a verdict word | met | not in the last cell |
```

### fronts

```
nginx rapid_reset_hot: victim 0.00 (target >= 0.5), posenc alive: MISSED (victim 0.0)
```
"""


def main():
    script = sys.argv[1]
    with tempfile.NamedTemporaryFile("w", suffix=".md") as f:
        f.write(SAMPLE)
        f.flush()
        out = subprocess.run([sys.executable, script, f.name],
                             capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    rows = [l for l in lines if l.startswith("| ") and not l.startswith("| tool")]
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    expect(lines[0] == "3 met, 2 within noise, 3 MISSED.",
           f"counts line: {lines[0]!r}")
    expect(len(rows) == 8, f"8 rows expected, got {len(rows)}: {rows}")
    expect(not any("Prose" in r for r in rows), "prose outside a block taken")
    expect(not any("no target" in r for r in rows), "a line without a target")
    expect(any(r.startswith("| load.sh |") and r.endswith("| within noise |")
               and "GetRows \\| req/s" in r for r in rows),
           "'within-noise' row, with its '|' escaped")
    expect(any("[cpu]" in r and r.endswith("| **MISSED** |") for r in rows),
           "a line's worst verdict (missed) decides it")
    expect(any(r.startswith("| fronts |") and r.endswith("| **MISSED** |")
               for r in rows), "the fronts' MISSED line")
    expect(any(r.startswith("| scheme_cold_ratio |") and "rope-yarn \\| 1.014"
               in r and r.endswith("| met |") for r in rows),
           "a table row whose verdict cell is met")
    expect(not any("not in the last cell" in r for r in rows),
           "a table row whose last cell is not a verdict")
    for r in rows:
        expect(r.count(" | ") == 2 and r.count("|") - r.count("\\|") == 4,
               f"row has 3 cells: {r}")
    if failures:
        print("\n".join(["FAILED:"] + failures + ["output:", out]))
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
