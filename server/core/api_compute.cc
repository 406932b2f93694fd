#include "server/core/api_compute.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "server/core/array_convert.h"
#include "server/core/histogram_queries.h"
#include "server/core/proto_convert.h"

namespace histd::server::api {
namespace {

// An ArrayInput resolved to an ArrayRef, with whatever keeps its bytes alive.
struct Operand {
  ArrayRef ref;
  std::shared_ptr<HistogramEntry> histogram;
  std::vector<uint64_t> aligned_copy;
};

absl::Status Resolve(ServiceContext& ctx, const v1::ArrayInput& input, const char* field,
                     Operand* out) {
  switch (input.source_case()) {
    case v1::ArrayInput::kInline: {
      absl::StatusOr<ArrayRef> ref = ArrayFromProto(input.inline_(), field, &out->aligned_copy);
      if (!ref.ok()) return ref.status();
      out->ref = *ref;
      return absl::OkStatus();
    }
    case v1::ArrayInput::kHistogram: {
      absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Find(input.histogram());
      if (!entry.ok()) return entry.status();
      out->histogram = *std::move(entry);
      const HistogramShape& shape = out->histogram->spec().shape;
      out->ref = ArrayRef{DType::kU8, shape.rows, shape.cols, nullptr, &out->histogram->storage()};
      return absl::OkStatus();
    }
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: set either inline (an Array) or histogram (a name)", field));
}

// Requests up to twice --max_message_bytes reach the handler (server.cc); the limit is
// enforced here, with a message that names it.
absl::Status CheckRequestSize(ServiceContext& ctx, const google::protobuf::Message& request) {
  const uint64_t limit = static_cast<uint64_t>(ctx.options->limits.max_message_bytes);
  const uint64_t bytes = request.ByteSizeLong();
  if (bytes > limit) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "request of %d bytes is larger than --max_message_bytes=%d", bytes, limit));
  }
  return absl::OkStatus();
}

// Everything the call will hold in host memory, checked before the engine allocates any of
// it: the result must fit a response, and the result (twice: the engine's array and the
// response's copy), the request's bytes and the engine's working copies must fit the host
// budget. The returned charge is held until the response is written.
absl::StatusOr<MemoryCharge> ChargeCall(ServiceContext& ctx, const char* op,
                                        const absl::StatusOr<ResultShape>& result,
                                        const google::protobuf::Message& request,
                                        uint64_t working_bytes) {
  if (!result.ok()) return result.status();
  const uint64_t limit = static_cast<uint64_t>(ctx.options->limits.max_message_bytes);
  if (result->bytes > limit - kResponseHeaderRoom) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: the result, %d x %d %s, is %d bytes, more than --max_message_bytes=%d allows",
        op, result->rows, result->cols, DTypeName(result->dtype), result->bytes, limit));
  }
  // Each term is below 2^33 (results and requests are bounded by the message limit, working
  // copies by 8 x kMaxHistogramBins): the sum cannot overflow.
  const uint64_t bytes = 2 * result->bytes + request.ByteSizeLong() + working_bytes;
  return ctx.host_budget->Charge(bytes, absl::StrFormat("%s of a %d x %d %s result", op,
                                                        result->rows, result->cols,
                                                        DTypeName(result->dtype)));
}

// Moves the engine's result into the response.
absl::Status Respond(absl::StatusOr<HostArray> result, v1::Array* out) {
  if (!result.ok()) return result.status();
  ArrayToProto(*std::move(result), out);
  return absl::OkStatus();
}

}  // namespace

absl::Status Reduce(ServiceContext& ctx, const v1::ReduceRequest& request,
                    v1::ReduceResponse* response) {
  absl::StatusOr<ReduceOp> op = ReduceOpFromProto(request.op());
  if (!op.ok()) return op.status();
  absl::StatusOr<Dim> collapse = DimFromProto(request.collapse(), "collapse");
  if (!collapse.ok()) return collapse.status();
  if (absl::Status s = CheckRequestSize(ctx, request); !s.ok()) return s;
  Operand input;
  if (absl::Status s = Resolve(ctx, request.input(), "input", &input); !s.ok()) return s;
  absl::StatusOr<MemoryCharge> charge =
      ChargeCall(ctx, "reduce", ReduceResultShape(input.ref, *op, *collapse), request, 0);
  if (!charge.ok()) return charge.status();
  return Respond(ctx.engine->Reduce(input.ref, *op, *collapse), response->mutable_result());
}

