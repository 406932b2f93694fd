// GPU tests of the transpose (kernels/transpose): every path, element by element, against
// a host loop; the output buffer is poisoned first and every byte outside the written
// elements must still hold the poison afterwards (row padding, batch gaps, guard bytes).
// SKIPPED without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "experiments/transpose/seed_transpose.h"
#include "experiments/transpose/transpose_paths.h"
#include "kernels/common/device_buffer.h"
#include "kernels/transpose/transpose.h"
#include "tests/kernels/gpu_test_util.h"

namespace histd::cuda {
namespace {

constexpr uint8_t kPoison = 0xA5;

struct Case {
  int elem_bytes = 4;
  int64_t rows = 0, cols = 0;
  int64_t in_pad = 0, out_pad = 0;  // pitch = row length + pad
  int64_t batch = 1;
  int64_t in_batch_gap = 0, out_batch_gap = 0;  // extra elements between matrices
  int64_t in_offset = 0, out_offset = 0;        // elements from a 256-byte aligned base
  TransposePath path = TransposePath::kAuto;

  std::string Name() const {
    return "eb=" + std::to_string(elem_bytes) + " " + std::to_string(batch) + "x" + std::to_string(rows) + "x" +
           std::to_string(cols) + " pads=" + std::to_string(in_pad) + "," + std::to_string(out_pad) +
           " gaps=" + std::to_string(in_batch_gap) + "," + std::to_string(out_batch_gap) +
           " offs=" + std::to_string(in_offset) + "," + std::to_string(out_offset) + " path=" +
           TransposePathName(path);
  }
};

void FillRandom(std::vector<uint8_t>& v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  size_t i = 0;
  for (; i + 8 <= v.size(); i += 8) {
    const uint64_t x = rng();
    std::memcpy(&v[i], &x, 8);
  }
  for (; i < v.size(); ++i) v[i] = static_cast<uint8_t>(rng());
}

// Runs one case; returns false (after reporting) on any mismatch.
void RunCase(const Case& c, uint64_t seed) {
  SCOPED_TRACE(c.Name() + " seed=" + std::to_string(seed));
  const int eb = c.elem_bytes;
  const int64_t in_pitch = c.cols + c.in_pad, out_pitch = c.rows + c.out_pad;
  const int64_t in_bs = c.rows * in_pitch + c.in_batch_gap;
  const int64_t out_bs = c.cols * out_pitch + c.out_batch_gap;
  const int64_t in_elems = c.in_offset + c.batch * in_bs + 8;  // + guard elements
  const int64_t out_elems = c.out_offset + c.batch * out_bs + 8;

  std::vector<uint8_t> host_in(in_elems * eb);
  FillRandom(host_in, seed);
  auto d_in = DeviceBuffer::Allocate(host_in.size());
  auto d_out = DeviceBuffer::Allocate(out_elems * eb);
  ASSERT_TRUE(d_in.ok() && d_out.ok());
  ASSERT_EQ(cudaMemcpy(d_in->get(), host_in.data(), host_in.size(), cudaMemcpyHostToDevice), cudaSuccess);
  testing::PoisonDevice(d_out->get(), d_out->bytes());

  TransposeArgs args;
  args.in = d_in->as<uint8_t>() + c.in_offset * eb;
  args.out = d_out->as<uint8_t>() + c.out_offset * eb;
  args.elem_bytes = eb;
  args.rows = c.rows;
  args.cols = c.cols;
  args.in_pitch = in_pitch;
  args.out_pitch = out_pitch;
  args.batch = c.batch;
  args.in_batch_stride = in_bs;
  args.out_batch_stride = out_bs;
  ASSERT_TRUE(Transpose::can_implement(args).ok()) << Transpose::can_implement(args);
  EXPECT_EQ(Transpose::get_workspace_size(args), 0u);
  const absl::Status ran = TransposeWithPath::run(args, c.path, nullptr, nullptr);
  ASSERT_TRUE(ran.ok()) << ran;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<uint8_t> got(out_elems * eb);
  ASSERT_EQ(cudaMemcpy(got.data(), d_out->get(), got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  std::vector<uint8_t> want(got.size(), kPoison);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t col = 0; col < c.cols; ++col)
        std::memcpy(&want[(c.out_offset + b * out_bs + col * out_pitch + r) * eb],
                    &host_in[(c.in_offset + b * in_bs + r * in_pitch + col) * eb], eb);
  if (got != want) {
    size_t i = 0;
    while (got[i] == want[i]) ++i;
    const int64_t e = static_cast<int64_t>(i) / eb - c.out_offset;
    const int64_t b = out_bs > 0 ? e / out_bs : 0, rem = out_bs > 0 ? e % out_bs : e;
    ADD_FAILURE() << "first wrong byte " << i << ": got " << int(got[i]) << " want " << int(want[i])
                  << " (output batch " << b << ", row " << (out_pitch > 0 ? rem / out_pitch : 0) << ", col "
                  << (out_pitch > 0 ? rem % out_pitch : rem) << ")";
  }
}

// Every path of the bytes16x4 family (16-byte aligned 1-byte rows), the async ones included.
std::vector<TransposePath> Bytes16Paths() {
  std::vector<TransposePath> paths;
  for (const TransposePath p : AllTransposePaths()) {
    const TransposeLayoutNeed* need = TransposePathLayoutNeed(p);
    if (need != nullptr && std::string_view(need->family) == "bytes16x4") paths.push_back(p);
  }
  return paths;
}

std::vector<TransposePath> PathsFor(int eb, int64_t rows, int64_t cols) {
  std::vector<TransposePath> paths = {TransposePath::kAuto,
                                      TransposePath::kScalarTile32,
                                      TransposePath::kScalarTile64,
                                      TransposePath::kScalarTile64Pipelined,
                                      TransposePath::kScalarTile64DeepPipelined,
                                      TransposePath::kScalarTile32Pipelined,
                                      TransposePath::kScalarTile64Grouped,
                                      TransposePath::kScalarTile64PipelinedGrouped8,
                                      TransposePath::kScalarTile64PipelinedGrouped32,
                                      TransposePath::kScalarTile64PipelinedStreaming,
                                      TransposePath::kScalarTile64Occ4,
                                      TransposePath::kScalarTile64Occ4Grouped};
  if (rows == 1 || cols == 1) paths.push_back(TransposePath::kStridedCopy);
  if (eb == 1) {
    paths.push_back(TransposePath::kBytes4x4);
    paths.push_back(TransposePath::kBytes4x4Wide);
    paths.push_back(TransposePath::kBytes4x4Tall);
    paths.push_back(TransposePath::kBytes4x4TallGrouped);
    for (const TransposePath p : Bytes16Paths()) paths.push_back(p);
  }
  if (eb == 4) {
    paths.push_back(TransposePath::kVec4x4);
    paths.push_back(TransposePath::kVec4x4Deep);
  }
  if (eb == 8) paths.push_back(TransposePath::kVec2x2);
  return paths;
}

// Pads that keep the register-block paths eligible (pitches a multiple of 16 bytes).
int64_t AlignedPad(int64_t len, int eb) {
  const int64_t per = 16 / eb;
  return (per - len % per) % per + per;
}

TEST(CudaTranspose, EveryPathOnAwkwardShapes) {
  HISTD_REQUIRE_GPU();
  const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {1, 1}, {1, 2}, {2, 1}, {1, 1000}, {1000, 1}, {2, 3}, {3, 2}, {4, 4}, {5, 7}, {17, 33},
      {31, 129}, {32, 32}, {33, 31}, {64, 64}, {127, 129}, {128, 128}, {129, 257}, {300, 200}};
  uint64_t seed = 1000;
  for (const int eb : {1, 2, 4, 8}) {
    for (const auto& [rows, cols] : shapes) {
      for (const TransposePath path : PathsFor(eb, rows, cols)) {
        Case c;
        c.elem_bytes = eb;
        c.rows = rows;
        c.cols = cols;
        c.path = path;
        // Register-block paths need 16-byte (4 for bytes) aligned pitches; give them those,
        // and give the others odd pads.
        const bool vec = TransposePathNeedsAlignedRows(path);
        c.in_pad = vec ? AlignedPad(cols, eb) : 3;
        c.out_pad = vec ? AlignedPad(rows, eb) : 1;
        RunCase(c, ++seed);
        if (::testing::Test::HasFailure()) return;
        // Tight pitches as well (register paths only where tight is aligned).
        c.in_pad = c.out_pad = 0;
        const TransposeArgs probe{reinterpret_cast<void*>(256), reinterpret_cast<void*>(1 << 20), eb, rows, cols};
        if (!vec || TransposeWithPath::can_implement(probe, path).ok()) RunCase(c, ++seed);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

// The candidates of 2026-11-23 (bytes16x4*, grouped tile orders, 32x32 pipelined) on shapes
// that cross their tiles and their tile groups: vectors, odd sizes, several tile groups with a
// short last one, batched with gaps, padded pitches (aligned where the path needs it).
TEST(CudaTranspose, CandidatePathsCrossTilesAndGroups) {
  HISTD_REQUIRE_GPU();
  struct PathSet {
    int eb;
    std::vector<TransposePath> paths;
  };
  std::vector<TransposePath> bytes = Bytes16Paths();
  bytes.push_back(TransposePath::kBytes4x4TallGrouped);
  const std::vector<PathSet> sets = {
      {1, bytes},
      {4, {TransposePath::kScalarTile32Pipelined, TransposePath::kScalarTile64Grouped,
           TransposePath::kScalarTile64PipelinedGrouped8, TransposePath::kScalarTile64PipelinedGrouped32,
           TransposePath::kScalarTile64PipelinedStreaming, TransposePath::kVec4x4Deep,
           TransposePath::kScalarTile64Occ4, TransposePath::kScalarTile64Occ4Grouped}},
      {8, {TransposePath::kScalarTile64Grouped, TransposePath::kScalarTile64PipelinedGrouped8,
           TransposePath::kScalarTile64Occ4Grouped}}};
  // 2100 rows: 17 tile rows of 128 (16 + 1 per group); 4100 rows: 17 of 256; 2107: 33 of 64.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 4000}, {4000, 1},  {33, 65},   {16383, 17},
                                                           {17, 16383}, {2100, 300}, {4100, 260}, {2107, 300},
                                                           {384, 640}, {256, 1000}};
  uint64_t seed = 9000;
  for (const PathSet& set : sets) {
    for (const TransposePath path : set.paths) {
      for (const auto& [rows, cols] : shapes) {
        for (const int64_t batch : {int64_t{1}, int64_t{3}}) {
          if (batch > 1 && rows * cols > 300000) continue;
          Case c;
          c.elem_bytes = set.eb;
          c.rows = rows;
          c.cols = cols;
          c.batch = batch;
          c.path = path;
          const bool aligned = TransposePathNeedsAlignedRows(path);
          c.in_pad = aligned ? AlignedPad(cols, set.eb) : 3;
          c.out_pad = aligned ? AlignedPad(rows, set.eb) : 1;
          c.in_batch_gap = aligned ? 16 : 5;
          c.out_batch_gap = aligned ? 32 : 7;
          c.in_offset = aligned ? 0 : 1;
          c.out_offset = aligned ? 0 : 2;
          RunCase(c, ++seed);
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// The asynchronous-copy 1-byte paths keep a ring of kStages tiles per block and a persistent
// grid of at most a few blocks per SM: only problems with several times more tiles than
// resident blocks make every block reuse every stage, refill the stage it has just read and
// stop mid-ring. 4100 x 4200 bytes in a batch of 2 is 578 tiles of 256 x 256 (2178 of
// 128 x 128), with partial tiles on both edges; one case runs the automatic choice.
TEST(CudaTranspose, BytesAsyncRingWrapsAround) {
  HISTD_REQUIRE_GPU();
  uint64_t seed = 12000;
  for (const TransposePath path : {TransposePath::kAuto, TransposePath::kBytesAsync256x256S2,
                                   TransposePath::kBytesAsync256x256, TransposePath::kBytesAsync256x128,
                                   TransposePath::kBytesAsync128x128, TransposePath::kBytesAsync128x128Deep,
                                   TransposePath::kBytesAsync512x128, TransposePath::kBytesAsync128x512}) {
    Case c;
    c.elem_bytes = 1;
    c.rows = 4100;
    c.cols = 4200;
    c.batch = 2;
    c.path = path;
    c.in_pad = AlignedPad(c.cols, 1);
    c.out_pad = AlignedPad(c.rows, 1);
    c.in_batch_gap = 16;
    c.out_batch_gap = 48;
    RunCase(c, ++seed);
    if (::testing::Test::HasFailure()) return;
  }
}

// bytes16x4 needs 16-byte aligned rows: a pitch that is only 4-byte aligned is refused, and
// the automatic choice still transposes it correctly.
TEST(CudaTranspose, Bytes16RefusesRowsNotSixteenByteAligned) {
  HISTD_REQUIRE_GPU();
  auto buf = DeviceBuffer::Allocate(1 << 20);
  ASSERT_TRUE(buf.ok());
  TransposeArgs a{buf->get(), buf->as<char>() + (1 << 19), 1, 256, 260};  // in pitch 260 = 4 mod 16
  for (const TransposePath path : Bytes16Paths()) {
    EXPECT_EQ(TransposeWithPath::can_implement(a, path).code(), absl::StatusCode::kInvalidArgument)
        << TransposePathName(path);
  }
  Case c;
  c.elem_bytes = 1;
  c.rows = 256;
  c.cols = 260;
  RunCase(c, 77);
  c.in_offset = 4;  // pointer only 4-byte aligned
  c.path = TransposePath::kBytes4x4TallGrouped;
  RunCase(c, 78);
}

TEST(CudaTranspose, ZeroSizedIsANoOp) {
  HISTD_REQUIRE_GPU();
  for (const auto& [rows, cols, batch] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 0, 1}, {0, 7, 1}, {7, 0, 1}, {5, 5, 0}}) {
    Case c;
    c.rows = rows;
    c.cols = cols;
    c.batch = batch;
    RunCase(c, 7);
  }
  TransposeArgs null_args;  // empty shapes accept null pointers
  EXPECT_TRUE(Transpose::run(null_args, nullptr, nullptr).ok());
}

TEST(CudaTranspose, BatchedPitchedUnaligned) {
  HISTD_REQUIRE_GPU();
  uint64_t seed = 5000;
  for (const int eb : {1, 4, 8}) {
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 37}, {37, 1}, {45, 77}, {256, 130}}) {
      for (const int64_t offset : {0, 1, 3}) {
        Case c;
        c.elem_bytes = eb;
        c.rows = rows;
        c.cols = cols;
        c.batch = 5;
        c.in_pad = 2;
        c.out_pad = 5;
        c.in_batch_gap = 3;
        c.out_batch_gap = 11;
        c.in_offset = offset;
        c.out_offset = offset == 0 ? 0 : offset + 1;
        RunCase(c, ++seed);
        // Aligned batch: register-block paths and the vector copy.
        c.in_pad = AlignedPad(cols, eb);
        c.out_pad = AlignedPad(rows, eb);
        c.in_batch_gap = c.out_batch_gap = 16;
        c.in_offset = c.out_offset = 0;
        RunCase(c, ++seed);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(CudaTranspose, LargeOddAndAlignedShapes) {
  HISTD_REQUIRE_GPU();
  const auto run = [](const Case& c, uint64_t seed) {  // the lean sweep: up to 2^22 elements
    if (!testing::LeanSkips(uint64_t(c.rows) * uint64_t(c.cols), uint64_t{1} << 22)) RunCase(c, seed);
  };
  run(Case{1, 16383, 16385}, 42);  // odd shape, one byte: the unaligned fallback
  run(Case{1, 256, 8192}, 43);     // a resident histogram: bytes4x4
  run(Case{4, 2047, 2049}, 44);
  run(Case{4, 2048, 4096}, 45);    // vec4x4
  run(Case{8, 1025, 1023}, 46);
  run(Case{8, 1024, 2048}, 47);    // vec2x2
  run(Case{4, 1, 1 << 22}, 48);    // 1 x N: contiguous copy
  run(Case{4, 1 << 22, 1}, 49);    // N x 1
}

TEST(CudaTranspose, RejectsBadArguments) {
  HISTD_REQUIRE_GPU();
  auto buf = DeviceBuffer::Allocate(1 << 16);
  ASSERT_TRUE(buf.ok());
  char* p = buf->as<char>();
  TransposeArgs a{p, p + 8192, 4, 16, 16};
  EXPECT_TRUE(Transpose::can_implement(a).ok());
  TransposeArgs bad = a;
  bad.elem_bytes = 3;
  EXPECT_EQ(Transpose::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = a;
  bad.in_pitch = 15;
  EXPECT_EQ(Transpose::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = a;
  bad.out = p + 512;  // overlaps the input
  EXPECT_EQ(Transpose::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = a;
  bad.in = p + 2;  // not aligned to the element
  EXPECT_EQ(Transpose::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = a;
  bad.batch = 2;
  bad.out_batch_stride = 100;  // output matrices would overlap
  EXPECT_EQ(Transpose::can_implement(bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TransposeWithPath::can_implement(a, TransposePath::kBytes4x4).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TransposeWithPath::can_implement(a, TransposePath::kStridedCopy).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CudaTranspose, SeedVariantsMatchOnOddShapes) {
  HISTD_REQUIRE_GPU();
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {33, 65}, {257, 31}, {512, 512}}) {
    const int64_t n = rows * cols;
    std::vector<float> in(n);
    std::mt19937 rng(static_cast<uint32_t>(rows * 7 + cols));
    for (auto& x : in) x = static_cast<float>(rng() % 100000) - 50000.0f;
    auto d_in = DeviceBuffer::Allocate(n * 4);
    auto d_out = DeviceBuffer::Allocate(n * 4);
    ASSERT_TRUE(d_in.ok() && d_out.ok());
    ASSERT_EQ(cudaMemcpy(d_in->get(), in.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
    for (const SeedTranspose v : {SeedTranspose::kCopy, SeedTranspose::kCopyShared, SeedTranspose::kNaive,
                                  SeedTranspose::kCoalesced, SeedTranspose::kPadded, SeedTranspose::kDiagonal}) {
      SCOPED_TRACE(std::string(SeedTransposeName(v)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      testing::PoisonDevice(d_out->get(), n * 4);
      ASSERT_TRUE(RunSeedTranspose(v, d_in->as<float>(), d_out->as<float>(), rows, cols, nullptr).ok());
      std::vector<float> got(n);
      ASSERT_EQ(cudaMemcpy(got.data(), d_out->get(), n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      const bool copy = v == SeedTranspose::kCopy || v == SeedTranspose::kCopyShared;
      int64_t bad = 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          bad += copy ? got[r * cols + c] != in[r * cols + c] : got[c * rows + r] != in[r * cols + c];
      EXPECT_EQ(bad, 0);
    }
  }
}

}  // namespace
}  // namespace histd::cuda
