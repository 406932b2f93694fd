// Query service through real gRPC: regions, rebinning, transposition, chunked streaming
// that reassembles exactly, projections, CDFs and quantiles, and bad requests.
#include <cmath>
#include <string>
#include <vector>

#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

class QueryServiceTest : public ServiceTest {
 protected:
  // Creates `name` and fills it with `n` random samples; returns the reference.
  ReferenceHistogram Fill(const std::string& name, uint32_t rows, uint32_t cols, uint32_t cap,
                          size_t n, uint64_t seed) {
    EXPECT_TRUE(Create(name, rows, cols, cap).ok());
    ReferenceHistogram ref(rows, cols, cap);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<uint64_t> d(0, uint64_t{rows} * cols - 1);
    std::vector<v1::IngestRequest> msgs;
    for (size_t done = 0; done < n;) {
      const size_t m = std::min<size_t>(n - done, 50000);
      std::vector<uint32_t> idx(m);
      for (auto& v : idx) v = static_cast<uint32_t>(d(rng));
      ref.Add(idx);
      msgs.push_back(IndexMessage(msgs.size() + 1, name, idx));
      done += m;
    }
    StreamOutcome out = IngestAll(msgs);
    EXPECT_TRUE(out.status.ok());
    for (const auto& a : out.acks) EXPECT_EQ(a.code(), 0) << a.message();
    return ref;
  }
};
HISTD_INSTANTIATE_ENGINES(QueryServiceTest);

// The expected ReadBins values: block sums of the region, transposed if asked (a plain loop).
std::vector<uint64_t> ExpectedRead(const ReferenceHistogram& ref, uint32_t r0, uint32_t r1,
                                   uint32_t c0, uint32_t c1, uint32_t rf, uint32_t cf,
                                   bool transpose, uint64_t* out_rows, uint64_t* out_cols) {
  const uint64_t br = (r1 - r0 + rf - 1) / rf, bc = (c1 - c0 + cf - 1) / cf;
  std::vector<uint64_t> blocks(br * bc, 0);
  for (uint32_t r = r0; r < r1; ++r) {
    for (uint32_t c = c0; c < c1; ++c) blocks[((r - r0) / rf) * bc + (c - c0) / cf] += ref.Bin(r, c);
  }
  *out_rows = transpose ? bc : br;
  *out_cols = transpose ? br : bc;
  if (!transpose) return blocks;
  std::vector<uint64_t> t(br * bc);
  for (uint64_t i = 0; i < br; ++i) {
    for (uint64_t j = 0; j < bc; ++j) t[j * br + i] = blocks[i * bc + j];
  }
  return t;
}

std::vector<uint64_t> Decode(const QueryOutcome& q) {
  std::vector<uint64_t> v;
  if (q.dtype == v1::DTYPE_U8) {
    for (char c : q.data) v.push_back(static_cast<uint8_t>(c));
  } else if (q.dtype == v1::DTYPE_U32) {
    for (size_t i = 0; i + 4 <= q.data.size(); i += 4) {
      uint32_t x;
      std::memcpy(&x, &q.data[i], 4);
      v.push_back(x);
    }
  }
  return v;
}

