// CheckScan: runs one scan (through a caller-given runner: the DeviceScan API or a variant
// launched directly) into a poisoned output placed at an offset and checks every element
// against the host reference (reference.h), and that nothing outside was written.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "kernels/common/device_buffer.h"
#include "kernels/reduce_scan/scan.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/reduce_scan/reference.h"

namespace histd::testing::rs {

using ScanRunner = std::function<absl::Status(const cuda::ScanArgs&)>;

// Scans x (rows x cols at device address `in`) into an output placed `out_offset` elements
// past an aligned address, and checks every element (and that nothing beyond was written).
template <typename T>
void CheckScan(const std::vector<T>& x, const void* in, uint64_t rows, uint64_t cols,
               bool inclusive, Dim dim, uint64_t out_offset, const ScanRunner& run) {
  using R = SumOf<T>;
  SCOPED_TRACE(::testing::Message() << (inclusive ? "inclusive" : "exclusive") << " along "
                                    << DimName(dim) << ", output offset " << out_offset);
  const uint64_t n = rows * cols;
  const uint64_t slots = n + out_offset + 2;
  absl::StatusOr<cuda::DeviceBuffer> out = cuda::DeviceBuffer::Allocate(slots * sizeof(R));
  ASSERT_TRUE(out.ok()) << out.status();
  PoisonDevice(out->get(), slots * sizeof(R));
  R* at = out->as<R>() + out_offset;
  cuda::ScanArgs a{in, DTypeOf<T>(), rows, cols, inclusive, dim, at};
  const absl::Status s = run(a);
  ASSERT_TRUE(s.ok()) << s;
  const std::vector<R> all = CopyBack<R>(out->get(), slots);
  const R* got = all.data() + out_offset;
  R poison;
  std::memset(&poison, 0xA5, sizeof(R));
  EXPECT_TRUE(SameValue(all[out_offset + n], poison)) << "wrote past the end";
  if (out_offset > 0) EXPECT_TRUE(SameValue(all[out_offset - 1], poison)) << "wrote before the start";

  const bool flat = dim == Dim::kAll;
  const uint64_t segments = flat ? 1 : dim == Dim::kCols ? rows : cols;
  const uint64_t length = flat ? n : dim == Dim::kCols ? cols : rows;
  const uint64_t stride = dim == Dim::kRows ? cols : 1;
  int failures = 0;
  for (uint64_t seg = 0; seg < segments && failures < 5; ++seg) {
    const uint64_t first = flat ? 0 : dim == Dim::kCols ? seg * cols : seg;
    long double acc = 0, mag = 0;
    uint64_t wrap = 0;
    for (uint64_t k = 0; k < length && failures < 5; ++k) {
      const uint64_t i = first + k * stride;
      const auto add = [&] {
        if constexpr (std::is_floating_point_v<T>) {
          acc += static_cast<long double>(x[i]);
          mag += std::fabs(static_cast<long double>(x[i]));
        } else if constexpr (std::is_signed_v<T>) {
          wrap += static_cast<uint64_t>(static_cast<int64_t>(x[i]));
        } else {
          wrap += static_cast<uint64_t>(x[i]);
        }
      };
      if (inclusive) add();
      bool ok;
      R want;
      if constexpr (std::is_floating_point_v<T>) {
        want = static_cast<R>(acc);
        // float32 adds in float32 except down the columns of a 2D array (scan.h).
        const long double work_eps = std::is_same_v<T, float> && !(dim == Dim::kRows && cols > 1)
                                         ? std::numeric_limits<float>::epsilon()
                                         : std::numeric_limits<double>::epsilon();
        ok = std::fabs(static_cast<long double>(got[i]) - acc) <= FloatTolerance<R>(acc, mag, length, work_eps);
      } else {
        want = static_cast<R>(wrap);
        ok = got[i] == want;
      }
      if (!ok) {
        ++failures;
        ADD_FAILURE() << "segment " << seg << " element " << k << " (flat index " << i << "): got "
                      << +got[i] << ", want " << +want;
      }
      if (!inclusive) add();
    }
  }
}

}  // namespace histd::testing::rs
