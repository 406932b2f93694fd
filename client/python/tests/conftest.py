"""Fixtures: a real histd daemon (CPU engine) started once per session, and clients on it.

The binary is $HISTD_BIN, else ${HISTD_BUILD_DIR:-<repo>/build}/server/histd (the build the
README's test command makes). start_daemon() starts further daemons for tests that stop
them. The session daemon runs with --max_message_bytes=4 MiB so that oversized messages can
be tested.
"""

from __future__ import annotations

import itertools
import os
import pathlib
import re
import signal
import subprocess
import time
from typing import Iterator

import pytest

import histd

REPO = pathlib.Path(__file__).resolve().parents[3]
SESSION_MAX_MESSAGE_BYTES = 4 << 20


def histd_bin() -> pathlib.Path:
    if os.environ.get("HISTD_BIN"):
        return pathlib.Path(os.environ["HISTD_BIN"]).resolve()
    build = pathlib.Path(os.environ.get("HISTD_BUILD_DIR", REPO / "build")).resolve()
    return build / "server" / "histd"


class Daemon:
    """One histd process on 127.0.0.1:<free port>."""

    def __init__(self, workdir: pathlib.Path, *flags: str) -> None:
        binary = histd_bin()
        if not binary.is_file():
            pytest.fail(f"no histd binary at {binary}: build it, or set HISTD_BIN")
        ready = workdir / "ready"
        ready.unlink(missing_ok=True)
        self.log = open(workdir / "histd.log", "ab")
        self.process = subprocess.Popen(
            [str(binary), "--address=127.0.0.1:0", f"--ready_file={ready}", "--engine=cpu",
             "--log_level=warning", *flags], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not (ready.exists() and ready.read_text().strip()):
            if self.process.poll() is not None:
                pytest.fail(f"histd exited with {self.process.returncode}; see {self.log.name}")
            if time.monotonic() > deadline:
                self.process.kill()
                pytest.fail("histd did not write --ready_file within 30 s")
            time.sleep(0.02)
        # The gRPC address, then the HTTP endpoint's when --http_address is given.
        lines = ready.read_text().split()
        self.address = lines[0]
        self.http_address = lines[1] if len(lines) > 1 else None
        self.signalled = False

    def terminate(self) -> None:
        """Sends SIGTERM once (a second one makes histd exit 1 at once)."""
        if not self.signalled and self.process.poll() is None:
            self.signalled = True
            self.process.send_signal(signal.SIGTERM)

    def stop(self) -> int:
        """SIGTERM (unless sent already), then waits; returns the exit code."""
        if self.process.poll() is None:
            self.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode


@pytest.fixture(scope="session")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("histd"),
               f"--max_message_bytes={SESSION_MAX_MESSAGE_BYTES}")
    yield d
    assert d.stop() == 0, "histd did not exit 0 after SIGTERM"


@pytest.fixture
def start_daemon(tmp_path: pathlib.Path) -> Iterator:
    """Starts extra daemons (flags as arguments); stops them after the test."""
    started = []

    def start(*flags: str) -> Daemon:
        d = Daemon(tmp_path, *flags)
        started.append(d)
        return d
    yield start
    for d in started:
        d.stop()


@pytest.fixture(scope="session")
def client(daemon: Daemon) -> Iterator[histd.Client]:
    with histd.Client(daemon.address, timeout=60) as c:
        yield c


_names = itertools.count()


@pytest.fixture
def name(request: pytest.FixtureRequest) -> str:
    """A histogram name unique to the test."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{request.node.name[:80]}-{next(_names)}")
