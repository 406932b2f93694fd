#include "engine/cuda/cuda_compute.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/device_buffer.h"
#include "engine/cuda/cuda_histogram.h"
#include "engine/cuda/histogram_ops.h"
#include "kernels/matmul/matmul.h"
#include "kernels/reduce_scan/reduce.h"
#include "kernels/reduce_scan/scan.h"
#include "kernels/transpose/transpose.h"

namespace histd::cuda {
namespace {

// The device memory of one call: each buffer is reserved against the device budget before
// it is allocated (RESOURCE_EXHAUSTED naming the budget when it does not fit), and the
// reservations are returned when the call's memory goes. Declare it before the buffers it
// allocates, so that they are freed before their bytes are returned.
class CallMemory {
 public:
  CallMemory(DeviceMemoryBudget* budget, const char* op) : budget_(budget), op_(op) {}

  absl::StatusOr<DeviceBuffer> Allocate(uint64_t bytes, const char* what) {
    absl::StatusOr<DeviceMemoryHold> hold = DeviceMemoryHold::Take(
        budget_, bytes, absl::StrFormat("the %s of a device %s", what, op_));
    if (!hold.ok()) return hold.status();
    absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(bytes);
    if (!buffer.ok()) return buffer.status();
    holds_.push_back(*std::move(hold));
    return buffer;
  }

 private:
  DeviceMemoryBudget* const budget_;
  const char* const op_;
  std::vector<DeviceMemoryHold> holds_;
};

// The input on the device: a histogram's bins in place, or a copy of host bytes kept alive
// by `holder`.
absl::StatusOr<const void*> OnDevice(const ArrayRef& input, cudaStream_t stream,
                                     CallMemory& memory, DeviceBuffer& holder) {
  if (input.histogram != nullptr) return static_cast<const void*>(DeviceBins(*input.histogram));
  auto buffer = memory.Allocate(input.bytes(), "input");
  if (!buffer.ok()) return buffer.status();
  holder = std::move(*buffer);
  if (input.bytes() != 0) {
    HISTD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(holder.get(), input.host, input.bytes(),
                                               cudaMemcpyHostToDevice, stream));
  }
  return static_cast<const void*>(holder.get());
}

// A float32 operand on the device: histograms are widened from bytes.
absl::StatusOr<const float*> FloatOnDevice(const ArrayRef& input, cudaStream_t stream,
                                           CallMemory& memory, DeviceBuffer& holder) {
  if (input.histogram == nullptr) {
    auto p = OnDevice(input, stream, memory, holder);
    if (!p.ok()) return p.status();
    return static_cast<const float*>(*p);
  }
  auto buffer = memory.Allocate(input.elements() * sizeof(float), "float32 operand");
  if (!buffer.ok()) return buffer.status();
  holder = std::move(*buffer);
  HISTD_RETURN_IF_ERROR(LaunchWidenToFloat(DeviceBins(*input.histogram), input.elements(),
                                           holder.as<float>(), stream));
  return static_cast<const float*>(holder.get());
}

// Copies `result` (device) into a new host array of the given shape and waits.
absl::StatusOr<HostArray> ToHost(const DeviceBuffer& result, DType dtype, uint64_t rows,
                                 uint64_t cols, cudaStream_t stream) {
  HostArray out = HostArray::Make(dtype, rows, cols);
  if (!out.bytes.empty()) {
    HISTD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.bytes.data(), result.get(), out.bytes.size(),
                                               cudaMemcpyDeviceToHost, stream));
  }
  HISTD_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return out;
}

// A zeroed host result of `shape`: what an operation returns without a launch when its
// input or its result has no elements.
absl::StatusOr<HostArray> ZeroResult(const ResultShape& shape) {
  return HostArray::Make(shape.dtype, shape.rows, shape.cols);
}

template <typename Op, typename Args>
absl::Status RunWithWorkspace(const Args& args, cudaStream_t stream, CallMemory& memory) {
  auto workspace = memory.Allocate(Op::get_workspace_size(args), "workspace");
  if (!workspace.ok()) return workspace.status();
  HISTD_RETURN_IF_ERROR(Op::run(args, workspace->get(), stream));
  // The workspace is freed by cudaFree, which waits for the device: keep it until done.
  return ToStatus(cudaStreamSynchronize(stream), "compute");
}

}  // namespace

absl::StatusOr<HostArray> RunReduce(const ArrayRef& input, ReduceOp op, Dim collapse,
                                    cudaStream_t stream, DeviceMemoryBudget* budget) {
  auto shape = ReduceResultShape(input, op, collapse);
  if (!shape.ok()) return shape.status();
  // Sums of empty extents are zero (min and max over them were refused by the check).
  if (input.elements() == 0) return ZeroResult(*shape);
  CallMemory memory(budget, "reduce");
  DeviceBuffer input_copy;
  auto in = OnDevice(input, stream, memory, input_copy);
  if (!in.ok()) return in.status();
  ReduceArgs args;
  args.input = *in;
  args.dtype = input.dtype;
  args.rows = input.rows;
  args.cols = input.cols;
  args.op = op;
  args.collapse = collapse;
  const DType result_type = ReduceResultType(input.dtype, op);
  const uint64_t elements = ReduceOutputElements(args);
  auto output = memory.Allocate(elements * DTypeSize(result_type), "result");
  if (!output.ok()) return output.status();
  args.output = output->get();
  HISTD_RETURN_IF_ERROR(DeviceReduce::can_implement(args));
  HISTD_RETURN_IF_ERROR((RunWithWorkspace<DeviceReduce>(args, stream, memory)));
  const uint64_t rows = collapse == Dim::kCols ? input.rows : 1;
  const uint64_t cols = collapse == Dim::kRows ? input.cols : 1;
  return ToHost(*output, result_type, rows, cols, stream);
}

