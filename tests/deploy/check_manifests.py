#!/usr/bin/env python3
"""Checks deploy/'s Kubernetes manifests, Dockerfile and systemd unit against each other and
against histd itself.

  check_manifests.py HISTD ROOT

- Every Kubernetes object of deploy/kubernetes.yaml is validated (strictly: no unknown
  field) with kubernetes-validate against Kubernetes' own schemas, bundled in the package,
  for the oldest and newest version histd supports (MIN_VERSION, the package's latest).
- The ServiceMonitor (deploy/kubernetes-servicemonitor.yaml) is a Prometheus Operator CRD,
  outside those schemas: it is validated with the pydantic models that
  cloudcoil-models-prometheus-operator generates from the Operator's CRDs (types, enums,
  patterns, required fields), and any field those models do not know is refused.
- References between objects: selectors match the pod labels, Service and probe ports name
  container ports, the ServiceMonitor selects the Service and names its port, the ports in
  histd's --address and --http_address are the declared ones, the startup probe waits long
  enough for a large snapshot, the termination grace covers --shutdown_grace.
- Every flag that the manifests, the Dockerfile and the systemd unit pass to histd is one
  that `HISTD --help` lists.
"""
import re
import subprocess
import sys

import kubernetes_validate
import yaml
from cloudcoil.models.prometheus_operator import v1 as prometheus_operator

MIN_VERSION = "1.29"  # policy/v1 PodDisruptionBudget, startupProbe: GA long before
STARTUP_BUDGET_SECONDS = 30 * 60  # a large snapshot restores within this

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def unknown_keys(given, known, path="spec"):
    """Keys of `given` that the validated model dropped (pydantic ignores unknown fields)."""
    out = []
    if isinstance(given, dict):
        for key, value in given.items():
            if not isinstance(known, dict) or key not in known:
                out.append(f"{path}.{key}")
            else:
                out += unknown_keys(value, known[key], f"{path}.{key}")
    elif isinstance(given, list) and isinstance(known, list):
        for i, (g, k) in enumerate(zip(given, known)):
            out += unknown_keys(g, k, f"{path}[{i}]")
    return out


