// Sample generators for the histogram benchmark and the GPU tests: the same function on
// host and device (a counter-based hash, no state), so a workload is fixed by its seed.
//
//   Roulo   a 2D gaussian cluster (sigma_row x sigma_col bins about a centre) plus a
//           fraction of uniform speckle over every bin (seed 003 in
//           docs/references.md: 256 x 8192, ~1M values);
//   uniform every bin equally likely;
//   single  every sample on one bin.
// Host and device may differ in the last bit of logf/cosf, so a workload generated on the
// host is not bit-identical to one generated on the device; tests generate on the host.
#pragma once

#include <cmath>
#include <cstdint>

namespace histd::workload {

#if defined(__CUDACC__)
#define HISTD_WL_HD __host__ __device__
#else
#define HISTD_WL_HD
#endif

HISTD_WL_HD inline uint64_t Mix64(uint64_t x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1], from 24 bits.
HISTD_WL_HD inline float Unit(uint64_t h) {
  return (static_cast<float>(static_cast<uint32_t>(h >> 40)) + 1.0f) * (1.0f / 16777216.0f);
}

struct ClusterSpec {
  float centre_row, centre_col;
  float sigma_row, sigma_col;
  float speckle;  // fraction of uniform samples
};

// Roulo's clustered workload with the eye at the centre (sigma 8 x 64 bins, 10% speckle).
HISTD_WL_HD inline ClusterSpec RouloCluster(uint32_t rows, uint32_t cols) {
  return ClusterSpec{rows * 0.5f, cols * 0.5f, 8.0f, 64.0f, 0.1f};
}

HISTD_WL_HD inline uint32_t UniformSample(uint64_t seed, uint64_t i, uint32_t bins) {
  return static_cast<uint32_t>((Mix64(seed * 0x100000001B3ull + i) >> 32) % bins);
}

HISTD_WL_HD inline uint32_t ClusterSample(uint64_t seed, uint64_t i, uint32_t rows, uint32_t cols,
                                          const ClusterSpec& c) {
  const uint64_t h0 = Mix64(seed * 0x100000001B3ull + 2 * i);
  const uint64_t h1 = Mix64(h0 ^ 0xD1B54A32D192ED03ull);
  if (Unit(h0 << 24) <= c.speckle) return static_cast<uint32_t>((h1 >> 32) % (uint64_t{rows} * cols));
  // Box-Muller.
  const float r = sqrtf(-2.0f * logf(Unit(h0)));
  const float t = 6.28318530718f * Unit(h1);
  float fr = c.centre_row + c.sigma_row * r * cosf(t);
  float fc = c.centre_col + c.sigma_col * r * sinf(t);
  fr = fminf(fmaxf(fr, 0.0f), rows - 1.0f);
  fc = fminf(fmaxf(fc, 0.0f), cols - 1.0f);
  uint32_t ir = static_cast<uint32_t>(fr), ic = static_cast<uint32_t>(fc);
  ir = ir < rows ? ir : rows - 1;  // float rounding near 2^24 and above
  ic = ic < cols ? ic : cols - 1;
  return ir * cols + ic;
}

}  // namespace histd::workload
