// Fuzz target: the Query service (region, rebinned and transposed reads streamed in chunks,
// projections, CDFs, quantiles), with create and ingest to set histograms up, through gRPC
// into the CPU engine.
//
// Feeds: one serialized histd.fuzz.QueryProgram (histd_fuzz.proto), mutated field by field
// (proto_mutator.h); its calls run in order against the in-process daemon (fuzz_daemon.h).
// Asserts: every call is answered; an OK query stream is whole (each chunk's offset is the
// bytes before it, they add up to total_bytes = rows x cols x the element size of the
// first chunk's dtype); the daemon keeps serving. INTERNAL or UNKNOWN codes are findings
// (printed, counted; see fuzz_daemon.h).
#include <cstddef>
#include <cstdint>

#include "histd_fuzz.pb.h"
#include "tests/fuzz/fuzz_daemon.h"
#include "tests/fuzz/proto_mutator.h"

namespace histd::fuzz {
namespace {

void RunQuery(FuzzDaemon& d, const v1::QueryRequest& request) {
  grpc::ClientContext context;
  FuzzDaemon::Prepare(&context);
  std::unique_ptr<grpc::ClientReader<v1::QueryChunk>> reader = d.query().Query(&context, request);
  v1::QueryChunk chunk, first;
  uint64_t bytes = 0, chunks = 0;
  std::string broken;
  while (reader->Read(&chunk)) {
    if (chunks == 0) first = chunk;
    if (chunk.offset() != bytes && broken.empty()) {
      broken = "chunk " + std::to_string(chunks) + " at offset " + std::to_string(chunk.offset()) +
               " after " + std::to_string(bytes) + " bytes";
    }
    bytes += chunk.data().size();
    ++chunks;
  }
  const grpc::Status status = reader->Finish();
  d.Check("Query", status, request);
  if (!status.ok()) return;
  const uint64_t element = first.dtype() == v1::DTYPE_U8 ? 1 : first.dtype() == v1::DTYPE_U32 ? 4 : 0;
  const unsigned __int128 want = static_cast<unsigned __int128>(first.rows()) * first.cols() * element;
  if (broken.empty() && (element == 0 || want != first.total_bytes() || bytes != first.total_bytes())) {
    broken = "dtype " + std::to_string(first.dtype()) + ", " + std::to_string(first.rows()) + " x " +
             std::to_string(first.cols()) + ", total_bytes " + std::to_string(first.total_bytes()) +
             ", " + std::to_string(bytes) + " bytes in " + std::to_string(chunks) + " chunks";
  }
  if (!broken.empty()) d.Finding("Query", "broken stream: " + broken, request);
}

void Run(const QueryProgram& program) {
  FuzzDaemon& d = FuzzDaemon::Get();
  for (int i = 0; i < program.calls_size() && i < kMaxCallsPerInput; ++i) {
    const QueryCall& call = program.calls(i);
    grpc::ClientContext context;
    FuzzDaemon::Prepare(&context);
    switch (call.call_case()) {
      case QueryCall::kCreate:
        (void)d.Create(call.create());
        break;
      case QueryCall::kIngest:
        d.Ingest(call.ingest());
        break;
      case QueryCall::kQuery:
        RunQuery(d, call.query());
        break;
      case QueryCall::kProject: {
        v1::ProjectResponse response;
        d.Check("Project", d.query().Project(&context, call.project(), &response), call.project());
        break;
      }
      case QueryCall::kCdf: {
        v1::CdfResponse response;
        d.Check("Cdf", d.query().Cdf(&context, call.cdf(), &response), call.cdf());
        break;
      }
      case QueryCall::kQuantiles: {
        v1::QuantilesResponse response;
        d.Check("Quantiles", d.query().Quantiles(&context, call.quantiles(), &response),
                call.quantiles());
        break;
      }
      case QueryCall::CALL_NOT_SET:
        break;
    }
  }
  d.EndInput();
}

}  // namespace
}  // namespace histd::fuzz

HISTD_FUZZ_PROTO_MUTATOR(histd::fuzz::QueryProgram, {"a", "b", "h", "", "missing"})

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  histd::fuzz::QueryProgram program;
  if (!program.ParseFromArray(data, static_cast<int>(size))) return -1;  // not kept in the corpus
  histd::fuzz::Run(program);
  return 0;
}
