"""Build step: generate histd/v1/*_pb2.py, *_pb2.pyi and *_pb2_grpc.py from the .proto files.

Protos are read from proto/ next to this file (the sdist's copy) or, in the checkout, from
../../proto. The sdist copies them into proto/, so a wheel built from it (pip's isolated
builds, `python -m build`) needs nothing outside the archive. Everything else is declared in
pyproject.toml.
"""

import importlib.util
import pathlib
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = pathlib.Path(__file__).resolve().parent
PROTO_SUBDIR = pathlib.Path("histd", "v1")


def proto_root() -> pathlib.Path:
    for root in (HERE / "proto", HERE.parent.parent / "proto"):
        if (root / PROTO_SUBDIR).is_dir():
            return root
    raise FileNotFoundError("histd protos not found in ./proto or ../../proto")


def generate(out: pathlib.Path) -> None:
    import grpc_tools
    from grpc_tools import protoc

    root = proto_root()
    protos = sorted(str(p.relative_to(root)) for p in (root / PROTO_SUBDIR).glob("*.proto"))
    if not protos:
        raise FileNotFoundError(f"no .proto files in {root / PROTO_SUBDIR}")
    well_known = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    args = ["grpc_tools.protoc", f"-I{root}", f"-I{well_known}", f"--python_out={out}",
            f"--pyi_out={out}", f"--grpc_python_out={out}", *protos]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed on {protos}")
    init = out / PROTO_SUBDIR / "__init__.py"
    init.write_text('"""Generated gRPC stubs for histd.v1 (proto/histd/v1/*.proto)."""\n')


_generated = False


def ensure_generated() -> None:
    global _generated
    if not _generated:
        generate(HERE / "src")
        _generated = True


class BuildPy(build_py):
    def run(self) -> None:
        ensure_generated()
        super().run()


class Sdist(sdist):
    def make_release_tree(self, base_dir: str, files: list) -> None:
        super().make_release_tree(base_dir, files)
        source = proto_root() / PROTO_SUBDIR
        target = pathlib.Path(base_dir, "proto", PROTO_SUBDIR)
        target.mkdir(parents=True, exist_ok=True)
        for proto in source.glob("*.proto"):
            shutil.copy2(proto, target / proto.name)


# setuptools checks that every listed package's directory exists before any command runs
# (egg_info, editable installs), so the stubs are generated as soon as the build
# requirements are importable.
if importlib.util.find_spec("grpc_tools") is not None:
    ensure_generated()

setup(cmdclass={"build_py": BuildPy, "sdist": Sdist})
