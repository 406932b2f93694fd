#!/usr/bin/env python3
"""The daemon carries only the kernels its production dispatch selects (docs/architecture.md,
experiments/): reads the CUDA ELF images (cubins) embedded in the histd binary, lists their
__global__ entries (the functions with a .nv.constant0 parameter bank), demangles them, and
fails when an experiment's kernel is among them or when the histogram kernels are not exactly
the production six. Usage: daemon_kernels_test.py HISTD_BINARY"""
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
                      "SeedTiledGemm")


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
    for name in demangled:
        bare = without_parameters(name)
        if any(m in bare for m in EXPERIMENT_MARKERS):
            failures.append("experiment kernel in the daemon: " + bare)
        if bare.startswith(("histd::cuda::histogram::", "void histd::cuda::histogram::")):
            histogram.add(re.sub(r"^(void )?histd::cuda::histogram::(\(anonymous namespace\)::)?", "", bare))
    if histogram != HISTOGRAM_KERNELS:
        failures.append("histogram kernels %s, want %s" % (sorted(histogram), sorted(HISTOGRAM_KERNELS)))
    for f in failures:
        print("FAIL: " + f)
    print("%d kernel entries, %d histogram" % (len(mangled), len(histogram)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
