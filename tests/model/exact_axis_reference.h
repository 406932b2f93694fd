// An independent, exact reference for regular-axis binning: rational arithmetic (GMP), no
// floating point after the inputs are read. -1 underflow (v < lo, -inf), -2 overflow
// (v >= hi, +inf) and -3 NaN; else floor((v - lo) * n / (hi - lo)).
// Also the adversarial coordinates of an axis: every edge's nearest float32 values and
// their neighbours, the axis ends, zeros of both signs, subnormals and non-finite values.
#pragma once

#include <gmpxx.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace histd::testing {

inline int64_t ExactAxisBin(float v, float lo, float hi, uint32_t n) {
  if (std::isnan(v)) return -3;
  if (v < lo) return -1;
  if (v >= hi) return -2;
  const mpq_class t = (mpq_class(static_cast<double>(v)) - mpq_class(static_cast<double>(lo))) *
                      mpq_class(n) /
                      (mpq_class(static_cast<double>(hi)) - mpq_class(static_cast<double>(lo)));
  mpz_class floor;
  mpz_fdiv_q(floor.get_mpz_t(), t.get_num_mpz_t(), t.get_den_mpz_t());
  return floor.get_si();
}

// The float32 nearest to edge k of [lo, hi) with n bins, computed exactly then rounded.
inline float NearestFloatToEdge(float lo, float hi, uint32_t n, uint64_t k) {
  const mpq_class edge = mpq_class(static_cast<double>(lo)) +
                         (mpq_class(static_cast<double>(hi)) - mpq_class(static_cast<double>(lo))) *
                             mpq_class(mpz_class(static_cast<unsigned long>(k)), n);
  return static_cast<float>(edge.get_d());  // double then float: within one float ulp
}

// Coordinates that probe [lo, hi) of n bins: for the edges (all when n <= max_edges, else
// the first and last 64 and random ones) the nearest float32 and two neighbours each way,
// plus special values. Every value is a float32.
inline std::vector<float> AdversarialCoordinates(float lo, float hi, uint32_t n,
                                                 std::mt19937_64& rng, uint32_t max_edges = 4096) {
  std::vector<uint64_t> edges;
  if (n <= max_edges) {
    for (uint64_t k = 0; k <= n; ++k) edges.push_back(k);
  } else {
    for (uint64_t k = 0; k < 64; ++k) edges.push_back(k);
    for (uint64_t k = n - 64; k <= n; ++k) edges.push_back(k);
    std::uniform_int_distribution<uint64_t> pick(0, n);
    for (uint32_t i = 0; i < max_edges; ++i) edges.push_back(pick(rng));
  }
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> out;
  for (uint64_t k : edges) {
    float f = NearestFloatToEdge(lo, hi, n, k);
    float down = f, up = f;
    out.push_back(f);
    for (int step = 0; step < 2; ++step) {
      down = std::nextafter(down, -inf);
      up = std::nextafter(up, inf);
      out.push_back(down);
      out.push_back(up);
    }
  }
  for (float v : {lo, hi, std::nextafter(lo, -inf), std::nextafter(hi, -inf), 0.0f, -0.0f,
                  1e-45f, -1e-45f, 1e-40f, -1e-40f, std::numeric_limits<float>::min(),
                  -std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max(), inf, -inf,
                  std::numeric_limits<float>::quiet_NaN()}) {
    out.push_back(v);
  }
  return out;
}

// Axes chosen to break float32 and float64 binning: offset, wide, narrow, subnormal,
// inexact widths, a zero edge, integer edges (where float64 rounds 15 into bin 14 of
// [0, 22) / 22), and the examples of issue 31.
struct TestAxis {
  float lo, hi;
  uint32_t bins;
};
inline std::vector<TestAxis> AdversarialAxes() {
  return {
      {0.0f, 1.0f, 10},         {-1.3f, 2.7f, 37},        {0.001f, 1000.0f, 1000},
      {0.1f, 0.3f, 7},          {0.1f, 0.7f, 3},          {0.0f, 1e-38f, 1000},
      {-1e-40f, 1e-40f, 10},    {0.0f, 1e-34f, 100000},   {-2e38f, 2e38f, 1000},
      {0.0f, 22.0f, 22},        {0.0f, 49.0f, 49},        {-500.0f, 500.0f, 1000},
      {1e-30f, 1.0f, 1000},     {-1e30f, 1.0f, 7},        {-1.0f, 1.0f, 2},
      {-3.0f, 3.0f, 6},         {3.0f, 5.0f, 8192},       {-5.5f, 100.25f, 256},
      {0.0f, 8192.0f, 8192},    {0.0f, 1.0f, 4294967295u}, {-0.5f, 255.5f, 256},
      {100.0f, 100.00001f, 3},  {0.0f, 3.4e38f, 65535},   {-1.0f, 0.0f, 1},
  };
}

}  // namespace histd::testing
