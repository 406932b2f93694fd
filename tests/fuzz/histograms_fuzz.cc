// Fuzz target: the Histograms service (create, delete, list, info, reset, merge, server
// stats, snapshot), with ingest to fill histograms, through gRPC into the CPU engine.
//
// Feeds: one serialized histd.fuzz.HistogramsProgram (histd_fuzz.proto), mutated field by
// field (proto_mutator.h); its calls run in order against the in-process daemon
// (fuzz_daemon.h: 16 histograms of at most 2^16 bins, 1 MiB messages).
// Asserts: every call is answered; an OK HistogramInfo describes the histogram the call
// named, with counts within its bins; the daemon keeps serving after the input (what it
// created is deleted). INTERNAL or UNKNOWN codes are findings (printed, counted; see
// fuzz_daemon.h).
#include <cstddef>
#include <cstdint>

#include "histd_fuzz.pb.h"
#include "tests/fuzz/fuzz_daemon.h"
#include "tests/fuzz/proto_mutator.h"

namespace histd::fuzz {
namespace {

// An OK HistogramInfo must describe the histogram it was asked about.
void CheckInfo(FuzzDaemon& d, const char* method, const std::string& name,
               const v1::HistogramInfo& info, const google::protobuf::Message& request) {
  const v1::HistogramSpec& spec = info.spec();
  const uint64_t bins = uint64_t{spec.rows()} * spec.cols();
  if (spec.name() != name || spec.cap() < 1 || spec.cap() > 255 ||
      info.saturated_bins() > bins || info.total_count() > bins * spec.cap()) {
    d.Finding(method, "inconsistent HistogramInfo: " + info.ShortDebugString(), request);
  }
}

void Run(const HistogramsProgram& program) {
  FuzzDaemon& d = FuzzDaemon::Get();
  for (int i = 0; i < program.calls_size() && i < kMaxCallsPerInput; ++i) {
    const HistogramsCall& call = program.calls(i);
    grpc::ClientContext context;
    FuzzDaemon::Prepare(&context);
    switch (call.call_case()) {
      case HistogramsCall::kCreate:
        (void)d.Create(call.create());
        break;
      case HistogramsCall::kIngest:
        d.Ingest(call.ingest());
        break;
      case HistogramsCall::kDelete: {
        v1::DeleteHistogramResponse response;
        d.Check("DeleteHistogram", d.histograms().DeleteHistogram(&context, call.delete_(), &response),
                call.delete_());
        break;
      }
      case HistogramsCall::kList: {
        v1::ListHistogramsResponse response;
        d.Check("ListHistograms", d.histograms().ListHistograms(&context, call.list(), &response),
                call.list());
        break;
      }
      case HistogramsCall::kInfo: {
        v1::HistogramInfo response;
        const grpc::Status s = d.histograms().GetHistogramInfo(&context, call.info(), &response);
        d.Check("GetHistogramInfo", s, call.info());
        if (s.ok()) CheckInfo(d, "GetHistogramInfo", call.info().name(), response, call.info());
        break;
      }
      case HistogramsCall::kReset: {
        v1::HistogramInfo response;
        const grpc::Status s = d.histograms().ResetHistogram(&context, call.reset(), &response);
        d.Check("ResetHistogram", s, call.reset());
        if (s.ok()) {
          CheckInfo(d, "ResetHistogram", call.reset().name(), response, call.reset());
          if (response.total_count() != 0) d.Finding("ResetHistogram", "bins left after reset", call.reset());
        }
        break;
      }
      case HistogramsCall::kMerge: {
        v1::HistogramInfo response;
        const grpc::Status s = d.histograms().MergeHistogram(&context, call.merge(), &response);
        d.Check("MergeHistogram", s, call.merge());
        if (s.ok()) CheckInfo(d, "MergeHistogram", call.merge().target(), response, call.merge());
        break;
      }
      case HistogramsCall::kStats: {
        v1::ServerStats response;
        d.Check("GetServerStats", d.histograms().GetServerStats(&context, call.stats(), &response),
                call.stats());
        break;
      }
      case HistogramsCall::kSnapshot: {
        v1::WriteSnapshotResponse response;
        d.Check("WriteSnapshot", d.histograms().WriteSnapshot(&context, call.snapshot(), &response),
                call.snapshot());
        break;
      }
      case HistogramsCall::CALL_NOT_SET:
        break;
    }
  }
  d.EndInput();
}

}  // namespace
}  // namespace histd::fuzz

HISTD_FUZZ_PROTO_MUTATOR(histd::fuzz::HistogramsProgram,
                         {"a", "b", "h", "", "h.1-x_", "a b", "..", std::string(128, 'n'),
                          std::string(129, 'n'), "\xc3\xa9"})

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  histd::fuzz::HistogramsProgram program;
  if (!program.ParseFromArray(data, static_cast<int>(size))) return -1;  // not kept in the corpus
  histd::fuzz::Run(program);
  return 0;
}
