// Compute service through real gRPC: reduce, scan, transpose and matmul on inline arrays
// and on resident histograms, against float64 reference loops, and every bad input.
#include <cmath>
#include <string>
#include <vector>

#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

class ComputeServiceTest : public ServiceTest {};
HISTD_INSTANTIATE_ENGINES(ComputeServiceTest);

template <typename T>
v1::Array MakeArray(v1::DType dtype, uint64_t rows, uint64_t cols, const std::vector<T>& v) {
  v1::Array a;
  a.set_dtype(dtype);
  a.set_rows(rows);
  a.set_cols(cols);
  a.set_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
  return a;
}

template <typename T>
std::vector<T> Values(const v1::Array& a) {
  std::vector<T> v(a.data().size() / sizeof(T));
  std::memcpy(v.data(), a.data().data(), v.size() * sizeof(T));
  return v;
}

v1::ArrayInput Inline(const v1::Array& a) {
  v1::ArrayInput in;
  *in.mutable_inline_() = a;
  return in;
}

v1::ArrayInput Named(const std::string& name) {
  v1::ArrayInput in;
  in.set_histogram(name);
  return in;
}

TEST_P(ComputeServiceTest, ReduceInlineMatchesReference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const uint64_t rows = 13, cols = 29;
  std::vector<float> f(rows * cols);
  std::vector<int32_t> i32(rows * cols);
  std::uniform_real_distribution<float> uf(-10, 10);
  std::uniform_int_distribution<int32_t> ui(-1000000, 1000000);
  for (auto& x : f) x = uf(rng);
  for (auto& x : i32) x = ui(rng);
  for (v1::Dim dim : {v1::DIM_UNSPECIFIED, v1::DIM_ROWS, v1::DIM_COLS}) {
    const uint64_t out_n = dim == v1::DIM_UNSPECIFIED ? 1 : (dim == v1::DIM_ROWS ? cols : rows);
    auto out_index = [&](uint64_t r, uint64_t c) {
      return dim == v1::DIM_UNSPECIFIED ? 0 : (dim == v1::DIM_ROWS ? c : r);
    };
    for (v1::ReduceOp op : {v1::REDUCE_OP_SUM, v1::REDUCE_OP_MIN, v1::REDUCE_OP_MAX}) {
      SCOPED_TRACE(::testing::Message() << v1::Dim_Name(dim) << " " << v1::ReduceOp_Name(op));
      // float32 input, float64 reference.
      std::vector<double> fr(out_n, op == v1::REDUCE_OP_SUM ? 0 : (op == v1::REDUCE_OP_MIN ? 1e300 : -1e300));
      std::vector<int64_t> ir(out_n, op == v1::REDUCE_OP_SUM ? 0 : (op == v1::REDUCE_OP_MIN ? INT64_MAX : INT64_MIN));
      for (uint64_t r = 0; r < rows; ++r) {
        for (uint64_t c = 0; c < cols; ++c) {
          const uint64_t o = out_index(r, c);
          const double fv = f[r * cols + c];
          const int64_t iv = i32[r * cols + c];
          if (op == v1::REDUCE_OP_SUM) { fr[o] += fv; ir[o] += iv; }
          if (op == v1::REDUCE_OP_MIN) { fr[o] = std::min(fr[o], fv); ir[o] = std::min(ir[o], iv); }
          if (op == v1::REDUCE_OP_MAX) { fr[o] = std::max(fr[o], fv); ir[o] = std::max(ir[o], iv); }
        }
      }
      v1::ReduceRequest req;
      req.set_op(op);
      req.set_collapse(dim);
      *req.mutable_input() = Inline(MakeArray(v1::DTYPE_F32, rows, cols, f));
      v1::ReduceResponse resp;
      grpc::ClientContext ctx;
      ASSERT_TRUE(compute_->Reduce(&ctx, req, &resp).ok());
      EXPECT_EQ(resp.result().dtype(), v1::DTYPE_F32);
      EXPECT_EQ(resp.result().rows() * resp.result().cols(), out_n);
      const auto got = Values<float>(resp.result());
      ASSERT_EQ(got.size(), out_n);
      for (uint64_t k = 0; k < out_n; ++k) EXPECT_NEAR(got[k], fr[k], 1e-3) << k;

      *req.mutable_input() = Inline(MakeArray(v1::DTYPE_I32, rows, cols, i32));
      grpc::ClientContext ctx2;
      ASSERT_TRUE(compute_->Reduce(&ctx2, req, &resp).ok());
      if (op == v1::REDUCE_OP_SUM) {
        EXPECT_EQ(resp.result().dtype(), v1::DTYPE_I64);
        EXPECT_EQ(Values<int64_t>(resp.result()), ir);
      } else {
        EXPECT_EQ(resp.result().dtype(), v1::DTYPE_I32);
        const auto got32 = Values<int32_t>(resp.result());
        EXPECT_EQ(std::vector<int64_t>(got32.begin(), got32.end()), ir);
      }
    }
  }
  // Shape of the results: DIM_ROWS is 1 x cols, DIM_COLS is rows x 1.
  v1::ReduceRequest req;
  req.set_op(v1::REDUCE_OP_SUM);
  req.set_collapse(v1::DIM_COLS);
  *req.mutable_input() = Inline(MakeArray(v1::DTYPE_F32, rows, cols, f));
  v1::ReduceResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(compute_->Reduce(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.result().rows(), rows);
  EXPECT_EQ(resp.result().cols(), 1u);
}

TEST_P(ComputeServiceTest, ReduceAndScanOnAHistogram) {
  ASSERT_TRUE(Create("h", 3, 4, 2).ok());
  // Bins: [2 0 0 1 / 0 0 0 0 / 0 0 1 2]  (bin 0 hit 3 times: saturates at 2).
  ASSERT_EQ(IngestOne(IndexMessage(1, "h", {0, 0, 0, 3, 10, 11, 11, 11})).code(), 0);
  v1::ReduceRequest req;
  req.set_op(v1::REDUCE_OP_SUM);
  req.set_collapse(v1::DIM_ROWS);
  *req.mutable_input() = Named("h");
  v1::ReduceResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(compute_->Reduce(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.result().dtype(), v1::DTYPE_U64);
  EXPECT_EQ(Values<uint64_t>(resp.result()), (std::vector<uint64_t>{2, 0, 1, 3}));

  req.set_op(v1::REDUCE_OP_MAX);
  req.set_collapse(v1::DIM_UNSPECIFIED);
  grpc::ClientContext ctx2;
  ASSERT_TRUE(compute_->Reduce(&ctx2, req, &resp).ok());
  EXPECT_EQ(resp.result().dtype(), v1::DTYPE_U8);
  EXPECT_EQ(Values<uint8_t>(resp.result()), (std::vector<uint8_t>{2}));

  v1::ScanRequest scan;
  scan.set_kind(v1::SCAN_KIND_EXCLUSIVE);
  scan.set_along(v1::DIM_COLS);
  *scan.mutable_input() = Named("h");
  v1::ScanResponse sresp;
  grpc::ClientContext ctx3;
  ASSERT_TRUE(compute_->Scan(&ctx3, scan, &sresp).ok());
  EXPECT_EQ(sresp.result().dtype(), v1::DTYPE_U64);
  EXPECT_EQ(Values<uint64_t>(sresp.result()),
            (std::vector<uint64_t>{0, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 1}));
}

TEST_P(ComputeServiceTest, ScanInlineMatchesReference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const uint64_t rows = 7, cols = 19;
  std::vector<int32_t> v(rows * cols);
  std::uniform_int_distribution<int32_t> d(-2000000000, 2000000000);  // i64 sums: no overflow
  for (auto& x : v) x = d(rng);
  for (v1::Dim along : {v1::DIM_UNSPECIFIED, v1::DIM_ROWS, v1::DIM_COLS}) {
    for (bool inclusive : {true, false}) {
      std::vector<int64_t> expected(rows * cols);
      if (along == v1::DIM_UNSPECIFIED) {
        int64_t run = 0;
        for (uint64_t k = 0; k < rows * cols; ++k) {
          if (!inclusive) expected[k] = run;
          run += v[k];
          if (inclusive) expected[k] = run;
        }
      } else if (along == v1::DIM_COLS) {  // within each row
        for (uint64_t r = 0; r < rows; ++r) {
          int64_t run = 0;
          for (uint64_t c = 0; c < cols; ++c) {
            if (!inclusive) expected[r * cols + c] = run;
            run += v[r * cols + c];
            if (inclusive) expected[r * cols + c] = run;
          }
        }
      } else {  // within each column
        for (uint64_t c = 0; c < cols; ++c) {
          int64_t run = 0;
          for (uint64_t r = 0; r < rows; ++r) {
            if (!inclusive) expected[r * cols + c] = run;
            run += v[r * cols + c];
            if (inclusive) expected[r * cols + c] = run;
          }
        }
      }
      v1::ScanRequest req;
      req.set_kind(inclusive ? v1::SCAN_KIND_INCLUSIVE : v1::SCAN_KIND_EXCLUSIVE);
      req.set_along(along);
      *req.mutable_input() = Inline(MakeArray(v1::DTYPE_I32, rows, cols, v));
      v1::ScanResponse resp;
      grpc::ClientContext ctx;
      ASSERT_TRUE(compute_->Scan(&ctx, req, &resp).ok());
      EXPECT_EQ(resp.result().dtype(), v1::DTYPE_I64);
      EXPECT_EQ(resp.result().rows(), rows);
      EXPECT_EQ(resp.result().cols(), cols);
      EXPECT_EQ(Values<int64_t>(resp.result()), expected)
          << v1::Dim_Name(along) << (inclusive ? " inclusive" : " exclusive");
    }
  }
}

TEST_P(ComputeServiceTest, TransposeInlineAndHistogram) {
  const uint64_t rows = 5, cols = 11;
  std::vector<double> v(rows * cols);
  for (uint64_t k = 0; k < v.size(); ++k) v[k] = k * 1.5 - 7;
  v1::TransposeRequest req;
  *req.mutable_input() = Inline(MakeArray(v1::DTYPE_F64, rows, cols, v));
  v1::TransposeResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(compute_->Transpose(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.result().rows(), cols);
  EXPECT_EQ(resp.result().cols(), rows);
  const auto t = Values<double>(resp.result());
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) EXPECT_EQ(t[c * rows + r], v[r * cols + c]);
  }
  ASSERT_TRUE(Create("t", 2, 3).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "t", {1, 1, 5})).code(), 0);
  *req.mutable_input() = Named("t");
  grpc::ClientContext ctx2;
  ASSERT_TRUE(compute_->Transpose(&ctx2, req, &resp).ok());
  EXPECT_EQ(resp.result().dtype(), v1::DTYPE_U8);
  EXPECT_EQ(resp.result().rows(), 3u);
  EXPECT_EQ(Values<uint8_t>(resp.result()), (std::vector<uint8_t>{0, 0, 2, 0, 0, 1}));
}

