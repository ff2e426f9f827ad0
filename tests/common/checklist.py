"""A list of named checks for script-style tests: each prints "ok" or
"FAIL" with its name; the summary line is "N passed, N failed"."""


class Checklist:
    def __init__(self):
        self.checks = 0
        self.failures = []

    def check(self, ok, what):
        self.checks += 1
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failures.append(what)

    def summary(self):
        """Prints the summary line; returns the process exit status."""
        print(f"{self.checks - len(self.failures)} passed, "
              f"{len(self.failures)} failed")
        return 1 if self.failures else 0
