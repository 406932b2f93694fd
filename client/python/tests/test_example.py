"""The example in examples/ runs against the daemon and writes its PNG."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def test_wafer_map_example(daemon, tmp_path):
    pytest.importorskip("mplhep")
    out = tmp_path / "wafer_map.png"
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "wafer_map.py"), "--address", daemon.address,
         "--output", str(out), "--samples", "200000", "--name", "example-test"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "samples in 256 x 256 bins" in result.stdout
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
