"""Build hook of the posenc package: generates posenc.v1 at build time.

build_py runs Debian's (or any) protoc with grpc_python_plugin on
proto/posenc/v1/posenc.proto and writes posenc_pb2.py, posenc_pb2.pyi and
posenc_pb2_grpc.py into the build directory, so a wheel or an install never
needs gen_stubs.sh. `proto` is a link to the repository's proto/ directory;
an sdist carries a copy.

Environment: PROTOC (default: protoc on PATH), GRPC_PYTHON_PLUGIN (default:
grpc_python_plugin on PATH; Debian package protobuf-compiler-grpc).
"""

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE / "proto"
PROTOS = ["posenc/v1/posenc.proto"]


def _tool(env, name, package):
    path = os.environ.get(env) or shutil.which(name)
    if not path:
        raise SystemExit(f"posenc build: {name} not found (install Debian's "
                         f"{package}, or set {env})")
    return path


def generate_stubs(out_dir: Path) -> None:
    protoc = _tool("PROTOC", "protoc", "protobuf-compiler")
    plugin = _tool("GRPC_PYTHON_PLUGIN", "grpc_python_plugin",
                   "protobuf-compiler-grpc")
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [protoc, f"--proto_path={PROTO_ROOT}", f"--python_out={out_dir}",
         f"--pyi_out={out_dir}", f"--grpc_python_out={out_dir}",
         f"--plugin=protoc-gen-grpc_python={plugin}",
         *[str(PROTO_ROOT / p) for p in PROTOS]],
        check=True)
    (out_dir / "posenc" / "v1" / "__init__.py").touch()


class BuildPyWithStubs(build_py):
    """build_py, then the generated posenc.v1 modules into build_lib."""

    def run(self):
        super().run()
        generate_stubs(Path(self.build_lib))

    def get_outputs(self, include_bytecode=True):
        generated = [
            str(Path(self.build_lib) / "posenc" / "v1" / name)
            for name in ("__init__.py", "posenc_pb2.py", "posenc_pb2.pyi",
                         "posenc_pb2_grpc.py")]
        return super().get_outputs(include_bytecode) + generated


setup(cmdclass={"build_py": BuildPyWithStubs})
