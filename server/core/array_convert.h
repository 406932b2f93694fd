// Widening inline arrays to float32 for operations that compute in float32 (matmul).
//
// Which dtypes convert, and how exactly: u8, i32, u32, i64 and u64 to the nearest float32
// (round to nearest, ties to even): every integer of magnitude up to 2^24 = 16777216 is
// exact, larger ones round (16777217 -> 16777216, 2^31 - 1 -> 2^31). f64 to the nearest
// float32: values beyond float32's range become +-inf, NaN stays NaN, and subnormal results
// may lose precision. f32 arrays and histograms (which every engine widens itself) pass
// through unconverted.
//
// Thread safety: pure functions; a WidenedArray is owned by one call.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "model/array.h"
#include "server/core/memory_budget.h"

namespace histd::server {

// An operand as float32: the input itself, or an owned float32 copy and its charge.
class WidenedArray {
 public:
  // The array to hand to the engine; valid while this object lives.
  ArrayRef ref() const;
  bool converted() const { return converted_; }

 private:
  friend absl::StatusOr<WidenedArray> WidenToF32(const ArrayRef&, MemoryBudget&, const char*);
  ArrayRef input_;
  bool converted_ = false;
  std::vector<float> values_;
  MemoryCharge charge_;  // values_' bytes against the host budget
};

// `input` as float32 (see the top of the file). A converted copy's 4 bytes an element are
// charged to `budget` before it is allocated (RESOURCE_EXHAUSTED naming `what` otherwise).
// Unknown dtypes are INVALID_ARGUMENT naming `what`.
absl::StatusOr<WidenedArray> WidenToF32(const ArrayRef& input, MemoryBudget& budget,
                                        const char* what);

}  // namespace histd::server
