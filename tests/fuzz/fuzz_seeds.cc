// histd_fuzz_seeds DIR: writes the seed corpus of every fuzz target to DIR/<what>/ (the
// checked-in tests/fuzz/corpus/; rerun it when an input format changes). Seeds are small,
// valid inputs and a few near-valid ones (one field off), named by what they hold. The
// corpus also keeps, as regress-*, inputs that once failed a target (never rewritten here).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "client/io/npy.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "histd_fuzz.pb.h"
#include "engine/engine_factory.h"
#include "server/core/histogram_store.h"
#include "server/core/snapshot.h"

namespace histd::fuzz {
namespace {

std::string dir;

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  const std::string sub = dir + "/" + target;
  mkdir(sub.c_str(), 0755);
  std::ofstream(sub + "/" + name, std::ios::binary) << bytes;
}

std::string U32s(const std::vector<uint32_t>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}
template <typename T>
std::string Packed(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

v1::CreateHistogramRequest Create(const std::string& name, uint32_t rows, uint32_t cols, uint32_t cap,
                                  bool axes = false) {
  v1::CreateHistogramRequest r;
  r.mutable_spec()->set_name(name);
  r.mutable_spec()->set_rows(rows);
  r.mutable_spec()->set_cols(cols);
  r.mutable_spec()->set_cap(cap);
  if (axes) {
    r.mutable_spec()->mutable_x_axis()->set_lo(0);
    r.mutable_spec()->mutable_x_axis()->set_hi(1);
    r.mutable_spec()->mutable_y_axis()->set_lo(-1);
    r.mutable_spec()->mutable_y_axis()->set_hi(1);
  }
  return r;
}

v1::IngestRequest Ingest(uint64_t sequence, const std::string& name, v1::SampleType type, std::string samples) {
  v1::IngestRequest r;
  r.set_sequence(sequence);
  r.set_histogram(name);
  r.set_type(type);
  r.set_samples(std::move(samples));
  return r;
}

v1::Array Array(v1::DType dtype, uint64_t rows, uint64_t cols, std::string data) {
  v1::Array a;
  a.set_dtype(dtype);
  a.set_rows(rows);
  a.set_cols(cols);
  a.set_data(std::move(data));
  return a;
}

void HistogramsSeeds() {
  HistogramsProgram p;
  *p.add_calls()->mutable_create() = Create("a", 4, 8, 3);
  *p.add_calls()->mutable_create() = Create("b", 4, 8, 3);
  *p.add_calls()->mutable_ingest() = Ingest(1, "a", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({0, 1, 1, 31, 31, 31, 31}));
  p.add_calls()->mutable_info()->set_name("a");
  p.add_calls()->mutable_merge()->set_source("a");
  p.mutable_calls(p.calls_size() - 1)->mutable_merge()->set_target("b");
  p.add_calls()->mutable_reset()->set_name("a");
  p.add_calls()->mutable_list();
  p.add_calls()->mutable_stats();
  p.add_calls()->mutable_snapshot();
  p.add_calls()->mutable_delete_()->set_name("b");
  Write("histograms", "lifecycle", p.SerializeAsString());

  p.Clear();
  *p.add_calls()->mutable_create() = Create("xy", 16, 16, 255, true);
  *p.add_calls()->mutable_ingest() =
      Ingest(7, "xy", v1::SAMPLE_TYPE_XY_F32, Packed<float>({0.5f, 0.0f, -1.0f, 2.0f, 1.0f, 1.0f}));
  p.add_calls()->mutable_info()->set_name("xy");
  Write("histograms", "axes", p.SerializeAsString());

  p.Clear();
  *p.add_calls()->mutable_create() = Create("a", 0, 8, 3);      // near-valid: no rows
  *p.add_calls()->mutable_create() = Create("b", 256, 257, 0);  // over the bin limit, cap 0
  p.add_calls()->mutable_delete_()->set_name("missing");
  p.add_calls()->mutable_merge()->set_source("a");
  Write("histograms", "invalid", p.SerializeAsString());
}

void QuerySeeds() {
  QueryProgram p;
  *p.add_calls()->mutable_create() = Create("h", 6, 10, 255, true);
  *p.add_calls()->mutable_ingest() = Ingest(1, "h", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({0, 5, 9, 10, 33, 59, 59}));
  p.add_calls()->mutable_query()->set_name("h");
  v1::QueryRequest* q = p.add_calls()->mutable_query();
  q->set_name("h");
  q->mutable_region()->set_row_begin(1);
  q->mutable_region()->set_row_end(5);
  q->mutable_region()->set_col_begin(2);
  q->mutable_region()->set_col_end(9);
  q->set_row_factor(2);
  q->set_col_factor(3);
  q->set_transpose(true);
  q->set_max_chunk_bytes(3);
  p.add_calls()->mutable_project()->set_name("h");
  p.mutable_calls(p.calls_size() - 1)->mutable_project()->set_collapse(v1::DIM_ROWS);
  p.add_calls()->mutable_cdf()->set_name("h");
  p.mutable_calls(p.calls_size() - 1)->mutable_cdf()->set_collapse(v1::DIM_COLS);
  v1::QuantilesRequest* quantiles = p.add_calls()->mutable_quantiles();
  quantiles->set_name("h");
  quantiles->set_collapse(v1::DIM_ROWS);
  quantiles->add_probabilities(0.5);
  quantiles->add_probabilities(0.99);
  v1::RenderRequest* render = p.add_calls()->mutable_render();
  render->set_name("h");
  render->set_width(5);
  render->set_height(3);
  render->set_pool(v1::POOL_MAX);
  render->set_bare(true);
  p.add_calls()->mutable_render()->set_name("h");
  Write("query", "all-calls", p.SerializeAsString());

  p.Clear();
  *p.add_calls()->mutable_create() = Create("h", 1, 1, 1);
  q = p.add_calls()->mutable_query();
  q->set_name("h");
  q->mutable_region()->set_row_end(2);  // near-valid: past the last row
  p.add_calls()->mutable_quantiles()->set_name("h");
  p.mutable_calls(p.calls_size() - 1)->mutable_quantiles()->add_probabilities(1.5);
  Write("query", "out-of-range", p.SerializeAsString());
}

void WatchSeeds() {
  const auto watch = [](const std::string& name, uint32_t rows, uint32_t cols, v1::Pool pool) {
    v1::WatchRequest r;
    r.set_name(name);
    r.set_rows(rows);
    r.set_cols(cols);
    r.set_pool(pool);
    r.set_interval_ms(100);
    return r;
  };
  WatchProgram p;
  *p.add_calls()->mutable_create() = Create("h", 6, 10, 3);
  *p.add_calls()->mutable_ingest() = Ingest(1, "h", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({0, 5, 9, 10, 33, 59, 59}));
  *p.add_calls()->mutable_watch() = watch("h", 4, 3, v1::POOL_SUM);
  v1::WatchRequest* w = p.add_calls()->mutable_watch();
  *w = watch("h", 2, 64, v1::POOL_MAX);
  w->mutable_region()->set_row_begin(1);
  w->mutable_region()->set_row_end(5);
  w->mutable_region()->set_col_begin(2);
  w->mutable_region()->set_col_end(9);
  p.add_calls()->set_refresh(0);
  p.add_calls()->set_refresh(1);
  p.add_calls()->set_refresh(0);  // unchanged: no update
  *p.add_calls()->mutable_ingest() = Ingest(2, "h", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({59, 59, 12}));
  p.add_calls()->set_refresh(0);
  p.add_calls()->set_refresh(1);
  p.add_calls()->mutable_reset()->set_name("h");
  p.add_calls()->set_refresh(0);
  p.add_calls()->set_close(1);
  p.add_calls()->mutable_delete_()->set_name("h");
  *p.add_calls()->mutable_create() = Create("h", 2, 2, 255);
  p.add_calls()->set_refresh(0);  // NOT_FOUND: its histogram was deleted
  Write("watch", "refresh-change-reset-delete", p.SerializeAsString());

  p.Clear();
  *p.add_calls()->mutable_create() = Create("h", 4, 4, 255);
  *p.add_calls()->mutable_watch() = watch("h", 0, 0, v1::POOL_SUM);  // 256 x 1024: over the limit
  *p.add_calls()->mutable_watch() = watch("h", 4, 4, v1::POOL_SUM);
  p.mutable_calls(2)->mutable_watch()->set_interval_ms(99);            // below the minimum
  w = p.add_calls()->mutable_watch();
  *w = watch("h", 4, 4, v1::POOL_SUM);
  w->mutable_region()->set_row_end(5);  // near-valid: past the last row
  p.add_calls()->set_refresh(0);
  for (int i = 0; i < 5; ++i) *p.add_calls()->mutable_watch() = watch("h", 1, 1, v1::POOL_MAX);
  Write("watch", "limits", p.SerializeAsString());
}

void ReadAndResetSeeds() {
  ReadAndResetProgram p;
  *p.add_calls()->mutable_create() = Create("h", 6, 10, 3, true);
  *p.add_calls()->mutable_ingest() = Ingest(1, "h", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({0, 5, 9, 10, 33, 59}));
  *p.add_calls()->mutable_ingest() =
      Ingest(2, "h", v1::SAMPLE_TYPE_XY_F32, Packed<float>({0.5f, 0.0f, -1.0f, 2.0f, NAN, 0.25f}));
  ReadAndResetCall* c = p.add_calls();
  c->mutable_read_and_reset()->set_name("h");
  c->mutable_read_and_reset()->set_max_chunk_bytes(7);
  *p.add_calls()->mutable_ingest() = Ingest(3, "h", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({1, 1, 1, 1, 2}));
  c = p.add_calls();
  c->mutable_read_and_reset()->set_name("h");
  c->set_cancelled(true);
  c = p.add_calls();
  c->mutable_read_and_reset()->set_name("h");
  c->mutable_read_and_reset()->set_max_chunk_bytes(16);
  c->set_chunks_read(2);
  p.add_calls()->mutable_read_and_reset()->set_name("h");
  Write("read_and_reset", "cycles-cancel-partial", p.SerializeAsString());

  p.Clear();
  *p.add_calls()->mutable_create() = Create("big", 64, 64, 255);
  *p.add_calls()->mutable_ingest() = Ingest(1, "big", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({0, 4095}));
  p.add_calls()->mutable_read_and_reset()->set_name("big");  // 4 KiB default chunks: one
  c = p.add_calls();
  c->mutable_read_and_reset()->set_name("big");
  c->mutable_read_and_reset()->set_max_chunk_bytes(1u << 31);  // clamped to the message limit
  p.add_calls()->mutable_read_and_reset()->set_name("missing");
  Write("read_and_reset", "chunk-sizes-missing", p.SerializeAsString());
}

void ComputeSeeds() {
  ComputeProgram p;
  ComputeCall* c = p.add_calls();
  c->set_fit_data(true);
  v1::ReduceRequest* reduce = c->mutable_reduce();
  *reduce->mutable_input()->mutable_inline_() = Array(v1::DTYPE_I32, 3, 4, Packed<int32_t>({1, -2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12}));
  reduce->set_op(v1::REDUCE_OP_SUM);
  reduce->set_collapse(v1::DIM_ROWS);
  v1::ScanRequest* scan = p.add_calls()->mutable_scan();
  *scan->mutable_input()->mutable_inline_() = Array(v1::DTYPE_F64, 2, 3, Packed<double>({0.5, 1, 2, -3, 4, 1e300}));
  scan->set_kind(v1::SCAN_KIND_EXCLUSIVE);
  scan->set_along(v1::DIM_COLS);
  v1::TransposeRequest* transpose = p.add_calls()->mutable_transpose();
  *transpose->mutable_input()->mutable_inline_() = Array(v1::DTYPE_U8, 2, 5, "abcdefghij");
  v1::MatmulRequest* matmul = p.add_calls()->mutable_matmul();
  *matmul->mutable_a()->mutable_inline_() = Array(v1::DTYPE_F32, 2, 3, Packed<float>({1, 2, 3, 4, 5, 6}));
  *matmul->mutable_b()->mutable_inline_() = Array(v1::DTYPE_F32, 3, 2, Packed<float>({1, 0, 0, 1, 1, 1}));
  *matmul->mutable_c() = Array(v1::DTYPE_F32, 2, 2, Packed<float>({1, 1, 1, 1}));
  matmul->set_alpha(2);
  matmul->set_beta(0.5);
  matmul->set_use_alpha_beta(true);
  Write("compute", "inline", p.SerializeAsString());

  p.Clear();
  *p.add_calls()->mutable_create() = Create("h", 4, 6, 255);
  *p.add_calls()->mutable_ingest() = Ingest(1, "h", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({0, 0, 7, 23}));
  reduce = p.add_calls()->mutable_reduce();
  reduce->mutable_input()->set_histogram("h");
  reduce->set_op(v1::REDUCE_OP_MAX);
  scan = p.add_calls()->mutable_scan();
  scan->mutable_input()->set_histogram("h");
  scan->set_kind(v1::SCAN_KIND_INCLUSIVE);
  scan->set_along(v1::DIM_ROWS);
  p.add_calls()->mutable_transpose()->mutable_input()->set_histogram("h");
  matmul = p.add_calls()->mutable_matmul();
  matmul->mutable_a()->set_histogram("h");
  *matmul->mutable_b()->mutable_inline_() = Array(v1::DTYPE_F32, 6, 1, Packed<float>({1, 1, 1, 1, 1, 1}));
  Write("compute", "histogram", p.SerializeAsString());

  p.Clear();
  reduce = p.add_calls()->mutable_reduce();  // near-valid: data one element short
  *reduce->mutable_input()->mutable_inline_() = Array(v1::DTYPE_U64, 2, 2, Packed<uint64_t>({1, 2, 3}));
  reduce->set_op(v1::REDUCE_OP_MIN);
  Write("compute", "short-data", p.SerializeAsString());
}

void IngestDecoderSeeds() {
  // Header: flags (cuts, axes), rows, cols (little-endian u16), then the cut positions.
  const auto header = [](uint8_t flags, uint16_t rows, uint16_t cols, std::vector<uint8_t> cuts) {
    std::string h = {static_cast<char>(flags | cuts.size()), static_cast<char>(rows & 0xff),
                     static_cast<char>(rows >> 8), static_cast<char>(cols & 0xff), static_cast<char>(cols >> 8)};
    for (uint8_t c : cuts) h.push_back(static_cast<char>(c));
    return h;
  };
  Write("ingest_decoder", "indices",
        header(0, 4, 8, {}) + Ingest(3, "h", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({0, 7, 31, 2})).SerializeAsString());
  Write("ingest_decoder", "indices-sliced-out-of-range",
        header(0, 4, 8, {40, 128, 200}) + Ingest(3, "h", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({0, 7, 32})).SerializeAsString());
  Write("ingest_decoder", "xy",
        header(0x18, 16, 16, {100}) +
            Ingest(1 << 20, "xy", v1::SAMPLE_TYPE_XY_F32, Packed<float>({0.5f, 0.25f, -3.0f, 1e30f})).SerializeAsString());
  Write("ingest_decoder", "xy-no-axes-nan",
        header(0x08, 16, 16, {}) +
            Ingest(2, "xy", v1::SAMPLE_TYPE_XY_F32, Packed<float>({0.5f, NAN})).SerializeAsString());
  // Fields repeated, out of order, unknown ones (varint 9, fixed64 10, fixed32 11, bytes 12).
  std::string odd = Ingest(5, "x", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({1})).SerializeAsString();
  odd = std::string("\x48\x01\x51\x01\x02\x03\x04\x05\x06\x07\x08\x5d\x01\x02\x03\x04\x62\x02zz", 20) + odd +
        std::string("\x08\x09\x12\x01y", 5);
  Write("ingest_decoder", "unknown-and-repeated-fields", header(0, 1, 2, {7}) + odd);
  // A 4 KiB payload, so the streaming copy runs; split in the middle.
  std::vector<uint32_t> many(1100);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<uint32_t>(i % 64);
  Write("ingest_decoder", "streaming-copy",
        header(0, 8, 8, {128}) + Ingest(9, "h", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s(many)).SerializeAsString());
  Write("ingest_decoder", "truncated",
        header(0, 4, 8, {}) + Ingest(3, "h", v1::SAMPLE_TYPE_BIN_INDEX_U32, U32s({1, 2})).SerializeAsString().substr(0, 9));
}

void SnapshotSeeds() {
  EngineOptions options;
  options.kind = EngineKind::kCpu;
  options.cpu_threads = 1;
  std::unique_ptr<Engine> engine = *MakeEngine(options);
  server::HistogramStore store(*engine, 16, 1 << 16);
  server::HistogramSpec spec;
  spec.name = "a";
  spec.shape.rows = 3;
  spec.shape.cols = 5;
  spec.shape.cap = 2;
  auto a = *store.Create(spec);
  const uint8_t bins[15] = {0, 1, 2, 2, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 1};
  (void)engine->MergeFromHost(bins, a->storage());
  server::IngestCounters counters;
  counters.samples_applied = 13;
  counters.messages_applied = 2;
  a->RestoreCounters(counters);
  spec.name = "xy";
  spec.shape.rows = 2;
  spec.shape.cols = 2;
  spec.shape.cap = 255;
  spec.x_axis = AxisRange{0.0f, 1.0f};
  spec.y_axis = AxisRange{-2.0f, 2.0f};
  (void)store.Create(spec);

  char tmpl[] = "/tmp/histd-seeds-XXXXXX";
  const std::string tmp = mkdtemp(tmpl);
  const std::string path = tmp + "/s";
  (void)server::WriteSnapshot(path, store, *engine);
  std::stringstream two;
  two << std::ifstream(path, std::ios::binary).rdbuf();
  server::HistogramStore empty(*engine, 16, 1 << 16);
  (void)server::WriteSnapshot(path, empty, *engine);
  std::stringstream none;
  none << std::ifstream(path, std::ios::binary).rdbuf();
  unlink(path.c_str());
  rmdir(tmp.c_str());

  Write("snapshot", "two-histograms", std::string("\0", 1) + two.str());
  Write("snapshot", "two-histograms-repaired", std::string("\3", 1) + two.str());
  Write("snapshot", "empty", std::string("\0", 1) + none.str());
  Write("snapshot", "truncated", std::string("\1", 1) + two.str().substr(0, two.str().size() - 7));
  std::string flipped = two.str();
  flipped[flipped.size() / 2] ^= 0x10;
  Write("snapshot", "bit-flipped", std::string("\0", 1) + flipped);
}

void NpySeeds() {
  using client::io::EncodeNpyHeader;
  // Byte 0: the sample type asked (0 auto, 1 index, 2 xy), the batch size in bits 2-7.
  Write("npy", "u32-indices", std::string("\x04", 1) + EncodeNpyHeader(v1::DTYPE_U32, {4}) + U32s({1, 2, 3, 4}));
  Write("npy", "f32-xy", std::string("\x0a", 1) + EncodeNpyHeader(v1::DTYPE_F32, {2, 2}) + Packed<float>({0.5f, 1, 2, NAN}));
  Write("npy", "i64-2d", std::string("\x00", 1) + EncodeNpyHeader(v1::DTYPE_I64, {2, 3}) + Packed<int64_t>({1, -2, 3, 4, 5, -6}));
  Write("npy", "u8-0d", std::string("\x00", 1) + EncodeNpyHeader(v1::DTYPE_U8, {}) + "x");
  std::string fortran = EncodeNpyHeader(v1::DTYPE_F64, {2, 3});
  fortran.replace(fortran.find("False"), 5, "True ");
  Write("npy", "f64-fortran", std::string("\x00", 1) + fortran + Packed<double>({1, 2, 3, 4, 5, 6}));
  Write("npy", "truncated", std::string("\x01", 1) + EncodeNpyHeader(v1::DTYPE_U32, {3}) + U32s({1, 2}));
  std::string big_endian = EncodeNpyHeader(v1::DTYPE_I32, {1});
  big_endian.replace(big_endian.find("<i4"), 3, ">i4");
  Write("npy", "big-endian", std::string("\x00", 1) + big_endian + U32s({1}));
}

void CsvSeeds() {
  // Byte 0: the dtype asked (bits 0-2), the sample type asked (bits 3-4), the batch size.
  Write("csv", "indices", std::string("\x0c", 1) + "1\n2\n3\n4294967295\n");
  Write("csv", "xy-header", std::string("\x16", 1) + "x,y\n0.5,1.5\n-2,3e9\nnan,inf\n");
  Write("csv", "semicolons-comments", std::string("\x02", 1) + "# a comment\n1;2;3\n\n4;5;-6\n");
  Write("csv", "blanks-u64", std::string("\x00", 1) + "1 2\t18446744073709551615\n3 4 5\n");
  Write("csv", "u8-out-of-range", std::string("\x21", 1) + "255,256\r\n0,1\r\n");
  Write("csv", "ragged", std::string("\x08", 1) + "1\n2,3\n");
}

}  // namespace
}  // namespace histd::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  histd::fuzz::dir = argv[1];
  mkdir(argv[1], 0755);
  histd::fuzz::HistogramsSeeds();
  histd::fuzz::QuerySeeds();
  histd::fuzz::ComputeSeeds();
  histd::fuzz::WatchSeeds();
  histd::fuzz::ReadAndResetSeeds();
  histd::fuzz::IngestDecoderSeeds();
  histd::fuzz::SnapshotSeeds();
  histd::fuzz::NpySeeds();
  histd::fuzz::CsvSeeds();
  return 0;
}
