"""ServerCase: a unittest.TestCase whose class shares one real posenc_server
(POSENC_SERVER, on 127.0.0.1 with an OS-chosen port; tests/common's
ServerProcess) and one posenc.Client to it, for the client's server tests.
Sets cls.tmp, cls.log_path, cls.server, cls.target and cls.client.

ShmServer: one posenc_server with --shm_dir, for the shared-memory tests."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import posenc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "tests", "common"))

# Runs the server in a mount namespace of its own, with a private tmpfs
# over the shm directory: its files are then out of the tests' reach, as on
# another host ($1: the directory; the server's command follows).
_PRIVATE_TMPFS = ["unshare", "--mount", "--propagation", "private", "sh",
                  "-c", 'mount -t tmpfs -o size=64m posenc-test "$1" && '
                  'shift && exec "$@"', "private-tmpfs"]


def private_mount_available() -> bool:
    """Whether this user may make a mount namespace with its own tmpfs."""
    with tempfile.TemporaryDirectory() as mount_point:
        try:
            return subprocess.run(
                ["unshare", "--mount", "--propagation", "private", "mount",
                 "-t", "tmpfs", "posenc-test", mount_point],
                capture_output=True, timeout=10).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False


class ShmServer:
    """A posenc_server with --shm_dir=<a fresh directory under /dev/shm>,
    removed with everything in it on stop(); flags are added.

    private_mount: the server sees its own tmpfs at that directory (another
    mount namespace), so none of its files can be opened from here.
    Attributes: shm_dir, target, client (a posenc.Client without shared
    memory: the bytes path), log_path.
    """

    def __init__(self, flags=(), private_mount=False):
        from server_process import ServerProcess
        self.shm_dir = tempfile.mkdtemp(prefix="posenc-pytest-",
                                        dir="/dev/shm")
        self.log_dir = tempfile.TemporaryDirectory()
        self.log_path = os.path.join(self.log_dir.name, "server.log")
        try:
            self.server = ServerProcess(
                os.environ["POSENC_SERVER"], self.log_path,
                (f"--shm_dir={self.shm_dir}", *flags),
                prefix=(*_PRIVATE_TMPFS, self.shm_dir) if private_mount
                else ())
            self.target = f"127.0.0.1:{self.server.wait_for_port()}"
        except BaseException:
            self._remove()
            raise
        self.client = posenc.Client(self.target, timeout=30)

    def directory(self) -> str:
        """The server's own subdirectory (ServerInfo.shm_directory)."""
        return self.client.stats().server.shm_directory

    def get_table_calls(self) -> int:
        """GetTable calls the server answered OK so far."""
        for method in self.client.stats().methods:
            if method.method.endswith("/GetTable"):
                return method.ok
        raise AssertionError("no GetTable in GetStats.methods")

    def stop(self) -> None:
        self.client.close()
        self.server.stop()
        self._remove()

    def _remove(self) -> None:
        shutil.rmtree(self.shm_dir, ignore_errors=True)
        self.log_dir.cleanup()

    def __enter__(self) -> "ShmServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class ServerCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from server_process import ServerProcess
        cls.tmp = tempfile.TemporaryDirectory()
        cls.log_path = os.path.join(cls.tmp.name, "server.log")
        cls.server = ServerProcess(os.environ["POSENC_SERVER"], cls.log_path)
        cls.target = f"127.0.0.1:{cls.server.wait_for_port()}"
        cls.client = posenc.Client(cls.target, timeout=30)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()
        cls.tmp.cleanup()
