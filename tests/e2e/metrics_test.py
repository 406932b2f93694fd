"""/metrics, /healthz and /readyz of a real histd process, read by independent clients.

- /metrics is parsed with prometheus_client's text parser: every family of
  docs/operations.md is present with its type and labels; after ingesting N samples through
  gRPC, histd_ingest_samples_total reads N more, exactly; failed calls count under their
  grpc_code.
- A real Prometheus (Debian's `prometheus`, on loopback) scrapes the daemon; its HTTP API
  returns histd_ingest_samples_total equal to what was ingested.
- /readyz is 503 while a snapshot is being restored (the snapshot path is a FIFO the test
  feeds slowly) and while the daemon drains on SIGTERM (an ingest stream held open), 200 in
  between; /healthz is 200 throughout.

Run by tests/e2e/metrics_test.sh (a venv with the histd package and prometheus_client).
$HISTD_BIN is the daemon; $PROMETHEUS_BIN (default: prometheus on PATH) the server.
"""

from __future__ import annotations

import os
import pathlib
import queue
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from typing import Dict, Iterator, List, Optional, Tuple

import grpc
import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

import histd
from histd.v1 import ingest_pb2, ingest_pb2_grpc

# name -> (type, label names of its samples), as docs/operations.md lists them.
GRPC = ("grpc_method", "grpc_service", "grpc_type")
FAMILIES: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "grpc_server_started_total": ("counter", GRPC),
    "grpc_server_handled_total": ("counter", ("grpc_code",) + GRPC),
    "grpc_server_msg_received_total": ("counter", GRPC),
    "grpc_server_msg_sent_total": ("counter", GRPC),
    "grpc_server_handling_seconds": ("histogram", GRPC),
    "histd_ingest_samples_total": ("counter", ()),
    "histd_ingest_bytes_total": ("counter", ()),
    "histd_ingest_messages_total": ("counter", ("code",)),
    "histd_ingest_samples_outside_total": ("counter", ()),
    "histd_ack_latency_seconds": ("histogram", ()),
    "histd_query_duration_seconds": ("histogram", ("method",)),
    "histd_batches_total": ("counter", ()),
    "histd_ingest_parked_messages_total": ("counter", ()),
    "histd_ingest_parked_seconds_total": ("counter", ()),
    "histd_ingest_flush_wait_seconds_total": ("counter", ()),
    "histd_batch_samples": ("histogram", ()),
    "histd_staging_buffers": ("gauge", ("state",)),
    "histd_pinned_bytes": ("gauge", ()),
    "histd_memory_budget_bytes": ("gauge", ("kind", "state")),
    "histd_device_memory_used_bytes": ("gauge", ("device",)),
    "histd_histograms": ("gauge", ("device",)),
    "histd_gpu_kernel_seconds_total": ("counter", ("device",)),
    "histd_gpu_copy_seconds_total": ("counter", ("device",)),
    "histd_snapshot_last_success_timestamp_seconds": ("gauge", ()),
    "histd_snapshot_duration_seconds": ("gauge", ()),
    "histd_snapshot_failures_total": ("counter", ()),
    "histd_active_streams": ("gauge", ()),
    "histd_build_info": ("gauge", ("engine", "version")),
}
PER_HISTOGRAM = {"histd_histogram_samples", "histd_histogram_saturated_bins"}