def histd_flags(histd):
    text = subprocess.run([histd, "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"^\s+--([a-z0-9_]+) \(", text, re.M))


def flags_in(args):
    return {m.group(1): m.group(2) for a in args
            for m in [re.match(r"^--([a-z0-9_]+)(?:=(.*))?$", a)] if m}


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def seconds(duration):
    """An Abseil duration flag value (10s, 1m30s, 500ms) in seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
    parts = re.findall(r"([0-9.]+)(h|ms|us|ns|m|s)", duration)
    return sum(float(n) * units[u] for n, u in parts)


def main():
    histd, root = sys.argv[1], sys.argv[2]
    objects = load(f"{root}/deploy/kubernetes.yaml")
    monitors = load(f"{root}/deploy/kubernetes-servicemonitor.yaml")
    by_kind = {}
    for o in objects + monitors:
        by_kind.setdefault(o["kind"], []).append(o)
    for kind in ("StatefulSet", "Service", "PodDisruptionBudget", "ServiceMonitor"):
        check(len(by_kind.get(kind, [])) == 1, f"want one {kind}, got {len(by_kind.get(kind, []))}")
    if failures:
        return

    latest = kubernetes_validate.latest_version()
    for o in objects:
        for version in (MIN_VERSION, latest):
            try:
                kubernetes_validate.validate(o, version, strict=True)
            except kubernetes_validate.ValidationError as e:
                failures.append(f"{o['kind']}/{o['metadata']['name']} on Kubernetes {version}: "
                                f"{e.message} at {'.'.join(str(p) for p in e.path)}")
            except kubernetes_validate.SchemaNotFoundError as e:
                failures.append(f"{o['kind']}: {e.message}")
    monitor = by_kind["ServiceMonitor"][0]
    try:
        model = prometheus_operator.ServiceMonitor.model_validate(monitor)
        dumped = model.model_dump(by_alias=True, exclude_unset=True)
        for key in unknown_keys(monitor["spec"], dumped["spec"]):
            failures.append(f"ServiceMonitor: unknown field {key}")
    except Exception as e:  # pydantic.ValidationError names every field in error
        failures.append(f"ServiceMonitor: {e}")

    sts, service, pdb = (by_kind[k][0] for k in ("StatefulSet", "Service", "PodDisruptionBudget"))
    pod = sts["spec"]["template"]
    labels = pod["metadata"]["labels"]
    container = next(c for c in pod["spec"]["containers"] if c["name"] == "histd")
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    args = flags_in(container.get("args", []))

    def selects(selector, target, what):
        check(selector and all(target.get(k) == v for k, v in selector.items()),
              f"{what} {selector} does not match {target}")

    selects(sts["spec"]["selector"]["matchLabels"], labels, "StatefulSet selector")
    selects(service["spec"]["selector"], labels, "Service selector")
    selects(pdb["spec"]["selector"]["matchLabels"], labels, "PodDisruptionBudget selector")
    selects(monitor["spec"]["selector"]["matchLabels"], service["metadata"].get("labels", {}),
            "ServiceMonitor selector (against the Service's labels)")
    check(sts["spec"]["serviceName"] == service["metadata"]["name"] and
          service["spec"].get("clusterIP") == "None",
          "the StatefulSet's serviceName must be its headless Service (stable pod names)")
    for p in service["spec"]["ports"]:
        check(p["targetPort"] in ports, f"Service port {p['name']} targets unknown port {p['targetPort']}")
    service_ports = {p["name"] for p in service["spec"]["ports"]}
    for e in monitor["spec"]["endpoints"]:
        check(e.get("port") in service_ports, f"ServiceMonitor port {e.get('port')} is no Service port")
        check(e.get("path") == "/metrics", f"ServiceMonitor path {e.get('path')}")

    check("address" in args and port_of(args["address"]) == ports.get("grpc"),
          f"--address {args.get('address')} is not the grpc containerPort {ports.get('grpc')}")
    check("http_address" in args and port_of(args["http_address"]) == ports.get("http"),
          f"--http_address {args.get('http_address')} is not the http containerPort {ports.get('http')}")
    annotations = pod["metadata"].get("annotations", {})
    check(annotations.get("prometheus.io/port") == str(ports.get("http")),
          "prometheus.io/port annotation is not the http port")
    probes = {k: container.get(k) for k in ("startupProbe", "livenessProbe", "readinessProbe")}
    for name, want_path in [("startupProbe", "/readyz"), ("livenessProbe", "/healthz"),
                            ("readinessProbe", "/readyz")]:
        probe = probes[name]
        if check(probe and "httpGet" in probe, f"{name} is not an HTTP probe"):
            check(probe["httpGet"]["path"] == want_path, f"{name} path {probe['httpGet']['path']}")
            check(probe["httpGet"]["port"] in ports, f"{name} port {probe['httpGet']['port']}")
    startup = probes["startupProbe"] or {}
    period, threshold = startup.get("periodSeconds", 10), startup.get("failureThreshold", 3)
    budget = period * threshold if isinstance(period, int) and isinstance(threshold, int) else 0
    check(budget >= STARTUP_BUDGET_SECONDS,
          f"the startup probe gives {budget} s, want >= {STARTUP_BUDGET_SECONDS} s for a restore")
    grace = seconds(args.get("shutdown_grace", "10s"))
    check(pod["spec"].get("terminationGracePeriodSeconds", 30) >= grace + 20,
          f"terminationGracePeriodSeconds must cover --shutdown_grace ({grace} s) and the snapshot")

    known = histd_flags(histd)
    check(len(known) > 20, f"`{histd} --help` listed {len(known)} flags")
    with open(f"{root}/Dockerfile") as f:
        entrypoint = re.search(r'^ENTRYPOINT \[(.*)\]', f.read(), re.M)
    docker_args = re.findall(r'"([^"]*)"', entrypoint.group(1))[1:] if entrypoint else []
    with open(f"{root}/deploy/histd.service") as f:
        exec_start = re.search(r"^ExecStart=(.*)$", f.read(), re.M).group(1).split()[1:]
    for where, used in [("kubernetes.yaml", args), ("Dockerfile", flags_in(docker_args)),
                        ("histd.service", flags_in(exec_start))]:
        check(used, f"{where}: no histd flags found")
        for flag in used:
            check(flag in known, f"{where} passes --{flag}, which `histd --help` does not list")

    if failures:
        return
    print(f"manifests: {len(objects)} objects valid on Kubernetes {MIN_VERSION} and {latest} "
          f"(strict), the ServiceMonitor against the Operator's CRD models, cross-references "
          f"and {len(args)} + {len(docker_args)} + {len(exec_start)} flags checked")


if __name__ == "__main__":
    main()
    if failures:
        for f in failures:
            print(f"manifests: FAIL: {f}", file=sys.stderr)
        sys.exit(1)