TEST_P(ComputeServiceTest, MatmulMatchesFloat64Reference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  struct Dims { uint64_t m, k, n; };
  for (Dims s : {Dims{1, 1, 1}, Dims{17, 33, 9}, Dims{1, 70, 3}, Dims{40, 1, 40}}) {
    std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
    for (auto& x : a) x = d(rng);
    for (auto& x : b) x = d(rng);
    for (auto& x : c) x = d(rng);
    for (bool with_c : {false, true}) {
      const float alpha = with_c ? 0.5f : 1.0f, beta = with_c ? -2.0f : 0.0f;
      v1::MatmulRequest req;
      *req.mutable_a() = Inline(MakeArray(v1::DTYPE_F32, s.m, s.k, a));
      *req.mutable_b() = Inline(MakeArray(v1::DTYPE_F32, s.k, s.n, b));
      if (with_c) {
        *req.mutable_c() = MakeArray(v1::DTYPE_F32, s.m, s.n, c);
        req.set_alpha(alpha);
        req.set_beta(beta);
        req.set_use_alpha_beta(true);
      }
      v1::MatmulResponse resp;
      grpc::ClientContext ctx;
      ASSERT_TRUE(compute_->Matmul(&ctx, req, &resp).ok());
      ASSERT_EQ(resp.result().dtype(), v1::DTYPE_F32);
      ASSERT_EQ(resp.result().rows(), s.m);
      ASSERT_EQ(resp.result().cols(), s.n);
      const auto got = Values<float>(resp.result());
      for (uint64_t i = 0; i < s.m; ++i) {
        for (uint64_t j = 0; j < s.n; ++j) {
          double acc = 0;
          for (uint64_t p = 0; p < s.k; ++p) acc += double(a[i * s.k + p]) * b[p * s.n + j];
          const double want = alpha * acc + (with_c ? beta * double(c[i * s.n + j]) : 0.0);
          EXPECT_NEAR(got[i * s.n + j], want, 1e-4 * (1 + s.k)) << i << "," << j;
        }
      }
    }
  }
}

