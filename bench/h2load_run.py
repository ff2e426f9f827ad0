"""Runs h2load and reads what the responses really delivered.

h2load counts a stream as succeeded on its status code, even when the
response was cut short before its end (HAProxy 2.6.12 does that to large
gRPC responses whose trailers arrive while its stream buffer is full:
haproxy/haproxy#2388, fixed upstream in 2.9.1). The benches therefore judge
a run by its DATA bytes: `complete` is how many full responses those bytes
are worth, given the bytes of one full response measured on a direct run.
"""

import dataclasses
import re
import subprocess


@dataclasses.dataclass
class H2loadRun:
    seconds: float      # wall time of the run
    requests: int       # -n
    succeeded: int      # h2load's count (status 2xx, not necessarily whole)
    errored: int        # streams reset or lost with their connection
    data_bytes: int     # DATA payload received, gRPC framing included

    def complete(self, bytes_per_response):
        """Full responses the DATA bytes are worth."""
        return self.data_bytes / bytes_per_response

    def rate(self, bytes_per_response):
        """Full responses per second."""
        return self.complete(bytes_per_response) / self.seconds


def run_h2load(argv, timeout):
    """Runs h2load (argv includes "-n N") and parses its summary; raises
    RuntimeError if it did not run to the end."""
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    text = out.stdout
    fin = re.search(r"finished in ([\d.]+)(ms|s),", text)
    req = re.search(r"requests: (\d+) total, \d+ started, \d+ done, (\d+) "
                    r"succeeded, \d+ failed, (\d+) errored", text)
    data = re.search(r"\((\d+)\) data", text)
    if out.returncode != 0 or not fin or not req or not data:
        raise RuntimeError(f"h2load failed:\n{text}\n{out.stderr}")
    seconds = float(fin.group(1)) / (1000 if fin.group(2) == "ms" else 1)
    return H2loadRun(seconds=seconds, requests=int(req.group(1)),
                     succeeded=int(req.group(2)), errored=int(req.group(3)),
                     data_bytes=int(data.group(1)))
