#!/usr/bin/env python3
"""deploy/grafana-dashboard.json: a Grafana dashboard that parses, whose panels query only
metrics histd exports, by the labels they have.

  dashboard_test.py ROOT PROMTOOL HISTD

Checks: the JSON parses; panels have unique ids and fit Grafana's 24-column grid; every
query names the ${datasource} variable; every metric name in every PromQL expression is one
of issue 33's families (a histogram's _bucket/_sum/_count series included); histograms are
read through histogram_quantile over _bucket with `le` kept; counters only through rate() or
increase(); every label an aggregation keeps is one the family has; the dashboard covers
ingest rate, ack and query latency, GPU kernel and copy time, memory budgets and snapshots.
Every expression must also parse as PromQL: PROMTOOL (Prometheus's promtool, from Debian's
`prometheus` package, which deploy/install-deps.sh installs) checks them as recording rules,
Grafana's variables replaced. And HISTD, started on the CPU engine with an HTTP endpoint,
must export every family the dashboard reads, with the type the dashboard reads it as
(`# TYPE` lines of its /metrics).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

# Issue 33's metric families and their labels ("histogram": _bucket/_sum/_count series).
FAMILIES = {
    "grpc_server_started_total": {"grpc_service", "grpc_method", "grpc_type"},
    "grpc_server_handled_total": {"grpc_service", "grpc_method", "grpc_code", "grpc_type"},
    "grpc_server_msg_received_total": {"grpc_service", "grpc_method", "grpc_type"},
    "grpc_server_msg_sent_total": {"grpc_service", "grpc_method", "grpc_type"},
    "grpc_server_handling_seconds": {"grpc_service", "grpc_method", "grpc_type"},
    "histd_ingest_samples_total": set(),
    "histd_ingest_bytes_total": set(),
    "histd_ingest_messages_total": {"code"},
    "histd_ingest_samples_outside_total": set(),
    "histd_ack_latency_seconds": set(),
    "histd_query_duration_seconds": {"method"},
    "histd_batches_total": set(),
    "histd_ingest_parked_messages_total": set(),
    "histd_ingest_parked_seconds_total": set(),
    "histd_ingest_flush_wait_seconds_total": set(),
    "histd_batch_samples": set(),
    "histd_staging_buffers": {"state"},
    "histd_pinned_bytes": set(),
    "histd_memory_budget_bytes": {"kind", "state"},
    "histd_device_memory_budget_bytes": {"device", "state"},
    "histd_device_memory_used_bytes": {"device"},
    "histd_histograms": {"device"},
    "histd_gpu_kernel_seconds_total": {"device"},
    "histd_gpu_copy_seconds_total": {"device"},
    "histd_snapshot_last_success_timestamp_seconds": set(),
    "histd_snapshot_duration_seconds": set(),
    "histd_snapshot_failures_total": set(),
    "histd_active_streams": set(),
    "histd_build_info": {"version", "engine"},
}
# Exported only with GPUs (the type check below runs a CPU-engine histd).
GPU_ONLY = {"histd_device_memory_budget_bytes"}
HISTOGRAMS = {"grpc_server_handling_seconds", "histd_ack_latency_seconds",
              "histd_query_duration_seconds", "histd_batch_samples"}
TARGET_LABELS = {"job", "instance"}  # added by Prometheus to every series
# What the dashboard must show (issue 33): each entry is satisfied by any family listed.
REQUIRED = {
    "ingest rate": {"histd_ingest_samples_total"},
    "ack latency": {"histd_ack_latency_seconds"},
    "query latency": {"histd_query_duration_seconds"},
    "GPU kernel time": {"histd_gpu_kernel_seconds_total"},
    "GPU copy time": {"histd_gpu_copy_seconds_total"},
    "memory budget": {"histd_memory_budget_bytes"},
    "snapshots": {f for f in FAMILIES if f.startswith("histd_snapshot_")},
}
KEYWORDS = {"and", "or", "unless", "offset", "bool", "by", "without", "on", "ignoring",
            "group_left", "group_right", "inf", "nan", "Inf", "NaN"}
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h",
                     "$job": ".*", "$instance": ".*"}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def strip(expr):
    """The expression without strings, label matchers and range/offset brackets."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", "", e)
    return re.sub(r"\[[^\]]*\]", "", e)


def series_names(expr):
    """Metric names an expression reads: identifiers that are not calls, keywords or
    grouping labels."""
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", strip(expr))
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        if m.start() > 0 and (e[m.start() - 1].isdigit() or e[m.start() - 1] == "."):
            continue  # the exponent or unit of a number (1e3)
        if e[m.end():].lstrip().startswith("(") or m.group(0) in KEYWORDS:
            continue
        names.add(m.group(0))
    return names


def family(series):
    for suffix in ("_bucket", "_sum", "_count"):
        base = series[: -len(suffix)]
        if series.endswith(suffix) and base in HISTOGRAMS:
            return base
    return series if series in FAMILIES else None


