// The hot-window choice (block_window_select.cuh, in blocks of kWindowThreads as
// ChooseTileWindowsKernel runs it, and of the fewest and most threads it allows) against a
// host reference that scores every candidate rectangle by summing its cells directly (no
// summed-area table, no shape table): the same window, and the same count of probes
// captured, for clustered, off-centre, uniform and single-bin probes, on histogram shapes
// smaller and larger than the coarse grid, with every probe count from 0 to a full probe and
// window capacities from 1 bin to more than the histogram.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/histogram/block/block_window_select.cuh"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/histogram/histogram_test_util.h"

namespace histd::testing {
namespace {

namespace hg = cuda::histogram;


struct Case {
  uint32_t rows, cols, capacity;
  std::vector<uint32_t> r, c;  // probes
};

// SelectWindow's probe: (row, col) pairs read from two arrays.
struct CaseProbe {
  using Raw = uint2;
  const uint32_t* r;
  const uint32_t* c;
  __device__ uint2 Load(uint32_t i) const { return make_uint2(r[i], c[i]); }
  __device__ bool Bin(uint2 raw, uint32_t* row, uint32_t* col) const {
    *row = raw.x;
    *col = raw.y;
    return true;
  }
};

// One block per case: probes (row, col) from the case's arrays; out = r0, c0, wh, ww, captured.
template <int kThreads>
__global__ void SelectKernel(const uint32_t* dims, const uint32_t* offsets,
                             const uint32_t* probe_r, const uint32_t* probe_c, uint32_t* out) {
  __shared__ uint32_t cells[hg::kWindowCells];
  __shared__ uint32_t warp_best[kThreads / 32];
  const uint32_t k = blockIdx.x;
  const uint32_t rows = dims[3 * k], cols = dims[3 * k + 1], capacity = dims[3 * k + 2];
  const uint32_t first = offsets[k], probes = offsets[k + 1] - offsets[k];
  const CaseProbe probe{probe_r + first, probe_c + first};
  uint32_t captured = 0;
  const hg::Window w =
      hg::SelectWindow<kThreads>(rows, cols, capacity, probes, probe, cells, warp_best, &captured);
  if (threadIdx.x == 0) {
    uint32_t* o = out + 5 * k;
    o[0] = w.r0, o[1] = w.c0, o[2] = w.wh, o[3] = w.ww, o[4] = captured;
  }
}

// The reference: every shape of ShapeOf, every placement, its probes summed cell by cell;
// the most probes wins, ties to the first in (shape, row, column) order; then FitWindow.
hg::Window ReferenceWindow(const Case& k, uint32_t* captured) {
  const hg::CoarseGrid g = hg::CoarseGrid::For(k.rows, k.cols);
  std::vector<uint32_t> cell(size_t{g.grid_rows} * g.grid_cols, 0);
  for (size_t i = 0; i < k.r.size(); ++i) ++cell[(k.r[i] / g.cell_h) * g.grid_cols + k.c[i] / g.cell_w];
  bool found = false;
  uint32_t best = 0, best_i = 0, best_j = 0, best_a = 0, best_b = 0;
  for (int s = 0; s < hg::kWindowShapes; ++s) {
    uint32_t a, b;
    if (!hg::ShapeOf(s, g, k.capacity, &a, &b)) continue;
    for (uint32_t i = 0; i + a <= g.grid_rows; ++i) {
      for (uint32_t j = 0; j + b <= g.grid_cols; ++j) {
        uint32_t n = 0;
        for (uint32_t y = i; y < i + a; ++y)
          for (uint32_t x = j; x < j + b; ++x) n += cell[y * g.grid_cols + x];
        if (!found || n > best) {
          found = true;
          best = n, best_i = i, best_j = j, best_a = a, best_b = b;
        }
      }
    }
  }
  *captured = best;
  const uint32_t r0 = best_i * g.cell_h, c0 = best_j * g.cell_w;
  const uint32_t r1 = std::min(k.rows, r0 + best_a * g.cell_h), c1 = std::min(k.cols, c0 + best_b * g.cell_w);
  return hg::FitWindow(k.rows, k.cols, k.capacity, r0, r1 - r0, c0, c1 - c0);
}

// `n` probes: a gaussian eye (sigma in bins) at (er, ec) with a share of uniform speckle.
Case Clustered(std::mt19937_64& rng, uint32_t rows, uint32_t cols, uint32_t capacity, uint32_t n, double er, double ec,
               double sr, double sc, double speckle) {
  Case k{rows, cols, capacity, {}, {}};
  std::normal_distribution<double> nr(er, sr), nc(ec, sc);
  std::uniform_real_distribution<double> u(0, 1);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t r, c;
    if (u(rng) < speckle) {
      r = static_cast<uint32_t>(rng() % rows);
      c = static_cast<uint32_t>(rng() % cols);
    } else {
      r = static_cast<uint32_t>(std::clamp(std::lround(nr(rng)), 0l, static_cast<long>(rows) - 1));
      c = static_cast<uint32_t>(std::clamp(std::lround(nc(rng)), 0l, static_cast<long>(cols) - 1));
    }
    k.r.push_back(r);
    k.c.push_back(c);
  }
  return k;
}

TEST(CudaHistogramWindowSelect, MatchesTheHostReference) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 0x3141u);
  std::vector<Case> cases;
  std::vector<std::string> names;
  auto add = [&](Case k, const std::string& name) {
    cases.push_back(std::move(k));
    names.push_back(name);
  };
  const uint32_t full = hg::kWindowProbeSamples;
  add(Clustered(rng, 256, 8192, 65536, full, 128, 4096, 8, 64, 0.1), "Roulo's eye, centred");
  add(Clustered(rng, 256, 8192, 65536, full, 40, 1500, 8, 64, 0.1), "Roulo's eye at row 40, col 1500");
  add(Clustered(rng, 256, 8192, 65536, full, 0, 8191, 3, 20, 0.02), "eye in a corner");
  add(Clustered(rng, 256, 8192, 65536, full, 0, 0, 1, 1, 1.0), "uniform");
  add(Clustered(rng, 256, 8192, 65536, full, 37, 5001, 0, 0, 0.0), "one bin");
  add(Clustered(rng, 256, 8192, 4096, full, 100, 300, 30, 900, 0.05), "small capacity, wide eye");
  add(Clustered(rng, 256, 8192, 1, full, 10, 10, 2, 2, 0.0), "one-bin capacity");
  add(Clustered(rng, 1, 1u << 20, 65536, full, 0, 700000, 0, 5000, 0.1), "one row of 2^20 bins");
  add(Clustered(rng, 1u << 20, 1, 65536, full, 300000, 0, 9000, 0, 0.1), "one column of 2^20 bins");
  add(Clustered(rng, 5, 1000, 256, full, 2, 500, 1, 50, 0.2), "5 x 1000 (fewer rows than the grid)");
  add(Clustered(rng, 1000, 3, 64, full, 500, 1, 40, 1, 0.2), "1000 x 3 (fewer columns than the grid)");
  add(Clustered(rng, 4096, 4096, 65536, full, 3000, 1000, 200, 40, 0.1), "4096 x 4096, tall eye");
  add(Clustered(rng, 33, 65, 1000, full, 16, 32, 4, 8, 0.3), "33 x 65 (uneven cells)");
  for (uint32_t n : {0u, 1u, 15u, 16u, 37u, 255u, 256u, 257u, 1000u})
    add(Clustered(rng, 256, 8192, 65536, n, 200, 7000, 8, 64, 0.1), "Roulo's shape, " + std::to_string(n) + " probes");
  for (int r = 0; r < 6; ++r) {  // random shapes, capacities and eyes
    const uint32_t rows = 1 + static_cast<uint32_t>(rng() % 3000), cols = 1 + static_cast<uint32_t>(rng() % 9000);
    const uint32_t cap = 1 + static_cast<uint32_t>(rng() % 70000);
    add(Clustered(rng, rows, cols, cap, full, double(rng() % rows), double(rng() % cols), 1 + double(rng() % 50),
                  1 + double(rng() % 300), 0.1),
        "random " + std::to_string(rows) + " x " + std::to_string(cols) + ", capacity " + std::to_string(cap));
  }

  std::vector<uint32_t> dims, offsets{0}, pr, pc;
  for (const Case& k : cases) {
    dims.insert(dims.end(), {k.rows, k.cols, k.capacity});
    pr.insert(pr.end(), k.r.begin(), k.r.end());
    pc.insert(pc.end(), k.c.begin(), k.c.end());
    offsets.push_back(static_cast<uint32_t>(pr.size()));
  }
  pr.push_back(0), pc.push_back(0);  // never empty
  auto upload = [](const std::vector<uint32_t>& v) {
    auto d = cuda::DeviceBuffer::Allocate(v.size() * 4).value();
    EXPECT_EQ(cudaMemcpy(d.get(), v.data(), v.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    return d;
  };
  auto d_dims = upload(dims), d_offsets = upload(offsets), d_r = upload(pr), d_c = upload(pc);
  const size_t out_bytes = cases.size() * 5 * 4;
  auto d_out = cuda::DeviceBuffer::Allocate(out_bytes).value();
  // The window kernel's block, and the smallest and largest blocks the code allows.
  auto check = [&](auto kernel, int threads) {
    PoisonDevice(d_out.get(), out_bytes);
    kernel<<<static_cast<unsigned>(cases.size()), threads>>>(d_dims.as<uint32_t>(), d_offsets.as<uint32_t>(),
                                                            d_r.as<uint32_t>(), d_c.as<uint32_t>(),
                                                            d_out.as<uint32_t>());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint32_t> out(cases.size() * 5);
    ASSERT_EQ(cudaMemcpy(out.data(), d_out.get(), out_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < cases.size(); ++i) {
      uint32_t captured = 0;
      const hg::Window want = ReferenceWindow(cases[i], &captured);
      const uint32_t* got = &out[5 * i];
      const std::string name = names[i] + " (" + std::to_string(threads) + " threads)";
      EXPECT_EQ(got[0], want.r0) << name;
      EXPECT_EQ(got[1], want.c0) << name;
      EXPECT_EQ(got[2], want.wh) << name;
      EXPECT_EQ(got[3], want.ww) << name;
      EXPECT_EQ(got[4], captured) << name;
      EXPECT_LE(uint64_t{want.wh} * want.ww, cases[i].capacity) << name;
    }
  };
  check(SelectKernel<hg::kWindowThreads>, hg::kWindowThreads);
  check(SelectKernel<64>, 64);
  check(SelectKernel<1024>, 1024);
}

}  // namespace
}  // namespace histd::testing
