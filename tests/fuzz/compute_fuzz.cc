// Fuzz target: the Compute calls (reduce, scan, transpose, matmul on inline arrays or
// resident histograms), with create and ingest to set histograms up, through the API's
// validation into the core with the CPU engine (server/core/api_compute.h: what the gRPC
// service runs).
//
// Feeds: one serialized histd.fuzz.ComputeProgram (histd_fuzz.proto), mutated field by
// field (proto_mutator.h); a call with fit_data has its inline arrays' data sized to
// rows x cols x the element size (up to 16 KiB). The calls run in order against the
// process's core (fuzz_core.h: 16 KiB messages, histograms of at most 2^12 bins).
// Asserts: every call is answered; an OK result is a well-formed array (a known dtype and
// data.size() = rows x cols x its element size); the core keeps serving. INTERNAL or
// UNKNOWN codes are findings (printed, counted; see fuzz_core.h).
#include <cstddef>
#include <cstdint>

#include "client/dtype.h"
#include "histd_fuzz.pb.h"
#include "server/core/api_compute.h"
#include "tests/fuzz/fuzz_core.h"

namespace histd::fuzz {
namespace {

constexpr uint64_t kMaxFitBytes = uint64_t{16} << 10;  // the core's message limit

// data.size() = rows * cols * element size, when that is known and at most kMaxFitBytes;
// the bytes repeat the data given (zeros when there is none).
void Fit(v1::Array* a) {
  absl::StatusOr<uint64_t> bytes = client::ArrayByteLength(a->dtype(), a->rows(), a->cols());
  if (!bytes.ok() || *bytes > kMaxFitBytes) return;
  std::string data = a->data();
  if (data.empty()) data.assign(1, '\0');
  std::string fitted(*bytes, '\0');
  for (size_t i = 0; i < fitted.size(); ++i) fitted[i] = data[i % data.size()];
  a->set_data(std::move(fitted));
}
void Fit(v1::ArrayInput* input) {
  if (input->has_inline_()) Fit(input->mutable_inline_());
}

void CheckResult(FuzzCore& d, const char* method, const absl::Status& status,
                 const v1::Array& result, const google::protobuf::Message& request) {
  d.Check(method, status, request);
  if (!status.ok()) return;
  absl::StatusOr<uint64_t> bytes = client::ArrayByteLength(result.dtype(), result.rows(), result.cols());
  if (!bytes.ok() || *bytes != result.data().size()) {
    d.Finding(method, "malformed result: dtype " + std::to_string(result.dtype()) + ", " +
                          std::to_string(result.rows()) + " x " + std::to_string(result.cols()) +
                          ", " + std::to_string(result.data().size()) + " bytes",
              request);
  }
}

void Run(ComputeProgram& program) {
  FuzzCore& d = FuzzCore::Get();
  server::ServiceContext& ctx = d.ctx();
  for (int i = 0; i < program.calls_size() && i < kMaxCallsPerInput; ++i) {
    ComputeCall& call = *program.mutable_calls(i);
    if (call.fit_data()) {
      switch (call.call_case()) {
        case ComputeCall::kReduce: Fit(call.mutable_reduce()->mutable_input()); break;
        case ComputeCall::kScan: Fit(call.mutable_scan()->mutable_input()); break;
        case ComputeCall::kTranspose: Fit(call.mutable_transpose()->mutable_input()); break;
        case ComputeCall::kMatmul:
          Fit(call.mutable_matmul()->mutable_a());
          Fit(call.mutable_matmul()->mutable_b());
          if (call.matmul().has_c()) Fit(call.mutable_matmul()->mutable_c());
          break;
        default: break;
      }
    }
    switch (call.call_case()) {
      case ComputeCall::kCreate:
        (void)d.Create(call.create());
        break;
      case ComputeCall::kIngest:
        d.Ingest(call.ingest());
        break;
      case ComputeCall::kReduce: {
        v1::ReduceResponse response;
        CheckResult(d, "Reduce", server::api::Reduce(ctx, call.reduce(), &response),
                    response.result(), call.reduce());
        break;
      }
      case ComputeCall::kScan: {
        v1::ScanResponse response;
        CheckResult(d, "Scan", server::api::Scan(ctx, call.scan(), &response),
                    response.result(), call.scan());
        break;
      }
      case ComputeCall::kTranspose: {
        v1::TransposeResponse response;
        CheckResult(d, "Transpose", server::api::Transpose(ctx, call.transpose(), &response),
                    response.result(), call.transpose());
        break;
      }
      case ComputeCall::kMatmul: {
        v1::MatmulResponse response;
        CheckResult(d, "Matmul", server::api::Matmul(ctx, call.matmul(), &response),
                    response.result(), call.matmul());
        break;
      }
      case ComputeCall::CALL_NOT_SET:
        break;
    }
  }
  d.EndInput();
}

}  // namespace
}  // namespace histd::fuzz

HISTD_FUZZ_PROGRAM_TARGET(histd::fuzz::ComputeProgram, {"a", "b", "h", "", "missing"})