TEST_P(ComputeServiceTest, MatmulWithAHistogramOperand) {
  ASSERT_TRUE(Create("m", 2, 3).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "m", {0, 0, 4, 5, 5, 5})).code(), 0);  // [2 0 0 / 0 1 3]
  v1::MatmulRequest req;
  *req.mutable_a() = Named("m");
  *req.mutable_b() = Inline(MakeArray(v1::DTYPE_F32, 3, 1, std::vector<float>{1, 10, 100}));
  v1::MatmulResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(compute_->Matmul(&ctx, req, &resp).ok());
  EXPECT_EQ(Values<float>(resp.result()), (std::vector<float>{2, 310}));
}

// Regression (issue 31, 8): matmul took a resident u8 histogram but refused inline u8, i32
// and other non-f32 arrays; they are converted to float32, rounding to nearest (integers
// beyond 2^24 and f64 values round, as documented in compute.proto).
TEST_P(ComputeServiceTest, MatmulConvertsInlineArraysToFloat32) {
  const std::vector<float> ones{1, 1, 1};
  const v1::Array b = MakeArray(v1::DTYPE_F32, 3, 1, ones);
  auto matmul = [&](const v1::Array& a, const v1::Array& bb) {
    v1::MatmulRequest req;
    *req.mutable_a() = Inline(a);
    *req.mutable_b() = Inline(bb);
    v1::MatmulResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = compute_->Matmul(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.result().dtype(), v1::DTYPE_F32);
    return Values<float>(resp.result());
  };
  // Row sums of 2 x 3 arrays: [1 2 3 / 4 5 -6] in each integer type, exactly.
  EXPECT_EQ(matmul(MakeArray(v1::DTYPE_I32, 2, 3, std::vector<int32_t>{1, 2, 3, 4, 5, -6}), b),
            (std::vector<float>{6, 3}));
  EXPECT_EQ(matmul(MakeArray(v1::DTYPE_I64, 2, 3, std::vector<int64_t>{1, 2, 3, 4, 5, -6}), b),
            (std::vector<float>{6, 3}));
  EXPECT_EQ(matmul(MakeArray(v1::DTYPE_U8, 2, 3, std::vector<uint8_t>{1, 2, 3, 4, 5, 255}), b),
            (std::vector<float>{6, 264}));
  EXPECT_EQ(matmul(MakeArray(v1::DTYPE_U32, 2, 3, std::vector<uint32_t>{1, 2, 3, 4, 5, 6}), b),
            (std::vector<float>{6, 15}));
  EXPECT_EQ(matmul(MakeArray(v1::DTYPE_U64, 2, 3, std::vector<uint64_t>{1, 2, 3, 4, 5, 6}), b),
            (std::vector<float>{6, 15}));
  EXPECT_EQ(matmul(MakeArray(v1::DTYPE_F64, 2, 3, std::vector<double>{0.5, 1.5, 2, 1e300, 0, 0}), b),
            (std::vector<float>{4, std::numeric_limits<float>::infinity()}));
  // Above 2^24 integers round to the nearest float32: 16777217 -> 16777216.
  EXPECT_EQ(matmul(MakeArray(v1::DTYPE_I32, 1, 1, std::vector<int32_t>{16777217}),
                   MakeArray(v1::DTYPE_F32, 1, 1, std::vector<float>{1})),
            (std::vector<float>{16777216.0f}));
  // Both operands inline integers; b as the converted one.
  EXPECT_EQ(matmul(MakeArray(v1::DTYPE_F32, 1, 3, ones),
                   MakeArray(v1::DTYPE_I64, 3, 1, std::vector<int64_t>{-(int64_t{1} << 40), 7, 9})),
            (std::vector<float>{-1099511627776.0f}));  // -2^40: 7 + 9 is below float32's step there
}

