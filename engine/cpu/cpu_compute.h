// The CPU engine's compute operations on host memory: reduce, scan, transpose, matmul.
// CpuEngine resolves each ArrayRef (host bytes, or a histogram's bins under its lock) to a
// HostView, runs the shared checks, then calls these. Inputs here are already checked.
//
// Determinism: every loop splits its input at boundaries fixed by the shape alone (never
// by the thread count or timing) and combines per-chunk partial results in chunk order, so
// the same input gives the same bits on every run and with any number of threads.
//
// Thread safety: the functions keep no state; concurrent calls are safe on inputs that
// nobody writes meanwhile.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "model/array.h"
#include "engine/cpu/thread_pool.h"
#include "engine/engine.h"

namespace histd {

// A read-only row-major rows x cols array of `dtype` in host memory.
struct HostView {
  DType dtype = DType::kU8;
  uint64_t rows = 0;
  uint64_t cols = 0;
  const void* data = nullptr;
};

// A zeroed HostArray; RESOURCE_EXHAUSTED when memory runs out.
absl::StatusOr<HostArray> AllocateHostArray(DType dtype, uint64_t rows, uint64_t cols);

// Sum (SumType(dtype), float32 accumulated in double), min or max (same dtype; NaN
// propagates, -0.0 < +0.0) of `in`; kAll -> 1 x 1, kRows -> 1 x cols, kCols -> rows x 1.
absl::StatusOr<HostArray> CpuReduce(const HostView& in, ReduceOp op, Dim collapse,
                                    ThreadPool& pool);

// Inclusive or exclusive prefix sums of `in` (SumType(dtype), float32 accumulated in
// double), flattened (kAll), down each column (kRows) or along each row (kCols).
absl::StatusOr<HostArray> CpuScan(const HostView& in, bool inclusive, Dim along,
                                  ThreadPool& pool);

// cols x rows, same dtype.
absl::StatusOr<HostArray> CpuTranspose(const HostView& in, ThreadPool& pool);

// dst (cols x rows, dense) = transpose of the rows x cols elements of `elem_bytes` (1, 4
// or 8) at src, whose rows start every `src_pitch` elements.
void TransposeElements(const void* src, uint64_t rows, uint64_t cols, uint64_t src_pitch,
                       size_t elem_bytes, void* dst, ThreadPool& pool);

// alpha * a @ b + beta * c, float32 with float32 accumulation in ascending k order; a is
// m x k, b is k x n, c (m x n) is read only when beta != 0.
absl::StatusOr<HostArray> CpuMatmul(const float* a, const float* b, const float* c,
                                    uint64_t m, uint64_t k, uint64_t n, float alpha,
                                    float beta, ThreadPool& pool);

// dst[i] = float(src[i]) for i < n: a histogram's bins as a matmul operand.
void WidenToFloat(const uint8_t* src, uint64_t n, float* dst, ThreadPool& pool);

}  // namespace histd