def histd_bin() -> str:
    binary = os.environ.get("HISTD_BIN", "")
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail(f"HISTD_BIN={binary!r} is not an executable histd")
    return binary


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(address: str, path: str, timeout: float = 5) -> Tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://{address}{path}", timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Daemon:
    """One histd process (CPU engine) with an HTTP endpoint."""

    def __init__(self, workdir: pathlib.Path, *flags: str, http: str = "127.0.0.1:0",
                 wait: bool = True) -> None:
        self.ready = workdir / "ready"
        self.ready.unlink(missing_ok=True)
        self.log = open(workdir / "histd.log", "ab")
        self.process = subprocess.Popen(
            [histd_bin(), "--address=127.0.0.1:0", f"--http_address={http}",
             f"--ready_file={self.ready}", "--engine=cpu", "--cpu_threads=2", *flags],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.address, self.http = "", http
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not (self.ready.exists() and len(self.ready.read_text().split()) >= 2):
            assert self.process.poll() is None, f"histd exited; see {self.log.name}"
            assert time.monotonic() < deadline, "histd did not write --ready_file in time"
            time.sleep(0.02)
        self.address, self.http = self.ready.read_text().split()[:2]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode


@pytest.fixture
def daemon(tmp_path: pathlib.Path) -> Iterator[Daemon]:
    d = Daemon(tmp_path)
    yield d
    assert d.stop() == 0


def scrape(d: Daemon) -> Dict[str, object]:
    status, text = http_get(d.http, "/metrics")
    assert status == 200
    return {f.name: f for f in text_string_to_metric_families(text)}


def value(families: Dict[str, object], sample: str, **labels: str) -> float:
    """The value of the one sample `sample` with exactly these labels (le aside)."""
    for family in families.values():
        for s in family.samples:
            if s.name == sample and s.labels == labels:
                return s.value
    raise AssertionError(f"no sample {sample}{labels}")


def family_name(name: str, kind: str) -> str:
    # prometheus_client names a counter family without its _total suffix.
    return name[: -len("_total")] if kind == "counter" and name.endswith("_total") else name


def test_every_family_is_present_with_its_type_and_labels(daemon: Daemon) -> None:
    families = scrape(daemon)
    for name, (kind, label_names) in FAMILIES.items():
        family = families.get(family_name(name, kind))
        assert family is not None, f"{name} missing from /metrics"
        assert family.type == kind, f"{name}: type {family.type}, want {kind}"
        assert family.samples, f"{name} has no samples"
        for s in family.samples:
            got = tuple(sorted(k for k in s.labels if k != "le"))
            assert got == tuple(sorted(label_names)), f"{s.name}{s.labels}: labels {got}"
    assert not PER_HISTOGRAM & set(families), "per-histogram series without the flag"
    assert value(families, "histd_build_info", engine="cpu",
                 version=families["histd_build_info"].samples[0].labels["version"]) == 1
    # Every method and code is there from the start, at zero (go-grpc-prometheus does so).
    assert value(families, "grpc_server_handled_total", grpc_code="Unauthenticated",
                 grpc_method="Matmul", grpc_service="histd.v1.Compute", grpc_type="unary") == 0
    assert value(families, "histd_memory_budget_bytes", kind="host", state="limit") > 0


def test_counts_after_ingest_and_failed_calls_are_exact(daemon: Daemon) -> None:
    rng = np.random.default_rng()
    n = int(rng.integers(200_000, 400_000))
    grpc_ingest = dict(grpc_method="Ingest", grpc_service="histd.v1.Ingest",
                       grpc_type="bidi_stream")
    before = scrape(daemon)
    with histd.Client(daemon.address, timeout=60) as c:
        c.create("m", rows=64, cols=1024)
        c.create("xy", rows=10, cols=10, x=(0.0, 1.0), y=(0.0, 1.0))
        indices = rng.integers(0, 64 * 1024, size=n, dtype=np.uint32)
        c.fill("m", indices, max_message_bytes=64 << 10)   # several messages
        xs = rng.uniform(-0.5, 1.5, size=1000).astype(np.float32)
        ys = rng.uniform(0.0, 1.0, size=1000).astype(np.float32)
        c.fill("xy", x=xs, y=ys)
        outside = int(np.sum((xs < 0) | (xs >= 1)))
        with pytest.raises(histd.NotFoundError):
            c.info("no-such-histogram")
        with pytest.raises(histd.HistdError):
            c.fill("no-such-histogram", np.zeros(10, dtype=np.uint32))
        c.histogram("m").values()  # one Query stream
        info = c.info("m")
    after = scrape(daemon)
    messages = -(-4 * n // (64 << 10)) + 1 + 1  # "m", "xy", the refused one

    def delta(sample: str, **labels: str) -> float:
        return value(after, sample, **labels) - value(before, sample, **labels)

    assert info.samples_applied == n
    assert delta("histd_ingest_samples_total") == n + 1000
    assert delta("histd_ingest_bytes_total") == 4 * n + 8 * 1000
    assert delta("histd_ingest_samples_outside_total") == outside
    assert delta("histd_ingest_messages_total", code="OK") == messages - 1
    assert delta("histd_ingest_messages_total", code="NotFound") == 1
    assert delta("histd_ack_latency_seconds_count") == messages
    assert delta("histd_batch_samples_sum") == n + 1000
    assert delta("histd_batches_total") == delta("histd_batch_samples_count") >= 1
    assert delta("grpc_server_msg_received_total", **grpc_ingest) == messages
    assert delta("grpc_server_msg_sent_total", **grpc_ingest) == messages
    assert delta("grpc_server_started_total", **grpc_ingest) == 3
    assert delta("grpc_server_handled_total", grpc_code="OK", **grpc_ingest) == 3
    assert delta("grpc_server_handled_total", grpc_code="NotFound",
                 grpc_method="GetHistogramInfo", grpc_service="histd.v1.Histograms",
                 grpc_type="unary") == 1
    assert delta("grpc_server_handled_total", grpc_code="OK", grpc_method="CreateHistogram",
                 grpc_service="histd.v1.Histograms", grpc_type="unary") == 2
    assert delta("grpc_server_handling_seconds_count", grpc_method="CreateHistogram",
                 grpc_service="histd.v1.Histograms", grpc_type="unary") == 2
    assert delta("histd_query_duration_seconds_count", method="Query") == 1
    assert value(after, "histd_histograms", device="cpu") == 2
    assert value(after, "histd_device_memory_used_bytes", device="cpu") >= 64 * 1024 + 100
    # A stream leaves the count when the daemon has finished it, just after the client did.
    deadline = time.monotonic() + 10
    while value(scrape(daemon), "histd_active_streams") != 0:
        assert time.monotonic() < deadline, "histd_active_streams stays above 0"
        time.sleep(0.05)


def test_per_histogram_series_behind_the_flag(tmp_path: pathlib.Path) -> None:
    d = Daemon(tmp_path, "--metrics_per_histogram")
    try:
        with histd.Client(d.address, timeout=60) as c:
            c.create("small", rows=2, cols=2, cap=3)
            c.fill("small", np.array([0, 0, 0, 0, 1, 3], dtype=np.uint32))
        families = scrape(d)
        assert value(families, "histd_histogram_samples", histogram="small") == 6
        assert value(families, "histd_histogram_saturated_bins", histogram="small") == 1
    finally:
        assert d.stop() == 0


def prometheus_bin() -> str:
    binary = os.environ.get("PROMETHEUS_BIN") or shutil.which("prometheus")
    if not binary:
        pytest.fail("no prometheus binary (deploy/install-deps.sh installs Debian's)")
    return binary


def prometheus_query(address: str, query: str) -> List[dict]:
    url = f"http://{address}/api/v1/query?query={urllib.request.quote(query)}"
    with urllib.request.urlopen(url, timeout=5) as r:
        import json
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]


def test_a_real_prometheus_scrapes_what_was_ingested(daemon: Daemon,
                                                     tmp_path: pathlib.Path) -> None:
    n = 123_457
    with histd.Client(daemon.address, timeout=60) as c:
        c.create("p", rows=16, cols=16)
        c.fill("p", np.arange(n, dtype=np.uint32) % 256)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: histd\n"
        f"    static_configs:\n      - targets: ['{daemon.http}']\n")
    web = f"127.0.0.1:{free_port()}"
    log = open(tmp_path / "prometheus.log", "wb")
    prometheus = subprocess.Popen(
        [prometheus_bin(), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address={web}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 45
        result: List[dict] = []
        while time.monotonic() < deadline:
            assert prometheus.poll() is None, f"prometheus exited; see {log.name}"
            try:
                result = prometheus_query(web, 'histd_ingest_samples_total{job="histd"}')
            except (urllib.error.URLError, ConnectionError):
                result = []
            if result:
                break
            time.sleep(0.5)
        assert result, "Prometheus has no histd_ingest_samples_total after 45 s"
        assert float(result[0]["value"][1]) == n
        up = prometheus_query(web, 'up{job="histd"}')
        assert up and float(up[0]["value"][1]) == 1
        handled = prometheus_query(
            web, 'grpc_server_handled_total{grpc_method="CreateHistogram",grpc_code="OK"}')
        assert handled and float(handled[0]["value"][1]) == 1
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)
        log.close()


def test_readyz_is_503_while_the_snapshot_is_restored(tmp_path: pathlib.Path) -> None:
    snapshot = tmp_path / "histd.snapshot"
    first = Daemon(tmp_path, f"--snapshot_path={snapshot}")
    with histd.Client(first.address, timeout=60) as c:
        c.create("kept", rows=8, cols=8)
        c.fill("kept", np.arange(1000, dtype=np.uint32) % 64)
    assert first.stop() == 0
    data = snapshot.read_bytes()
    snapshot.unlink()
    os.mkfifo(snapshot)  # the daemon's restore reads it as slowly as the test writes it
    http = f"127.0.0.1:{free_port()}"
    second = Daemon(tmp_path, f"--snapshot_path={snapshot}", http=http, wait=False)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if http_get(http, "/healthz")[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            assert second.process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        status, body = http_get(http, "/readyz")
        assert (status, body) == (503, "not ready: restoring the snapshot\n")
        with open(snapshot, "wb", buffering=0) as fifo:
            fifo.write(data[: len(data) // 2])
            time.sleep(0.3)
            assert http_get(http, "/readyz")[0] == 503
            assert http_get(http, "/healthz") == (200, "ok\n")
            fifo.write(data[len(data) // 2:])
        second.wait_ready()
        assert http_get(http, "/readyz") == (200, "ready\n")
        with histd.Client(second.address, timeout=60) as c:
            assert c.info("kept").samples_applied == 1000
    finally:
        assert second.stop() == 0


def test_readyz_is_503_while_draining(daemon: Daemon) -> None:
    with histd.Client(daemon.address, timeout=60) as c:
        c.create("d", rows=4, cols=4)
    assert http_get(daemon.http, "/readyz") == (200, "ready\n")
    requests: "queue.Queue[Optional[ingest_pb2.IngestRequest]]" = queue.Queue()

    def outgoing() -> Iterator[ingest_pb2.IngestRequest]:
        while (r := requests.get()) is not None:
            yield r

    channel = grpc.insecure_channel(daemon.address)
    responses = ingest_pb2_grpc.IngestStub(channel).Ingest(outgoing())
    acks: "queue.Queue[ingest_pb2.IngestResponse]" = queue.Queue()
    final: List[grpc.StatusCode] = []

    def read() -> None:
        try:
            for a in responses:
                acks.put(a)
            final.append(grpc.StatusCode.OK)
        except grpc.RpcError as e:
            final.append(e.code())
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    requests.put(ingest_pb2.IngestRequest(
        sequence=1, histogram="d", type=ingest_pb2.SAMPLE_TYPE_BIN_INDEX_U32,
        samples=np.arange(16, dtype="<u4").tobytes()))
    assert acks.get(timeout=30).code == 0
    daemon.process.send_signal(signal.SIGTERM)  # the stream stays open: the daemon drains
    assert acks.get(timeout=30).server_shutting_down
    status, body = http_get(daemon.http, "/readyz")
    assert (status, body) == (503, "not ready: draining (shutting down)\n")
    assert http_get(daemon.http, "/healthz") == (200, "ok\n")
    assert daemon.process.poll() is None
    requests.put(None)  # half-close: the daemon finishes the stream and exits
    reader.join(timeout=30)
    channel.close()
    assert final == [grpc.StatusCode.UNAVAILABLE]  # the stream's status after a shutdown
    assert daemon.process.wait(timeout=30) == 0