TEST_P(ComputeServiceTest, BadInputsGetExactCodes) {
  ASSERT_TRUE(Create("h", 2, 2).ok());
  const std::vector<float> six(6, 1.0f);
  auto reduce = [&](v1::ArrayInput input, v1::ReduceOp op = v1::REDUCE_OP_SUM,
                    v1::Dim dim = v1::DIM_UNSPECIFIED) {
    v1::ReduceRequest req;
    *req.mutable_input() = std::move(input);
    req.set_op(op);
    req.set_collapse(dim);
    v1::ReduceResponse resp;
    grpc::ClientContext ctx;
    return compute_->Reduce(&ctx, req, &resp).error_code();
  };
  v1::Array ok = MakeArray(v1::DTYPE_F32, 2, 3, six);
  EXPECT_EQ(reduce(Inline(ok)), grpc::StatusCode::OK);
  v1::Array a = ok;
  a.set_dtype(v1::DTYPE_UNSPECIFIED);
  EXPECT_EQ(reduce(Inline(a)), grpc::StatusCode::INVALID_ARGUMENT);
  a = ok;
  a.set_dtype(static_cast<v1::DType>(99));
  EXPECT_EQ(reduce(Inline(a)), grpc::StatusCode::INVALID_ARGUMENT);
  a = ok;
  a.set_cols(4);  // 2 x 4 f32 needs 32 bytes, data has 24
  EXPECT_EQ(reduce(Inline(a)), grpc::StatusCode::INVALID_ARGUMENT);
  a = ok;
  a.set_rows(uint64_t{1} << 40);  // rows * cols * 4 overflows 64 bits
  a.set_cols(uint64_t{1} << 40);
  EXPECT_EQ(reduce(Inline(a)), grpc::StatusCode::INVALID_ARGUMENT);
  a = ok;
  a.set_rows(uint64_t{1} << 62);  // rows * cols fits, times 4 does not
  a.set_cols(1);
  EXPECT_EQ(reduce(Inline(a)), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(reduce(v1::ArrayInput()), grpc::StatusCode::INVALID_ARGUMENT);  // no source
  EXPECT_EQ(reduce(Named("missing")), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(reduce(Named("bad name!")), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(reduce(Inline(ok), v1::REDUCE_OP_UNSPECIFIED), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(reduce(Inline(ok), v1::REDUCE_OP_SUM, static_cast<v1::Dim>(5)),
            grpc::StatusCode::INVALID_ARGUMENT);
  // MIN over an empty extent.
  EXPECT_EQ(reduce(Inline(MakeArray(v1::DTYPE_F32, 0, 3, std::vector<float>{})), v1::REDUCE_OP_MIN),
            grpc::StatusCode::INVALID_ARGUMENT);

  v1::ScanRequest scan;
  *scan.mutable_input() = Inline(ok);
  v1::ScanResponse sresp;
  grpc::ClientContext sctx;
  EXPECT_EQ(compute_->Scan(&sctx, scan, &sresp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  auto matmul = [&](v1::ArrayInput x, v1::ArrayInput y, const v1::Array* c = nullptr,
                    float beta = 0) {
    v1::MatmulRequest req;
    *req.mutable_a() = std::move(x);
    *req.mutable_b() = std::move(y);
    if (c != nullptr) *req.mutable_c() = *c;
    if (beta != 0) {
      req.set_beta(beta);
      req.set_alpha(1);
      req.set_use_alpha_beta(true);
    }
    v1::MatmulResponse resp;
    grpc::ClientContext ctx;
    return compute_->Matmul(&ctx, req, &resp).error_code();
  };
  const v1::Array a23 = MakeArray(v1::DTYPE_F32, 2, 3, six);
  const v1::Array b32 = MakeArray(v1::DTYPE_F32, 3, 2, six);
  EXPECT_EQ(matmul(Inline(a23), Inline(b32)), grpc::StatusCode::OK);
  EXPECT_EQ(matmul(Inline(a23), Inline(a23)), grpc::StatusCode::INVALID_ARGUMENT);  // k mismatch
  v1::Array lying = b32;
  lying.set_rows(4);  // dims disagree with the data length
  EXPECT_EQ(matmul(Inline(a23), Inline(lying)), grpc::StatusCode::INVALID_ARGUMENT);
  const v1::Array c33 = MakeArray(v1::DTYPE_F32, 3, 3, std::vector<float>(9, 0));
  EXPECT_EQ(matmul(Inline(a23), Inline(b32), &c33), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(matmul(Inline(a23), Inline(b32), nullptr, 2.0f), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(matmul(Named("h"), Inline(b32)), grpc::StatusCode::INVALID_ARGUMENT);  // 2x2 @ 3x2
  EXPECT_EQ(matmul(Named("nope"), Inline(b32)), grpc::StatusCode::NOT_FOUND);
}

TEST_P(ComputeServiceTest, RequestsOverTheMessageLimitAreResourceExhausted) {
  Options o = DefaultOptions();
  o.limits.max_message_bytes = 64 << 10;
  StartServer(o);
  v1::ReduceRequest req;
  req.set_op(v1::REDUCE_OP_SUM);
  *req.mutable_input() = Inline(MakeArray(v1::DTYPE_F32, 1, 20000, std::vector<float>(20000, 1)));
  v1::ReduceResponse resp;
  grpc::ClientContext ctx;
  EXPECT_EQ(compute_->Reduce(&ctx, req, &resp).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // A result over the limit: transposing a 128 x 128 histogram is fine, scanning it to u64
  // (128 KiB) is not.
  ASSERT_TRUE(Create("h", 128, 128).ok());
  v1::ScanRequest scan;
  scan.set_kind(v1::SCAN_KIND_INCLUSIVE);
  *scan.mutable_input() = Named("h");
  v1::ScanResponse sresp;
  grpc::ClientContext sctx;
  EXPECT_EQ(compute_->Scan(&sctx, scan, &sresp).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  v1::TransposeRequest t;
  *t.mutable_input() = Named("h");
  v1::TransposeResponse tresp;
  grpc::ClientContext tctx;
  EXPECT_TRUE(compute_->Transpose(&tctx, t, &tresp).ok());
}

}  // namespace
}  // namespace histd::server::testing