absl::StatusOr<HostArray> RunScan(const ArrayRef& input, bool inclusive, Dim along,
                                  cudaStream_t stream, DeviceMemoryBudget* budget) {
  auto shape = ScanResultShape(input, along);
  if (!shape.ok()) return shape.status();
  if (shape->bytes == 0) return ZeroResult(*shape);
  CallMemory memory(budget, "scan");
  DeviceBuffer input_copy;
  auto in = OnDevice(input, stream, memory, input_copy);
  if (!in.ok()) return in.status();
  const DType result_type = SumType(input.dtype);
  auto output = memory.Allocate(input.elements() * DTypeSize(result_type), "result");
  if (!output.ok()) return output.status();
  ScanArgs args;
  args.input = *in;
  args.dtype = input.dtype;
  args.rows = input.rows;
  args.cols = input.cols;
  args.inclusive = inclusive;
  args.along = along;
  args.output = output->get();
  HISTD_RETURN_IF_ERROR(DeviceScan::can_implement(args));
  HISTD_RETURN_IF_ERROR((RunWithWorkspace<DeviceScan>(args, stream, memory)));
  return ToHost(*output, result_type, input.rows, input.cols, stream);
}

absl::StatusOr<HostArray> RunTranspose(const ArrayRef& input, cudaStream_t stream,
                                       DeviceMemoryBudget* budget) {
  auto shape = TransposeResultShape(input);
  if (!shape.ok()) return shape.status();
  if (shape->bytes == 0) return ZeroResult(*shape);
  CallMemory memory(budget, "transpose");
  DeviceBuffer input_copy;
  auto in = OnDevice(input, stream, memory, input_copy);
  if (!in.ok()) return in.status();
  auto output = memory.Allocate(input.bytes(), "result");
  if (!output.ok()) return output.status();
  if (input.elements() != 0) {
    TransposeArgs args;
    args.in = *in;
    args.out = output->get();
    args.elem_bytes = static_cast<int>(DTypeSize(input.dtype));
    args.rows = static_cast<int64_t>(input.rows);
    args.cols = static_cast<int64_t>(input.cols);
    HISTD_RETURN_IF_ERROR(Transpose::can_implement(args));
    auto workspace = memory.Allocate(Transpose::get_workspace_size(args), "workspace");
    if (!workspace.ok()) return workspace.status();
    HISTD_RETURN_IF_ERROR(Transpose::run(args, workspace->get(), stream));
    HISTD_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  }
  return ToHost(*output, input.dtype, input.cols, input.rows, stream);
}

absl::StatusOr<HostArray> RunMatmul(const histd::MatmulArgs& args, cudaStream_t stream,
                                    DeviceMemoryBudget* budget) {
  auto shape = MatmulResultShape(args);
  if (!shape.ok()) return shape.status();
  if (shape->bytes == 0) return ZeroResult(*shape);
  if (args.a.cols == 0) {  // an empty inner dimension: alpha * 0 + beta * c, as in BLAS
    HostArray out = HostArray::Make(DType::kF32, shape->rows, shape->cols);
    if (args.beta != 0.0f) {
      float* o = out.data<float>();
      for (uint64_t i = 0; i < shape->elements(); ++i) o[i] = args.beta * args.c[i];
    }
    return out;
  }
  CallMemory memory(budget, "matmul");
  DeviceBuffer a_holder, b_holder;
  auto a = FloatOnDevice(args.a, stream, memory, a_holder);
  if (!a.ok()) return a.status();
  auto b = FloatOnDevice(args.b, stream, memory, b_holder);
  if (!b.ok()) return b.status();
  const uint64_t m = args.a.rows, k = args.a.cols, n = args.b.cols;
  auto c = memory.Allocate(m * n * sizeof(float), "result");
  if (!c.ok()) return c.status();
  if (args.beta != 0.0f && m * n != 0) {
    HISTD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(c->get(), args.c, m * n * sizeof(float),
                                               cudaMemcpyHostToDevice, stream));
  }
  cuda::MatmulArgs gemm;
  gemm.m = static_cast<int64_t>(m);
  gemm.n = static_cast<int64_t>(n);
  gemm.k = static_cast<int64_t>(k);
  gemm.alpha = args.alpha;
  gemm.a = *a;
  gemm.lda = static_cast<int64_t>(k);
  gemm.b = *b;
  gemm.ldb = static_cast<int64_t>(n);
  gemm.beta = args.beta;
  gemm.c = c->as<float>();
  gemm.ldc = static_cast<int64_t>(n);
  if (m * n != 0) {
    HISTD_RETURN_IF_ERROR(Matmul::can_implement(gemm));
    auto workspace = memory.Allocate(Matmul::get_workspace_size(gemm), "workspace");
    if (!workspace.ok()) return workspace.status();
    HISTD_RETURN_IF_ERROR(Matmul::run(gemm, workspace->get(), stream));
    HISTD_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  }
  return ToHost(*c, DType::kF32, m, n, stream);
}

}  // namespace histd::cuda
