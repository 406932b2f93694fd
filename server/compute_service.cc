#include "server/compute_service.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "server/proto_convert.h"
#include "server/unary_reactor.h"

namespace histd::server {
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

// Moves the engine's result into the response, unless it cannot be sent.
absl::Status Respond(ServiceContext& ctx, absl::StatusOr<HostArray> result, v1::Array* out) {
  if (!result.ok()) return result.status();
  const uint64_t limit = static_cast<uint64_t>(ctx.options->limits.max_message_bytes);
  if (result->bytes.size() + 1024 > limit) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "result of %d x %d %s is %d bytes, more than --max_message_bytes=%d allows", result->rows,
        result->cols, DTypeName(result->dtype), result->bytes.size(), limit));
  }
  ArrayToProto(*std::move(result), out);
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* ComputeService::Reduce(grpc::CallbackServerContext* context,
                                                 const v1::ReduceRequest* request,
                                                 v1::ReduceResponse* response) {
  return RunOnWorkers(context, *ctx_.workers, [this, request, response]() -> absl::Status {
    absl::StatusOr<Engine::ReduceOp> op = ReduceOpFromProto(request->op());
    if (!op.ok()) return op.status();
    absl::StatusOr<Dim> collapse = DimFromProto(request->collapse(), "collapse");
    if (!collapse.ok()) return collapse.status();
    Operand input;
    if (absl::Status s = Resolve(ctx_, request->input(), "input", &input); !s.ok()) return s;
    return Respond(ctx_, ctx_.engine->Reduce(input.ref, *op, *collapse),
                   response->mutable_result());
  });
}

grpc::ServerUnaryReactor* ComputeService::Scan(grpc::CallbackServerContext* context,
                                               const v1::ScanRequest* request,
                                               v1::ScanResponse* response) {
  return RunOnWorkers(context, *ctx_.workers, [this, request, response]() -> absl::Status {
    if (request->kind() != v1::SCAN_KIND_INCLUSIVE && request->kind() != v1::SCAN_KIND_EXCLUSIVE) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kind must be SCAN_KIND_INCLUSIVE or SCAN_KIND_EXCLUSIVE, got %d",
          static_cast<int>(request->kind())));
    }
    absl::StatusOr<Dim> along = DimFromProto(request->along(), "along");
    if (!along.ok()) return along.status();
    Operand input;
    if (absl::Status s = Resolve(ctx_, request->input(), "input", &input); !s.ok()) return s;
    return Respond(ctx_,
                   ctx_.engine->Scan(input.ref, request->kind() == v1::SCAN_KIND_INCLUSIVE, *along),
                   response->mutable_result());
  });
}

grpc::ServerUnaryReactor* ComputeService::Transpose(grpc::CallbackServerContext* context,
                                                    const v1::TransposeRequest* request,
                                                    v1::TransposeResponse* response) {
  return RunOnWorkers(context, *ctx_.workers, [this, request, response]() -> absl::Status {
    Operand input;
    if (absl::Status s = Resolve(ctx_, request->input(), "input", &input); !s.ok()) return s;
    return Respond(ctx_, ctx_.engine->Transpose(input.ref), response->mutable_result());
  });
}

grpc::ServerUnaryReactor* ComputeService::Matmul(grpc::CallbackServerContext* context,
                                                 const v1::MatmulRequest* request,
                                                 v1::MatmulResponse* response) {
  return RunOnWorkers(context, *ctx_.workers, [this, request, response]() -> absl::Status {
    Operand a, b, c;
    if (absl::Status s = Resolve(ctx_, request->a(), "a", &a); !s.ok()) return s;
    if (absl::Status s = Resolve(ctx_, request->b(), "b", &b); !s.ok()) return s;
    MatmulArgs args;
    args.a = a.ref;
    args.b = b.ref;
    args.alpha = request->alpha();
    args.beta = request->beta();
    if (!request->use_alpha_beta() && args.alpha == 0.0f && args.beta == 0.0f) {
      args.alpha = 1.0f;
      args.beta = 0.0f;
    }
    if (a.ref.cols != b.ref.rows) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "matmul: a is %d x %d and b is %d x %d; a.cols must equal b.rows", a.ref.rows,
          a.ref.cols, b.ref.rows, b.ref.cols));
    }
    if (request->has_c()) {
      absl::StatusOr<ArrayRef> ref = ArrayFromProto(request->c(), "c", &c.aligned_copy);
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
    return Respond(ctx_, ctx_.engine->Matmul(args), response->mutable_result());
  });
}

}  // namespace histd::server
