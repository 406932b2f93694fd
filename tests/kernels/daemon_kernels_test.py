#!/usr/bin/env python3
"""The daemon carries only the kernels its production dispatch selects (docs/architecture.md,
experiments/): reads the CUDA ELF images (cubins) embedded in the histd binary, lists their
__global__ entries (the functions with a .nv.constant0 parameter bank), demangles them, and
fails when a kernel is built twice (in two translation units), when an experiment's kernel is
among them, when the histogram kernels are not exactly the production six, or when a reduce,
scan or projection kernel is built for a shape or tuning other than kernels/reduce_scan/
tuning.h's. Prints the kernel count per area. Usage: daemon_kernels_test.py HISTD_BINARY"""
import re
import struct
import subprocess
import sys

EM_CUDA = 190

# The production histogram kernels (kernels/histogram/histogram_accumulate.cu).
HISTOGRAM_KERNELS = {
    "PlanTilesKernel",
    "ChooseTileWindowsKernel<false>",
    "ChooseTileWindowsKernel<true>",
    "HotWindowKernel<histd::cuda::histogram::HotWindowPolicy>",
    "FoldDeferredKernel",
    "BucketedKernel<histd::cuda::histogram::BucketedPolicy>",
}
# Names only histd::experiments defines or instantiates.
EXPERIMENT_MARKERS = ("Candidate", "ClusterResident", "PlanResidentUnits", "Roulo", "SeedNaiveGemm",
                      "SeedTiledGemm", "::RowScanKernel", "SumsToStartsKernel")
# Seed 002's reduction steps (experiments/reduce_scan/seed_reduce.cu).
EXPERIMENT_PATTERN = re.compile(r"::Step[1-7](<|$)")

# The production reduce, scan and projection shapes (kernels/reduce_scan/tuning.h): kernel ->
# the template arguments (or the tuning among them) it may be built with.
RS = "histd::cuda::reduce_scan::"
# Every other reduce/scan kernel family (ColumnSumsClusterKernel among them) is an experiment's.
REDUCE_SCAN_FAMILIES = {"WarpRowReduceKernel", "ThreadRowReduceKernel", "FinalizeKernel", "ClearScanWorkspaceKernel",
                        "WarpRowScanKernel", "ColumnScanKernel"}
REDUCE_SCAN_SHAPES = {
    "RowSumsKernel": lambda args: args == "64, 8",                     # RowSumsShape
    "ColumnSumsPackedKernel": lambda args: args == "4, 64, 4",         # ColumnSumsShape
    "SegmentReduceKernel": lambda args: args.endswith(RS + "ReduceTuningT<256, 8, 8>"),  # ReduceTuning
    "ColumnReduceKernel": lambda args: (RS + "ColumnReduceTuningT<4, 64, 4>," in args or    # tall
                                        RS + "ColumnReduceTuningT<32, 8, 4>," in args),     # wide
    "LookbackScanKernel": lambda args: args.endswith(RS + LOOKBACK_TUNING.get(
        args.split(",")[0], "ScanTuningT<128, 16, 1, false, false, true, 16, false>")),  # ScanTuningFor
}
LOOKBACK_TUNING = {
    "float": "ScanTuningT<512, 32, 2, true, true, true, 16, true>",
    "unsigned char": "ScanTuningT<128, 32, 1, true, true, true, 16, false>",
}


def reduce_scan_failure(bare):
    """Why a reduce/scan/projection kernel is not one of production's shapes, or None."""
    name = re.sub(r"^(void )?" + re.escape(RS) + r"(\(anonymous namespace\)::)?", "", bare)
    kernel, _, args = name.partition("<")
    if kernel in REDUCE_SCAN_FAMILIES:
        return None
    check = REDUCE_SCAN_SHAPES.get(kernel)
    if check is None:
        return "reduce/scan kernel of no production family: " + bare
    if check(args[:-1].strip()):
        return None
    return "reduce/scan kernel of a shape production does not pick: " + bare


def entries(blob):
    """Mangled names of every __global__ entry of every embedded cubin."""
    names = []
    at = 0
    while True:
        at = blob.find(b"\x7fELF\x02\x01", at)
        if at < 0:
            return names
        if struct.unpack_from("<H", blob, at + 18)[0] == EM_CUDA:
            shoff, = struct.unpack_from("<Q", blob, at + 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, at + 0x3A)
            headers = [struct.unpack_from("<IIQQQQIIQQ", blob, at + shoff + k * shentsize) for k in range(shnum)]
            strtab = headers[shstrndx][4]
            for h in headers:
                start = at + strtab + h[0]
                name = blob[start:blob.index(b"\0", start)].decode()
                if name.startswith(".nv.constant0."):
                    names.append(name[len(".nv.constant0."):])
        at += 4


def without_parameters(name):
    """A demangled function name without its trailing parameter list."""
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(name[i], 0)
        if depth == 0 and name[i] == "(":
            return name[:i]
    return name


def main():
    blob = open(sys.argv[1], "rb").read()
    mangled = entries(blob)
    if not mangled:
        print("no CUDA images in %s (a build without CUDA): nothing to check" % sys.argv[1])
        return 0
    demangled = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True,
                               check=True).stdout.split("\n")
    failures = []
    histogram = set()
    seen = set()
    areas = {}
    for name in demangled:
        bare = without_parameters(name)
        if name in seen:
            failures.append("kernel built twice: " + bare)
        seen.add(name)
        area = re.sub(r"^(void )?histd::cuda::", "", bare).split("::")[0].split("<")[0]
        areas[area] = areas.get(area, 0) + 1
        if any(m in bare for m in EXPERIMENT_MARKERS) or EXPERIMENT_PATTERN.search(bare):
            failures.append("experiment kernel in the daemon: " + bare)
        if bare.startswith(("histd::cuda::reduce_scan::", "void histd::cuda::reduce_scan::")):
            why = reduce_scan_failure(bare)
            if why:
                failures.append(why)
        if bare.startswith(("histd::cuda::histogram::", "void histd::cuda::histogram::")):
            histogram.add(re.sub(r"^(void )?histd::cuda::histogram::(\(anonymous namespace\)::)?", "", bare))
    if histogram != HISTOGRAM_KERNELS:
        failures.append("histogram kernels %s, want %s" % (sorted(histogram), sorted(HISTOGRAM_KERNELS)))
    for f in failures:
        print("FAIL: " + f)
    print("%d kernel entries, %d histogram; by namespace: %s" % (
        len(mangled), len(histogram), ", ".join("%s %d" % kv for kv in sorted(areas.items()))))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
