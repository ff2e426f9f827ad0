"""What the client package tests (python_package_test.py,
node_package_test.py) share: their arguments and running a command."""

import argparse
import subprocess


def parse_args():
    """--server (posenc_server) and --source (the repository)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--source", required=True)
    return parser.parse_args()


def run(argv, **kwargs):
    """Runs argv (at most 300 s); its stdout, or AssertionError with its
    output when it fails."""
    result = subprocess.run(argv, capture_output=True, text=True,
                            timeout=300, **kwargs)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {result.returncode}:"
                             f"\n{result.stdout}\n{result.stderr}")
    return result.stdout