def exported_types(histd):
    """`# TYPE` of every family on the /metrics of a histd started here (CPU engine)."""
    with tempfile.TemporaryDirectory() as work:
        ready = os.path.join(work, "ready")
        daemon = subprocess.Popen([histd, "--engine=cpu", "--cpu_threads=1",
                                   "--address=127.0.0.1:0", "--http_address=127.0.0.1:0",
                                   f"--ready_file={ready}", "--log_level=warning"])
        try:
            lines = []
            for _ in range(300):
                if os.path.exists(ready):
                    lines = open(ready).read().split()
                if len(lines) >= 2 or daemon.poll() is not None:
                    break
                time.sleep(0.1)
            if not check(len(lines) >= 2, "histd wrote no HTTP address to --ready_file"):
                return {}
            with urllib.request.urlopen(f"http://{lines[1]}/metrics", timeout=10) as r:
                text = r.read().decode()
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
    return dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))


def main():
    root = sys.argv[1]
    promtool = shutil.which(sys.argv[2]) if len(sys.argv) > 2 else None
    check(promtool, "no promtool given or found (Debian: apt-get install prometheus)")
    with open(os.path.join(root, "deploy/grafana-dashboard.json")) as f:
        dashboard = json.load(f)
    for key in ("title", "uid", "schemaVersion", "panels", "templating"):
        check(key in dashboard, f"dashboard has no {key}")
    variables = {v["name"]: v for v in dashboard.get("templating", {}).get("list", [])}
    check(variables.get("datasource", {}).get("type") == "datasource" and
          variables["datasource"].get("query") == "prometheus",
          "no ${datasource} variable of Prometheus data sources")
    panels = dashboard.get("panels", [])
    ids = [p.get("id") for p in panels]
    check(len(ids) == len(set(ids)), f"panel ids repeat: {ids}")
    expressions = []
    for p in panels:
        g = p.get("gridPos", {})
        check(0 <= g.get("x", -1) and g.get("x", 0) + g.get("w", 0) <= 24 and g.get("h", 0) > 0,
              f"panel {p.get('title')!r} does not fit the grid: {g}")
        if p.get("type") == "row":
            continue
        check(p.get("targets"), f"panel {p.get('title')!r} has no query")
        for t in p.get("targets", []):
            check(t.get("datasource", p.get("datasource", {})).get("uid") == "${datasource}",
                  f"panel {p.get('title')!r}: a query not on ${{datasource}}")
            expressions.append((p.get("title"), t.get("expr", "")))
    for v in variables.values():
        if v.get("type") == "query":
            q = v.get("query")
            expressions.append((f"variable {v['name']}", q.get("query") if isinstance(q, dict) else q))

    used = set()
    for title, expr in expressions:
        check(expr, f"{title}: empty expression")
        if title.startswith("variable"):
            m = re.match(r"^label_values\((.*),\s*(\w+)\)$", expr)
            if check(m, f"{title}: not label_values(series, label): {expr}"):
                expr = m.group(1)
        for series in series_names(expr):
            f = family(series)
            if not check(f, f"{title}: {series} is not a metric of issue 33"):
                continue
            used.add(f)
            if f in HISTOGRAMS:
                check(series.endswith("_bucket") and "histogram_quantile(" in expr and
                      re.search(r"\bby\s*\([^)]*\ble\b", expr),
                      f"{title}: histogram {f} not read as histogram_quantile over _bucket by le")
            if f.endswith("_total"):
                check(re.search(r"\b(rate|increase)\s*\(\s*" + series, expr),
                      f"{title}: counter {series} not read through rate() or increase()")
        stripped = strip(expr)
        for m in re.finditer(r"\b(?:by|without)\s*\(([^)]*)\)", stripped):
            kept = {l.strip() for l in m.group(1).split(",") if l.strip()}
            allowed = set(TARGET_LABELS) | {"le"}
            for series in series_names(expr):
                if family(series):
                    allowed |= FAMILIES[family(series)]
            check(kept <= allowed, f"{title}: groups by {sorted(kept - allowed)}, labels its metrics lack")
    for topic, families in REQUIRED.items():
        check(used & families, f"no panel shows {topic} ({sorted(families)})")

    if not failures:
        types = exported_types(sys.argv[3]) if len(sys.argv) > 3 else {}
        check(types, "no HISTD given, or its /metrics had no # TYPE line")
        for f in sorted(used - GPU_ONLY):
            want = "histogram" if f in HISTOGRAMS else "counter" if f.endswith("_total") else "gauge"
            check(types.get(f) == want, f"histd exports {f} as {types.get(f)}, the dashboard reads a {want}")

    if promtool and not failures:
        rules = {"groups": [{"name": "dashboard", "rules": []}]}
        for i, (title, expr) in enumerate(expressions):
            for var, value in GRAFANA_VARIABLES.items():
                expr = expr.replace(var, value)
            if expr.startswith("label_values("):
                expr = re.match(r"^label_values\((.*),\s*\w+\)$", expr).group(1)
            rules["groups"][0]["rules"].append({"record": f"dashboard:expr_{i}", "expr": expr})
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            json.dump(rules, f)  # JSON is YAML
        result = subprocess.run([promtool, "check", "rules", f.name], capture_output=True, text=True)
        os.unlink(f.name)
        check(result.returncode == 0, f"promtool check rules: {result.stdout}{result.stderr}")

    if failures:
        for f in failures:
            print(f"dashboard: FAIL: {f}", file=sys.stderr)
        sys.exit(1)
    print(f"dashboard: {len(panels)} panels, {len(expressions)} expressions over "
          f"{len(used)} histd metric families, all exported by histd and parsed by promtool")


if __name__ == "__main__":
    main()
