"""python_fill: the Python client's fill() against the C++ client, one stream each, same daemon.

Ingests the same samples with `histctl ingest` (the C++ client library's IngestStream,
reading a .u32 / .f32 file from the page cache) and with histd's `h.fill()` from a numpy
array already in memory, alternating, into one histogram of a daemon started here (or
--address). Each run is one stream: open, batch into --message_bytes messages, keep
--window in flight, wait for every acknowledgement. Prints one markdown table: samples/s
(median and range over --repeats runs) for histctl's own timing (in process, file read
included), histctl's process wall time, and fill(); the ratio is fill() over histctl's own;
and each client's CPU time per sample (histctl's process; the Python process, all threads),
which shows the client's cost apart from the daemon's.

    python bench/python_fill.py [--histd build/server/histd] [--histctl build/client/histctl]
        [--address HOST:PORT] [--engine cpu|cuda|auto] [--samples 16777216] [--repeats 5]

Needs the histd package installed (pip install ./client/python).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import resource
import statistics
import subprocess
import tempfile
import time

import numpy as np

import histd

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("HISTD_BUILD_DIR", ROOT / "build"))


def start_daemon(binary: str, engine: str, workdir: pathlib.Path) -> tuple:
    ready = workdir / "ready"
    process = subprocess.Popen([binary, "--address=127.0.0.1:0", f"--ready_file={ready}",
                                f"--engine={engine}", "--log_level=warning"])
    deadline = time.monotonic() + 30
    while not (ready.exists() and ready.read_text().strip()):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"histd did not start (exit {process.poll()})")
        time.sleep(0.02)
    return process, ready.read_text().split()[0]


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def run_histctl(histctl: str, address: str, name: str, path: pathlib.Path, args) -> tuple:
    """(seconds as histctl reports them, process wall seconds, histctl's CPU seconds)."""
    cpu = cpu_seconds(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([histctl, f"--server={address}", "ingest", name, str(path),
                          f"--message_bytes={args.message_bytes}", f"--window={args.window}",
                          "--progress=off"], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    match = re.search(r"; ([0-9.]+) s, ", out.stdout + out.stderr)
    if not match or "rejected 0 messages" not in out.stdout + out.stderr:
        raise SystemExit(f"unexpected histctl output:\n{out.stdout}{out.stderr}")
    return float(match.group(1)), wall, cpu_seconds(resource.RUSAGE_CHILDREN) - cpu


def run_python(h: histd.Histogram, fill_args: dict, args) -> tuple:
    """(wall seconds, this process's CPU seconds: every thread, gRPC's included)."""
    cpu = cpu_seconds(resource.RUSAGE_SELF)
    start = time.perf_counter()
    h.fill(**fill_args, max_message_bytes=args.message_bytes, window=args.window,
           progress=False)
    return time.perf_counter() - start, cpu_seconds(resource.RUSAGE_SELF) - cpu


def rate(samples: int, seconds: list) -> tuple:
    rates = [samples / s for s in seconds]
    return statistics.median(rates), min(rates), max(rates)


def fmt(r: tuple) -> str:
    return f"{r[0] / 1e6:.1f} M ({r[1] / 1e6:.1f}-{r[2] / 1e6:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histd", default=str(BUILD / "server" / "histd"))
    parser.add_argument("--histctl", default=str(BUILD / "client" / "histctl"))
    parser.add_argument("--address", default="", help="a running daemon instead of starting one")
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--samples", type=int, default=1 << 24)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--cols", type=int, default=8192)
    parser.add_argument("--message_bytes", type=int, default=1 << 20)
    parser.add_argument("--window", type=int, default=32)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        workdir = pathlib.Path(tmp)
        process, address = (None, args.address) if args.address else start_daemon(
            args.histd, args.engine, workdir)
        try:
            client = histd.Client(address)
            name = f"bench-python-fill-{os.getpid()}"
            h = client.create(name, args.rows, args.cols, x=(0.0, 1.0), y=(0.0, 1.0))
            engine = client.stats().engine
            rng = np.random.default_rng(1)
            n = args.samples
            indices = rng.integers(0, args.rows * args.cols, n, dtype=np.uint32)
            xy = rng.random((n, 2), dtype=np.float32)
            (workdir / "samples.u32").write_bytes(indices.tobytes())
            (workdir / "samples.f32").write_bytes(xy.tobytes())
            workloads = [
                ("bin indices, uint32", "samples.u32", {"indices": indices}),
                ("coordinates, float32 (x, y) pairs (xy=)", "samples.f32", {"xy": xy}),
                ("coordinates, float64 x=, y= (converted)", "samples.f32",
                 {"x": xy[:, 0].astype(np.float64), "y": xy[:, 1].astype(np.float64)}),
            ]
            rows = []
            for label, file, fill_args in workloads:
                own, wall, py, cpp_cpu, py_cpu = [], [], [], [], []
                run_histctl(args.histctl, address, name, workdir / file, args)  # warm-up
                run_python(h, fill_args, args)
                for _ in range(args.repeats):
                    h.reset()
                    s, w, c = run_histctl(args.histctl, address, name, workdir / file, args)
                    own.append(s)
                    wall.append(w)
                    cpp_cpu.append(c)
                    h.reset()
                    s, c = run_python(h, fill_args, args)
                    py.append(s)
                    py_cpu.append(c)
                assert h.info().samples_applied == n
                r_own, r_wall, r_py = rate(n, own), rate(n, wall), rate(n, py)
                ns = [f"{statistics.median(c) / n * 1e9:.1f}" for c in (cpp_cpu, py_cpu)]
                rows.append((label, fmt(r_own), fmt(r_wall), fmt(r_py),
                             f"{r_py[0] / r_own[0]:.2f}x", f"{ns[0]} / {ns[1]}"))
            h.delete()
            client.close()
        finally:
            if process is not None:
                process.terminate()
                process.wait()

    print(f"python_fill: {n:,} samples per run, one stream, {args.message_bytes >> 10} KiB "
          f"messages, window {args.window}, {args.rows} x {args.cols} histogram, engine "
          f"{engine}, {os.cpu_count()} CPUs; median (min-max) of {args.repeats} alternating runs")
    print()
    print("| samples | C++ client (histctl ingest, its own timing) | histctl process wall | "
          "Python h.fill() | Python / C++ | client CPU ns/sample, C++ / Python |")
    print("| --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