absl::Status Scan(ServiceContext& ctx, const v1::ScanRequest& request,
                  v1::ScanResponse* response) {
  if (request.kind() != v1::SCAN_KIND_INCLUSIVE && request.kind() != v1::SCAN_KIND_EXCLUSIVE) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kind must be SCAN_KIND_INCLUSIVE or SCAN_KIND_EXCLUSIVE, got %d",
        static_cast<int>(request.kind())));
  }
  absl::StatusOr<Dim> along = DimFromProto(request.along(), "along");
  if (!along.ok()) return along.status();
  if (absl::Status s = CheckRequestSize(ctx, request); !s.ok()) return s;
  Operand input;
  if (absl::Status s = Resolve(ctx, request.input(), "input", &input); !s.ok()) return s;
  absl::StatusOr<MemoryCharge> charge =
      ChargeCall(ctx, "scan", ScanResultShape(input.ref, *along), request, 0);
  if (!charge.ok()) return charge.status();
  return Respond(ctx.engine->Scan(input.ref, request.kind() == v1::SCAN_KIND_INCLUSIVE, *along),
                 response->mutable_result());
}

absl::Status Transpose(ServiceContext& ctx, const v1::TransposeRequest& request,
                       v1::TransposeResponse* response) {
  if (absl::Status s = CheckRequestSize(ctx, request); !s.ok()) return s;
  Operand input;
  if (absl::Status s = Resolve(ctx, request.input(), "input", &input); !s.ok()) return s;
  absl::StatusOr<MemoryCharge> charge =
      ChargeCall(ctx, "transpose", TransposeResultShape(input.ref), request, 0);
  if (!charge.ok()) return charge.status();
  return Respond(ctx.engine->Transpose(input.ref), response->mutable_result());
}

absl::Status Matmul(ServiceContext& ctx, const v1::MatmulRequest& request,
                    v1::MatmulResponse* response) {
  if (absl::Status s = CheckRequestSize(ctx, request); !s.ok()) return s;
  Operand a, b, c;
  if (absl::Status s = Resolve(ctx, request.a(), "a", &a); !s.ok()) return s;
  if (absl::Status s = Resolve(ctx, request.b(), "b", &b); !s.ok()) return s;
  // Inline integer and f64 operands as float32 (server/core/array_convert.h says how exactly).
  absl::StatusOr<WidenedArray> a32 = WidenToF32(a.ref, *ctx.host_budget, "matmul a");
  if (!a32.ok()) return a32.status();
  absl::StatusOr<WidenedArray> b32 = WidenToF32(b.ref, *ctx.host_budget, "matmul b");
  if (!b32.ok()) return b32.status();
  MatmulArgs args;
  args.a = a32->ref();
  args.b = b32->ref();
  args.alpha = request.alpha();
  args.beta = request.beta();
  if (!request.use_alpha_beta() && args.alpha == 0.0f && args.beta == 0.0f) {
    args.alpha = 1.0f;
    args.beta = 0.0f;
  }
  if (a.ref.cols != b.ref.rows) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "matmul: a is %d x %d and b is %d x %d; a.cols must equal b.rows", a.ref.rows,
        a.ref.cols, b.ref.rows, b.ref.cols));
  }
  if (request.has_c()) {
    absl::StatusOr<ArrayRef> ref = ArrayFromProto(request.c(), "c", &c.aligned_copy);
    if (!ref.ok()) return ref.status();
    if (ref->dtype != DType::kF32 || ref->rows != a.ref.rows || ref->cols != b.ref.cols) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "matmul: c must be a %d x %d DTYPE_F32 array, got %d x %d %s", a.ref.rows,
          b.ref.cols, ref->rows, ref->cols, DTypeName(ref->dtype)));
    }
    args.c = static_cast<const float*>(ref->host);
  } else if (args.beta != 0.0f) {
    return absl::InvalidArgumentError("matmul: beta != 0 needs c");
  }
  absl::StatusOr<MemoryCharge> charge = ChargeCall(ctx, "matmul", MatmulResultShape(args),
                                                   request, MatmulWorkingBytes(args));
  if (!charge.ok()) return charge.status();
  return Respond(ctx.engine->Matmul(args), response->mutable_result());
}

}  // namespace histd::server::api
