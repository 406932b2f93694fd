#!/usr/bin/env python3
"""Checks a histd log, as the log_format test produced it, line by line.

  log_lines.py json LOG SAMPLES EVIL_NAME   every line is one JSON object with level, time
                                            (RFC 3339 UTC), event and fields; the run's
                                            events are there with the right fields
  log_lines.py text LOG SAMPLES EVIL_NAME   every line starts with time and level; no line
                                            was split by the snapshot path

EVIL_NAME is a part of the snapshot path (a newline, a quote and a byte that is no UTF-8),
given as hex so that it survives the command line.
"""
import datetime
import json
import re
import sys

LEVELS = {"info", "warning", "error"}
RFC3339_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
TEXT_LINE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z (INFO|WARN|ERROR) [a-z_]+( |$)")
# The run's events in the order they must first appear (start, ingest, refusals, shutdown).
EXPECTED_ORDER = [
    "starting", "engine_ready", "listening", "histogram_created", "ingest_stream_opened",
    "ingest_stream_closed", "histogram_create_refused", "signal_received", "shutdown_begin",
    "shutdown_done", "exited_cleanly",
]


def fail(message):
    print(f"log_lines: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check_json(raw_lines, samples, evil):
    events = []
    for number, raw in enumerate(raw_lines, 1):
        try:
            text = raw.decode("utf-8")  # strict: a line must be valid UTF-8
            line = json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            fail(f"line {number} is not JSON ({e}): {raw!r}")
        if not isinstance(line, dict):
            fail(f"line {number} is not an object: {raw!r}")
        missing = {"level", "time", "event", "fields"} - line.keys()
        if missing:
            fail(f"line {number} lacks {sorted(missing)}: {raw!r}")
        if line["level"] not in LEVELS:
            fail(f"line {number}: level {line['level']!r}")
        if not RFC3339_UTC.match(line["time"]):
            fail(f"line {number}: time {line['time']!r} is not RFC 3339 UTC")
        datetime.datetime.fromisoformat(line["time"].replace("Z", "+00:00"))
        if not isinstance(line["event"], str) or not line["event"]:
            fail(f"line {number}: event {line['event']!r}")
        if not isinstance(line["fields"], dict):
            fail(f"line {number}: fields is not an object")
        events.append(line)

    names = [e["event"] for e in events]
    position = 0
    for name in EXPECTED_ORDER:
        try:
            position = names.index(name, position) + 1
        except ValueError:
            fail(f"no {name!r} event after position {position} in {names}")

    def first(name):
        return next(e for e in events if e["event"] == name)

    levels = {e["event"]: e["level"] for e in events}
    if levels["histogram_create_refused"] != "warning":
        fail("histogram_create_refused is not a warning")
    if first("histogram_create_refused")["fields"].get("name") != "h":
        fail(f"histogram_create_refused fields: {first('histogram_create_refused')['fields']}")
    if first("listening")["fields"].get("address", "").count(":") < 1:
        fail("listening has no address")
    starting = first("starting")["fields"]
    for key, value in [("log_format", "json"), ("grpc_keepalive_time", "2h"),
                       ("grpc_max_connection_age", "inf"), ("grpc_http2_max_ping_strikes", 2)]:
        if starting.get(key) != value:
            fail(f"starting: {key} is {starting.get(key)!r}, want {value!r}")
    closed = [e["fields"] for e in events if e["event"] == "ingest_stream_closed"]
    applied = [c for c in closed if c.get("samples_applied") == samples]
    if not applied or applied[0].get("messages_rejected") != 0:
        fail(f"no closed stream with {samples} samples applied and none rejected: {closed}")
    rejected = [c for c in closed if c.get("messages_rejected") == 1]
    if not rejected or "NOT_FOUND" not in rejected[0].get("first_rejection", ""):
        fail(f"no closed stream whose first rejection is NOT_FOUND: {closed}")
    # The path as JSON carries it: the newline and quote intact, the invalid byte as U+FFFD.
    want = evil.decode("utf-8", errors="replace")
    for name, key in [("starting", "snapshot_path"), ("snapshot_written", "path")]:
        if want not in first(name)["fields"].get(key, ""):
            fail(f"{name}: {key} does not hold {want!r}: {first(name)['fields'].get(key)!r}")
    print(f"log_lines: {len(events)} JSON lines, events in order: {' '.join(EXPECTED_ORDER)}")


def check_text(raw_lines, samples, evil):
    for number, raw in enumerate(raw_lines, 1):
        text = raw.decode("utf-8", errors="replace")
        if not TEXT_LINE.match(text):
            fail(f"line {number} does not start with time, level and event: {raw!r}")
    closed = [r for r in raw_lines if b" ingest_stream_closed " in r]
    if not any(f" samples_applied={samples} ".encode() in r for r in closed):
        fail(f"no ingest_stream_closed with samples_applied={samples}")
    # The newline and quote escaped inside one quoted value.
    escaped = evil.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n")
    if not any(b" snapshot_written " in r and escaped in r for r in raw_lines):
        fail(f"no snapshot_written line with the path escaped as {escaped!r}")
    print(f"log_lines: {len(raw_lines)} text lines, each with time, level and event")


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("json", "text"):
        fail(__doc__)
    mode, path, samples, evil = sys.argv[1], sys.argv[2], int(sys.argv[3]), bytes.fromhex(sys.argv[4])
    with open(path, "rb") as f:
        raw_lines = f.read().split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    if not raw_lines:
        fail("empty log")
    (check_json if mode == "json" else check_text)(raw_lines, samples, evil)


if __name__ == "__main__":
    main()