TEST_P(QueryServiceTest, RegionsRebinningAndTransposeMatchReference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const uint32_t rows = 29, cols = 41;
  const ReferenceHistogram ref = Fill("q", rows, cols, 6, 20000, seed);
  struct Region { uint32_t r0, r1, c0, c1; };
  const std::vector<Region> regions = {
      {0, 0, 0, 0},  // all zero: the whole histogram
      {3, 10, 5, 17}, {28, 29, 0, 41}, {0, 29, 40, 41}, {0, 1, 0, 1}, {11, 29, 13, 41}};
  const std::vector<std::pair<uint32_t, uint32_t>> factors = {
      {0, 0}, {1, 1}, {3, 4}, {29, 41}, {5, 1}, {1, 7}, {100, 100}};
  for (const Region& g : regions) {
    for (auto [rf, cf] : factors) {
      for (bool transpose : {false, true}) {
        v1::QueryRequest req;
        req.set_name("q");
        req.mutable_region()->set_row_begin(g.r0);
        req.mutable_region()->set_row_end(g.r1);
        req.mutable_region()->set_col_begin(g.c0);
        req.mutable_region()->set_col_end(g.c1);
        req.set_row_factor(rf);
        req.set_col_factor(cf);
        req.set_transpose(transpose);
        SCOPED_TRACE(::testing::Message() << "region " << g.r0 << ".." << g.r1 << " x " << g.c0
                                          << ".." << g.c1 << " factors " << rf << "," << cf
                                          << (transpose ? " transposed" : ""));
        const bool whole = g.r1 == 0;
        const uint32_t r1 = whole ? rows : g.r1, c1 = whole ? cols : g.c1;
        const uint32_t frf = rf == 0 ? 1 : rf, fcf = cf == 0 ? 1 : cf;
        uint64_t er, ec;
        const std::vector<uint64_t> expected =
            ExpectedRead(ref, g.r0, r1, g.c0, c1, frf, fcf, transpose, &er, &ec);
        const QueryOutcome q = Query(req);
        ASSERT_TRUE(q.status.ok()) << q.status.error_message();
        EXPECT_EQ(q.dtype, frf == 1 && fcf == 1 ? v1::DTYPE_U8 : v1::DTYPE_U32);
        EXPECT_EQ(q.rows, er);
        EXPECT_EQ(q.cols, ec);
        EXPECT_EQ(q.cap, 6u);
        EXPECT_EQ(q.total_bytes, q.data.size());
        EXPECT_EQ(Decode(q), expected);
      }
    }
  }
}

TEST_P(QueryServiceTest, ChunkedQueriesReassembleExactly) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const uint32_t rows = 600, cols = 700;
  const ReferenceHistogram ref = Fill("big", rows, cols, 255, 300000, seed);
  struct Case { uint32_t chunk, rf, cf; bool transpose; };
  for (const Case& c : {Case{10000, 1, 1, false}, Case{999, 2, 3, false}, Case{4096, 1, 1, true},
                        Case{1, 200, 350, true}, Case{0, 1, 1, false}}) {
    SCOPED_TRACE(::testing::Message() << "chunk " << c.chunk << " factors " << c.rf << "," << c.cf
                                      << (c.transpose ? " transposed" : ""));
    v1::QueryRequest req;
    req.set_name("big");
    req.set_max_chunk_bytes(c.chunk);
    req.set_row_factor(c.rf);
    req.set_col_factor(c.cf);
    req.set_transpose(c.transpose);
    const QueryOutcome q = Query(req);
    ASSERT_TRUE(q.status.ok()) << q.status.error_message();
    uint64_t er, ec;
    const auto expected = ExpectedRead(ref, 0, rows, 0, cols, c.rf, c.cf, c.transpose, &er, &ec);
    EXPECT_EQ(Decode(q), expected);
    EXPECT_EQ(q.total_bytes, q.data.size());
    EXPECT_TRUE(q.offsets_contiguous);
    EXPECT_TRUE(q.header_only_in_first);
    const uint64_t limit = c.chunk == 0 ? (1u << 20) : c.chunk;
    EXPECT_LE(q.largest_chunk, limit);
    EXPECT_EQ(q.chunks, (q.total_bytes + limit - 1) / limit);
  }
}

TEST_P(QueryServiceTest, LongRowLargerThanABandStreamsExactly) {
  // One row of 3,000,000 bins: more than a band, so the row is read in segments.
  const uint32_t cols = 3000000;
  ASSERT_TRUE(Create("row", 1, cols, 255).ok());
  ReferenceHistogram ref(1, cols, 255);
  std::vector<uint32_t> idx;
  for (uint32_t i = 0; i < cols; i += 9973) idx.push_back(i);
  idx.push_back(cols - 1);
  idx.push_back(1048575);
  idx.push_back(1048576);
  ref.Add(idx);
  ASSERT_EQ(IngestOne(IndexMessage(1, "row", idx)).code(), 0);
  for (bool transpose : {false, true}) {
    v1::QueryRequest req;
    req.set_name("row");
    req.set_transpose(transpose);
    const QueryOutcome q = Query(req);
    ASSERT_TRUE(q.status.ok()) << q.status.error_message();
    EXPECT_EQ(q.rows, transpose ? cols : 1u);
    EXPECT_EQ(q.cols, transpose ? 1u : cols);
    EXPECT_EQ(q.chunks, 3u);  // 1 MiB default chunks
    EXPECT_TRUE(q.offsets_contiguous);
    EXPECT_TRUE(q.data == ref.Bytes());
  }
}

