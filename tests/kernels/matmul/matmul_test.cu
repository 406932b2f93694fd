// GPU tests of the FP32 matmul (kernels/matmul): every path against a float64 host
// reference with a k-dependent tolerance, on awkward shapes, leading dimensions larger than
// the rows, alpha/beta, unaligned pointers and split-k. C's padding (between n and ldc) and a
// guard after C are poisoned and must come back untouched; with beta == 0, C starts as NaN
// and must not be read. SKIPPED without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "experiments/matmul/matmul_paths.h"
#include "kernels/common/device_buffer.h"
#include "kernels/matmul/matmul.h"
#include "tests/kernels/gpu_test_util.h"

namespace histd::cuda {
namespace {

struct GemmCase {
  int64_t m, n, k;
  float alpha = 1.0f, beta = 0.0f;
  int64_t lda_pad = 0, ldb_pad = 0, ldc_pad = 0;
  int64_t a_off = 0, b_off = 0, c_off = 0;  // floats from a 256-byte aligned base
  MatmulChoice choice{};

  std::string Name() const {
    return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
           " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta) + " pads=" + std::to_string(lda_pad) +
           "," + std::to_string(ldb_pad) + "," + std::to_string(ldc_pad) + " offs=" + std::to_string(a_off) + "," +
           std::to_string(b_off) + "," + std::to_string(c_off) + " path=" + MatmulPathName(choice.path) +
           " split=" + std::to_string(choice.split_k);
  }
};

// Host data of one problem, shared by the runs of several paths.
struct HostProblem {
  GemmCase shape;
  std::vector<float> a, b, c0;  // padded layouts, offsets included
  std::vector<double> ref, bound;
};

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

HostProblem MakeProblem(const GemmCase& g, uint64_t seed) {
  HostProblem h;
  h.shape = g;
  const int64_t lda = g.k + g.lda_pad, ldb = g.n + g.ldb_pad, ldc = g.n + g.ldc_pad;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  h.a.assign(g.a_off + g.m * lda + 4, 0.0f);
  h.b.assign(g.b_off + g.k * ldb + 4, 0.0f);
  h.c0.assign(g.c_off + g.m * ldc + 8, 0.0f);
  for (auto& x : h.a) x = dist(rng);
  for (auto& x : h.b) x = dist(rng);
  for (auto& x : h.c0) x = g.beta == 0.0f ? std::nanf("") : dist(rng);
  h.ref.assign(g.m * g.n, 0.0);
  h.bound.assign(g.m * g.n, 0.0);
  const double u = std::ldexp(1.0, -24);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0, abs_sum = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const double prod = double(h.a[g.a_off + i * lda + p]) * double(h.b[g.b_off + p * ldb + j]);
        sum += prod;
        abs_sum += std::fabs(prod);
      }
      const double cin = g.beta == 0.0f ? 0.0 : double(h.c0[g.c_off + i * ldc + j]);
      h.ref[i * g.n + j] = double(g.alpha) * sum + double(g.beta) * cin;
      // FP32 rounding grows like sqrt(k) for random data; 4x margin, plus the epilogue.
      h.bound[i * g.n + j] = 4.0 * u * std::sqrt(double(g.k) + 1.0) * std::fabs(g.alpha) * abs_sum +
                             4.0 * u * (std::fabs(g.alpha * sum) + std::fabs(g.beta * cin)) + 1e-30;
    }
  return h;
}

