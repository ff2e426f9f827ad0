"""posenc_server as a child process on 127.0.0.1:0, for Python-driven tests.

The port is read from the server's "listening on ... (port N)" log line.
"""

import ctypes
import re
import signal
import subprocess
import time

SERVER_START_SECONDS = 20


def die_with_parent():
    """preexec_fn: the child gets SIGTERM if the test harness dies."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class ServerProcess:
    """prefix: a command that execs the server as its last arguments (e.g.
    unshare), so the child's pid stays the server's."""

    def __init__(self, binary, log_path, extra_flags=(), prefix=()):
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(
            [*prefix, binary, "--listen=127.0.0.1:0", "--lame_duck_seconds=0",
             "--grace_seconds=1", *extra_flags],
            stdout=self.log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)

    def wait_for_port(self):
        deadline = time.monotonic() + SERVER_START_SECONDS
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                match = re.search(rb"listening on \S+ \(port (\d+)\)",
                                  f.read())
            if match:
                return int(match.group(1))
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("server did not start:\n" + self.tail())

    def tail(self):
        with open(self.log_path, "rb") as f:
            return f.read()[-4000:].decode(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