TEST_P(QueryServiceTest, BadQueriesGetExactCodes) {
  ASSERT_TRUE(Create("q", 10, 20).ok());
  auto query = [&](const std::string& name, uint32_t r0, uint32_t r1, uint32_t c0, uint32_t c1) {
    v1::QueryRequest req;
    req.set_name(name);
    req.mutable_region()->set_row_begin(r0);
    req.mutable_region()->set_row_end(r1);
    req.mutable_region()->set_col_begin(c0);
    req.mutable_region()->set_col_end(c1);
    return Query(req).status.error_code();
  };
  EXPECT_EQ(query("nope", 0, 0, 0, 0), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(query("", 0, 0, 0, 0), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(query("q", 0, 11, 0, 20), grpc::StatusCode::INVALID_ARGUMENT);  // rows outside
  EXPECT_EQ(query("q", 0, 10, 0, 21), grpc::StatusCode::INVALID_ARGUMENT);  // cols outside
  EXPECT_EQ(query("q", 0, 10, 7, 3), grpc::StatusCode::INVALID_ARGUMENT);   // reversed cols
  EXPECT_EQ(query("q", 10, 11, 0, 20), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(query("q", 11, 11, 0, 20), grpc::StatusCode::INVALID_ARGUMENT);  // empty, outside
  EXPECT_EQ(query("q", 0, 10, 0, 20), grpc::StatusCode::OK);
}

// Regression (issue 31, 7): an empty region (rows c:c or cols c:c, not all four zero) is an
// empty array with its shape, as numpy's a[5:5] is, not an error.
TEST_P(QueryServiceTest, EmptyRegionsGiveEmptyArrays) {
  ASSERT_TRUE(Create("q", 10, 20).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "q", {0, 5, 199})).code(), 0);
  struct Case {
    uint32_t r0, r1, c0, c1, row_factor;
    bool transpose;
    uint64_t rows, cols;
    v1::DType dtype;
  };
  for (const Case& c : {Case{5, 5, 0, 20, 1, false, 0, 20, v1::DTYPE_U8},
                        Case{0, 10, 7, 7, 1, false, 10, 0, v1::DTYPE_U8},
                        Case{0, 0, 0, 1, 1, false, 0, 1, v1::DTYPE_U8},
                        Case{10, 10, 20, 20, 1, false, 0, 0, v1::DTYPE_U8},
                        Case{3, 3, 0, 20, 2, true, 20, 0, v1::DTYPE_U32}}) {
    SCOPED_TRACE(::testing::Message() << "rows " << c.r0 << ":" << c.r1 << " cols " << c.c0
                                      << ":" << c.c1);
    v1::QueryRequest req;
    req.set_name("q");
    req.mutable_region()->set_row_begin(c.r0);
    req.mutable_region()->set_row_end(c.r1);
    req.mutable_region()->set_col_begin(c.c0);
    req.mutable_region()->set_col_end(c.c1);
    req.set_row_factor(c.row_factor);
    req.set_transpose(c.transpose);
    QueryOutcome out = Query(req);
    ASSERT_TRUE(out.status.ok()) << out.status.error_message();
    EXPECT_EQ(out.chunks, 1u);  // the header alone
    EXPECT_EQ(out.rows, c.rows);
    EXPECT_EQ(out.cols, c.cols);
    EXPECT_EQ(out.dtype, c.dtype);
    EXPECT_EQ(out.total_bytes, 0u);
    EXPECT_TRUE(out.data.empty());
  }
}

TEST_P(QueryServiceTest, ProjectionsMatchReference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const uint32_t rows = 33, cols = 17;
  const ReferenceHistogram ref = Fill("p", rows, cols, 3, 5000, seed);
  for (v1::Dim dim : {v1::DIM_ROWS, v1::DIM_COLS}) {
    v1::ProjectRequest req;
    req.set_name("p");
    req.set_collapse(dim);
    v1::ProjectResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(query_->Project(&ctx, req, &resp).ok());
    std::vector<uint64_t> expected(dim == v1::DIM_ROWS ? cols : rows, 0);
    for (uint32_t r = 0; r < rows; ++r) {
      for (uint32_t c = 0; c < cols; ++c) expected[dim == v1::DIM_ROWS ? c : r] += ref.Bin(r, c);
    }
    EXPECT_EQ(std::vector<uint64_t>(resp.counts().begin(), resp.counts().end()), expected)
        << v1::Dim_Name(dim);
  }
  auto code = [&](const std::string& name, v1::Dim dim) {
    v1::ProjectRequest req;
    req.set_name(name);
    req.set_collapse(dim);
    v1::ProjectResponse resp;
    grpc::ClientContext ctx;
    return query_->Project(&ctx, req, &resp).error_code();
  };
  EXPECT_EQ(code("p", v1::DIM_UNSPECIFIED), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code("p", static_cast<v1::Dim>(7)), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code("none", v1::DIM_ROWS), grpc::StatusCode::NOT_FOUND);
}

TEST_P(QueryServiceTest, CdfMatchesReference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const uint32_t rows = 12, cols = 45;
  const ReferenceHistogram ref = Fill("c", rows, cols, 255, 3000, seed);
  for (v1::Dim dim : {v1::DIM_ROWS, v1::DIM_COLS}) {
    v1::CdfRequest req;
    req.set_name("c");
    req.set_collapse(dim);
    v1::CdfResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(query_->Cdf(&ctx, req, &resp).ok());
    const uint32_t n = dim == v1::DIM_ROWS ? cols : rows;
    std::vector<uint64_t> proj(n, 0);
    for (uint32_t r = 0; r < rows; ++r) {
      for (uint32_t c = 0; c < cols; ++c) proj[dim == v1::DIM_ROWS ? c : r] += ref.Bin(r, c);
    }
    ASSERT_EQ(resp.cumulative_size(), int(n));
    ASSERT_EQ(resp.fraction_size(), int(n));
    uint64_t running = 0;
    for (uint32_t i = 0; i < n; ++i) {
      running += proj[i];
      EXPECT_EQ(resp.cumulative(i), running) << i;
    }
    EXPECT_EQ(resp.total(), running);
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT_DOUBLE_EQ(resp.fraction(i), double(resp.cumulative(i)) / double(running));
    }
  }
  // An empty histogram: zeros everywhere.
  ASSERT_TRUE(Create("empty", 3, 4).ok());
  v1::CdfRequest req;
  req.set_name("empty");
  req.set_collapse(v1::DIM_COLS);
  v1::CdfResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(query_->Cdf(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.total(), 0u);
  ASSERT_EQ(resp.fraction_size(), 3);
  for (double f : resp.fraction()) EXPECT_EQ(f, 0.0);
  grpc::ClientContext ctx2;
  req.set_collapse(v1::DIM_UNSPECIFIED);
  EXPECT_EQ(query_->Cdf(&ctx2, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// Quantile positions by a linear walk: the bin i where the CDF first reaches p * total,
// then i + (p * total - cum[i - 1]) / count[i]; p = 0 is the first non-empty bin's left edge.
double ReferenceQuantile(const std::vector<uint64_t>& counts, double p) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  const double target = p * double(total);
  double before = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double after = before + double(counts[i]);
    if (counts[i] > 0 && after >= target) return double(i) + (target - before) / double(counts[i]);
    before = after;
  }
  return double(counts.size());
}

TEST_P(QueryServiceTest, QuantilesInterpolateInsideTheBinAndUseTheAxis) {
  v1::HistogramSpec spec;
  spec.set_name("qq");
  spec.set_rows(1);
  spec.set_cols(4);
  spec.set_cap(255);
  spec.mutable_x_axis()->set_lo(10);
  spec.mutable_x_axis()->set_hi(18);
  ASSERT_TRUE(CreateSpec(spec).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "qq", {1, 1, 1, 1, 3, 3, 3, 3})).code(), 0);  // [0,4,0,4]
  v1::QuantilesRequest req;
  req.set_name("qq");
  req.set_collapse(v1::DIM_ROWS);  // one value per column: along x
  for (double p : {0.0, 0.25, 0.5, 0.75, 1.0}) req.add_probabilities(p);
  v1::QuantilesResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(query_->Quantiles(&ctx, req, &resp).ok());
  const std::vector<double> positions = {1.0, 1.5, 2.0, 3.5, 4.0};
  ASSERT_EQ(resp.bin_positions_size(), 5);
  ASSERT_EQ(resp.axis_values_size(), 5);
  for (int i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(resp.bin_positions(i), positions[i]) << i;
    EXPECT_DOUBLE_EQ(resp.axis_values(i), 10 + 2 * positions[i]) << i;
  }
  EXPECT_EQ(resp.total(), 8u);
  // Over rows there is one bin and no y axis: no axis values.
  req.set_collapse(v1::DIM_COLS);
  grpc::ClientContext ctx2;
  ASSERT_TRUE(query_->Quantiles(&ctx2, req, &resp).ok());
  EXPECT_EQ(resp.axis_values_size(), 0);
  EXPECT_DOUBLE_EQ(resp.bin_positions(2), 0.5);
}