void RunOn(const HostProblem& h, MatmulChoice choice) {
  GemmCase g = h.shape;
  g.choice = choice;
  SCOPED_TRACE(g.Name());
  const int64_t lda = g.k + g.lda_pad, ldb = g.n + g.ldb_pad, ldc = g.n + g.ldc_pad;
  auto da = DeviceBuffer::Allocate(h.a.size() * 4);
  auto db = DeviceBuffer::Allocate(h.b.size() * 4);
  auto dc = DeviceBuffer::Allocate(h.c0.size() * 4);
  ASSERT_TRUE(da.ok() && db.ok() && dc.ok());
  ASSERT_EQ(cudaMemcpy(da->get(), h.a.data(), h.a.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db->get(), h.b.data(), h.b.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dc->get(), h.c0.data(), h.c0.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);

  MatmulArgs args;
  args.m = g.m;
  args.n = g.n;
  args.k = g.k;
  args.alpha = g.alpha;
  args.beta = g.beta;
  args.a = da->as<float>() + g.a_off;
  args.lda = lda;
  args.b = db->as<float>() + g.b_off;
  args.ldb = ldb;
  args.c = dc->as<float>() + g.c_off;
  args.ldc = ldc;
  ASSERT_TRUE(Matmul::can_implement(args).ok()) << Matmul::can_implement(args);
  const size_t ws_bytes = MatmulWithChoice::get_workspace_size(args, choice);
  auto ws = DeviceBuffer::Allocate(ws_bytes);
  ASSERT_TRUE(ws.ok());
  if (ws_bytes > 0) testing::PoisonDevice(ws->get(), ws_bytes);
  if (choice.split_k > 1 && ws_bytes == 0) EXPECT_EQ(MatmulWithChoice::Resolved(args, choice).split_k, 1);
  const absl::Status ran = MatmulWithChoice::run(args, choice, ws->get(), nullptr);
  ASSERT_TRUE(ran.ok()) << ran;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<float> got(h.c0.size());
  ASSERT_EQ(cudaMemcpy(got.data(), dc->get(), got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  int64_t bad = 0;
  for (size_t idx = 0; idx < got.size(); ++idx) {
    const int64_t rel = static_cast<int64_t>(idx) - g.c_off;
    const int64_t i = rel >= 0 && ldc > 0 ? rel / ldc : -1, j = rel >= 0 && ldc > 0 ? rel % ldc : -1;
    const bool element = rel >= 0 && i >= 0 && i < g.m && j < g.n;
    if (!element) {  // padding and guards: bit for bit as before
      if (FloatBits(got[idx]) != FloatBits(h.c0[idx]) && bad++ < 5)
        ADD_FAILURE() << "wrote outside C at float " << idx << " (row " << i << ", col " << j << ")";
      continue;
    }
    const double want = h.ref[i * g.n + j], tol = h.bound[i * g.n + j];
    if (!(std::fabs(double(got[idx]) - want) <= tol) && bad++ < 5)
      ADD_FAILURE() << "C[" << i << "][" << j << "] = " << got[idx] << ", want " << want << " +- " << tol;
  }
  EXPECT_EQ(bad, 0);
}

std::vector<MatmulChoice> ChoicesFor(const GemmCase& g) {
  std::vector<MatmulChoice> out = {{MatmulPath::kAuto, 0},          {MatmulPath::kSimt128x128, 1},
                                   {MatmulPath::kSimt128x128K16, 1}, {MatmulPath::kSimt128x128K16S4, 1},
                                   {MatmulPath::kSimt128x128K32, 2},  {MatmulPath::kSimt128x64, 1},
                                   {MatmulPath::kSimt64x128, 1},     {MatmulPath::kSimt64x64, 1},
                                   {MatmulPath::kSimt64x64, 3},      {MatmulPath::kSmallM, 1},
                                   {MatmulPath::kSmallM, 4}};
  if (g.n <= 8) out.push_back({MatmulPath::kSmallN, 1});
  if (g.m * g.n * g.k <= (int64_t{1} << 22)) {
    out.push_back({MatmulPath::kSeedNaive, 1});
    out.push_back({MatmulPath::kSeedTiled, 1});
  }
  return out;
}

TEST(CudaMatmul, EveryPathOnAwkwardShapes) {
  HISTD_REQUIRE_GPU();
  // The lean sweep: 1, 2 and 129 still give single rows, odd and even sums (pads), partial tiles.
  const std::vector<int64_t> dims = testing::LeanSweep() ? std::vector<int64_t>{1, 2, 129} : std::vector<int64_t>{1, 2, 17, 33, 129};
  uint64_t seed = 100;
  for (const int64_t m : dims)
    for (const int64_t n : dims)
      for (const int64_t k : dims) {
        GemmCase g{m, n, k};
        // Alternate tight/aligned and odd leading dimensions and offsets across shapes.
        if ((m + n + k) % 2 == 0) {
          g.lda_pad = 3, g.ldb_pad = 5, g.ldc_pad = 7, g.a_off = 1, g.b_off = 3, g.c_off = 1;
          g.alpha = -1.5f, g.beta = 0.75f;
        }
        const HostProblem h = MakeProblem(g, ++seed);
        for (const MatmulChoice& c : ChoicesFor(g)) {
          RunOn(h, c);
          if (::testing::Test::HasFailure()) return;
        }
      }
}

TEST(CudaMatmul, ZeroSizedDimensions) {
  HISTD_REQUIRE_GPU();
  for (const auto& [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 0, 0}, {0, 5, 7}, {5, 0, 7}, {5, 7, 0}, {33, 129, 0}}) {
    GemmCase g{m, n, k};
    g.alpha = 2.0f;
    g.beta = 0.5f;  // k == 0: C = beta * C
    const HostProblem h = MakeProblem(g, 7);
    for (const MatmulChoice& c : ChoicesFor(g)) RunOn(h, c);
  }
  MatmulArgs empty;  // m = n = 0: null pointers are fine
  EXPECT_TRUE(Matmul::can_implement(empty).ok());
  EXPECT_TRUE(Matmul::run(empty, nullptr, nullptr).ok());
}

TEST(CudaMatmul, LargeOddShapesAndLeadingDims) {
  HISTD_REQUIRE_GPU();
  uint64_t seed = 9000;
  const std::vector<GemmCase> cases = {
      {129, 129, 4097},  {4097, 33, 17},   {33, 4097, 17},  {1, 4097, 4097}, {4097, 1, 4097},
      {17, 1025, 4097},  {4097, 5, 1000},  {300, 257, 513}, {16, 300, 2000}, {1000, 1000, 64},
  };
  for (GemmCase g : cases) {
    if (testing::LeanSkips(uint64_t(g.m * g.n * g.k), uint64_t{1} << 25)) continue;
    for (const bool odd : {false, true}) {
      g.lda_pad = odd ? 1 : 4;
      g.ldb_pad = odd ? 3 : 8;
      g.ldc_pad = odd ? 5 : 4;
      g.a_off = odd ? 1 : 0;
      g.b_off = odd ? 2 : 0;
      g.c_off = odd ? 3 : 0;
      g.alpha = odd ? 0.5f : 1.0f;
      g.beta = odd ? -2.0f : 0.0f;
      const HostProblem h = MakeProblem(g, ++seed);
      RunOn(h, {MatmulPath::kAuto, 0});
      RunOn(h, {MatmulPath::kSimt128x128, 1});
      RunOn(h, {MatmulPath::kSimt128x128K16, 2});
      RunOn(h, {MatmulPath::kSimt64x64, 0});
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(CudaMatmul, DeterministicBits) {
  HISTD_REQUIRE_GPU();
  // Same inputs, same path: the same bits, for the split-k paths too.
  const bool lean = testing::LeanSweep();
  const int64_t m = lean ? 65 : 257, n = lean ? 67 : 263, k = lean ? 513 : 2049;
  std::vector<float> a(m * k), b(k * n);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto& x : a) x = dist(rng);
  for (auto& x : b) x = dist(rng);
  auto da = DeviceBuffer::Allocate(a.size() * 4), db = DeviceBuffer::Allocate(b.size() * 4),
       dc = DeviceBuffer::Allocate(m * n * 4);
  ASSERT_TRUE(da.ok() && db.ok() && dc.ok());
  ASSERT_EQ(cudaMemcpy(da->get(), a.data(), a.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db->get(), b.data(), b.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  const MatmulArgs args{m, n, k, 1.0f, da->as<float>(), k, db->as<float>(), n, 0.0f, dc->as<float>(), n};
  for (const MatmulChoice c : {MatmulChoice{MatmulPath::kAuto, 0}, MatmulChoice{MatmulPath::kSimt128x128, 4},
                               MatmulChoice{MatmulPath::kSmallM, 8}}) {
    std::vector<float> first, now(m * n);
    for (int rep = 0; rep < 3; ++rep) {
      auto ws = DeviceBuffer::Allocate(MatmulWithChoice::get_workspace_size(args, c));
      ASSERT_TRUE(ws.ok());
      testing::PoisonDevice(dc->get(), m * n * 4);
      ASSERT_TRUE(MatmulWithChoice::run(args, c, ws->get(), nullptr).ok());
      ASSERT_EQ(cudaMemcpy(now.data(), dc->get(), m * n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      if (rep == 0) first = now;
      EXPECT_EQ(std::memcmp(first.data(), now.data(), m * n * 4), 0) << MatmulPathName(c.path);
    }
  }
}

TEST(CudaMatmul, RejectsBadArguments) {
  HISTD_REQUIRE_GPU();
  auto buf = DeviceBuffer::Allocate(1 << 16);
  ASSERT_TRUE(buf.ok());
  float* p = buf->as<float>();
  const MatmulArgs ok{4, 4, 4, 1.0f, p, 4, p + 64, 4, 0.0f, p + 128, 4};
  EXPECT_TRUE(Matmul::can_implement(ok).ok());
  MatmulArgs bad = ok;
  bad.lda = 3;
  EXPECT_EQ(Matmul::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = ok;
  bad.ldb = 3;
  EXPECT_EQ(Matmul::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = ok;
  bad.ldc = 2;
  EXPECT_EQ(Matmul::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = ok;
  bad.m = -1;
  EXPECT_EQ(Matmul::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = ok;
  bad.a = reinterpret_cast<const float*>(reinterpret_cast<const char*>(p) + 2);
  EXPECT_EQ(Matmul::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = ok;
  bad.b = nullptr;
  EXPECT_EQ(Matmul::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  MatmulArgs wide = ok;
  wide.n = 9;
  wide.ldb = wide.ldc = 9;
  EXPECT_EQ(MatmulWithChoice::can_implement(wide, {MatmulPath::kSmallN, 1}).code(), absl::StatusCode::kInvalidArgument);
  // Split-k without its workspace.
  const MatmulArgs deep{64, 64, 8192, 1.0f, p, 8192, p, 64, 0.0f, p, 64};
  EXPECT_GT(MatmulWithChoice::get_workspace_size(deep, {MatmulPath::kSimt64x64, 4}), 0u);
  EXPECT_EQ(MatmulWithChoice::run(deep, {MatmulPath::kSimt64x64, 4}, nullptr, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace histd::cuda
