"""ServerCase: a unittest.TestCase whose class shares one real posenc_server
(POSENC_SERVER, on 127.0.0.1 with an OS-chosen port; tests/common's
ServerProcess) and one posenc.Client to it, for the client's server tests.
Sets cls.tmp, cls.log_path, cls.server, cls.target and cls.client."""

import os
import sys
import tempfile
import unittest

import posenc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "tests", "common"))


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