TEST_P(QueryServiceTest, QuantilesMatchReferenceOnRandomData) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const uint32_t rows = 40, cols = 9;
  const ReferenceHistogram ref = Fill("rq", rows, cols, 4, 400, seed);
  std::vector<uint64_t> over_rows(rows, 0);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) over_rows[r] += ref.Bin(r, c);
  }
  v1::QuantilesRequest req;
  req.set_name("rq");
  req.set_collapse(v1::DIM_COLS);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 50; ++i) req.add_probabilities(u(rng));
  req.add_probabilities(0.0);
  req.add_probabilities(1.0);
  v1::QuantilesResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(query_->Quantiles(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.bin_positions_size(), req.probabilities_size());
  for (int i = 0; i < req.probabilities_size(); ++i) {
    EXPECT_NEAR(resp.bin_positions(i), ReferenceQuantile(over_rows, req.probabilities(i)), 1e-9)
        << "p = " << req.probabilities(i);
  }
}

TEST_P(QueryServiceTest, QuantileErrors) {
  ASSERT_TRUE(Create("e", 3, 3).ok());
  auto code = [&](const std::string& name, v1::Dim dim, std::vector<double> ps) {
    v1::QuantilesRequest req;
    req.set_name(name);
    req.set_collapse(dim);
    for (double p : ps) req.add_probabilities(p);
    v1::QuantilesResponse resp;
    grpc::ClientContext ctx;
    return query_->Quantiles(&ctx, req, &resp).error_code();
  };
  EXPECT_EQ(code("e", v1::DIM_ROWS, {0.5}), grpc::StatusCode::FAILED_PRECONDITION);  // empty
  ASSERT_EQ(IngestOne(IndexMessage(1, "e", {4})).code(), 0);
  EXPECT_EQ(code("e", v1::DIM_ROWS, {0.5}), grpc::StatusCode::OK);
  EXPECT_EQ(code("e", v1::DIM_ROWS, {1.5}), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code("e", v1::DIM_ROWS, {-0.1}), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code("e", v1::DIM_ROWS, {std::nan("")}), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code("e", v1::DIM_UNSPECIFIED, {0.5}), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code("x", v1::DIM_ROWS, {0.5}), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace histd::server::testing
