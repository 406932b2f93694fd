// Fuzz target: the Histograms calls (create, delete, list, info, reset, merge, server stats,
// snapshot), with ingest to fill histograms, through the API's validation into the core with
// the CPU engine (server/core/api_histograms.h, api_ingest.h: what the gRPC service runs).
//
// Feeds: one serialized histd.fuzz.HistogramsProgram (histd_fuzz.proto), mutated field by
// field (proto_mutator.h); its calls run in order against the process's core
// (fuzz_core.h: 16 histograms of at most 2^12 bins, 16 KiB messages, 8 MiB of host memory).
// Asserts: every call is answered; an OK HistogramInfo describes the histogram the call
// named, with counts within its bins; the stats keep within the budget and the histogram
// limit; the core keeps serving after the input (what it created is deleted, its memory
// released). INTERNAL or UNKNOWN codes are findings (printed, counted; see fuzz_core.h).
#include <cstddef>
#include <cstdint>

#include "histd_fuzz.pb.h"
#include "server/core/api_histograms.h"
#include "tests/fuzz/fuzz_core.h"

namespace histd::fuzz {
namespace {

namespace api = server::api;

// An OK HistogramInfo must describe the histogram it was asked about.
void CheckInfo(FuzzCore& d, const char* method, const std::string& name,
               const v1::HistogramInfo& info, const google::protobuf::Message& request) {
  const v1::HistogramSpec& spec = info.spec();
  const uint64_t bins = uint64_t{spec.rows()} * spec.cols();
  if (spec.name() != name || spec.cap() < 1 || spec.cap() > 255 ||
      info.saturated_bins() > bins || info.total_count() > bins * spec.cap()) {
    d.Finding(method, "inconsistent HistogramInfo: " + info.ShortDebugString(), request);
  }
}

void CheckStats(FuzzCore& d, const v1::ServerStats& stats, const google::protobuf::Message& request) {
  const server::Options& o = *d.ctx().options;
  if (stats.memory_used_bytes() > stats.memory_budget_bytes() ||
      stats.memory_peak_bytes() > stats.memory_budget_bytes() ||
      stats.histograms() > o.limits.max_histograms) {
    d.Finding("GetServerStats", "over a limit: " + stats.ShortDebugString(), request);
  }
}

void Run(const HistogramsProgram& program) {
  FuzzCore& d = FuzzCore::Get();
  server::ServiceContext& ctx = d.ctx();
  for (int i = 0; i < program.calls_size() && i < kMaxCallsPerInput; ++i) {
    const HistogramsCall& call = program.calls(i);
    switch (call.call_case()) {
      case HistogramsCall::kCreate:
        (void)d.Create(call.create());
        break;
      case HistogramsCall::kIngest:
        d.Ingest(call.ingest());
        break;
      case HistogramsCall::kDelete:
        d.Check("DeleteHistogram", api::DeleteHistogram(ctx, call.delete_()), call.delete_());
        break;
      case HistogramsCall::kList: {
        v1::ListHistogramsResponse response;
        d.Check("ListHistograms", api::ListHistograms(ctx, &response), call.list());
        break;
      }
      case HistogramsCall::kInfo: {
        v1::HistogramInfo response;
        const absl::Status s = api::GetHistogramInfo(ctx, call.info(), &response);
        d.Check("GetHistogramInfo", s, call.info());
        if (s.ok()) CheckInfo(d, "GetHistogramInfo", call.info().name(), response, call.info());
        break;
      }
      case HistogramsCall::kReset: {
        v1::HistogramInfo response;
        const absl::Status s = api::ResetHistogram(ctx, call.reset(), &response);
        d.Check("ResetHistogram", s, call.reset());
        if (s.ok()) {
          CheckInfo(d, "ResetHistogram", call.reset().name(), response, call.reset());
          if (response.total_count() != 0) d.Finding("ResetHistogram", "bins left after reset", call.reset());
        }
        break;
      }
      case HistogramsCall::kMerge: {
        v1::HistogramInfo response;
        const absl::Status s = api::MergeHistogram(ctx, call.merge(), &response);
        d.Check("MergeHistogram", s, call.merge());
        if (s.ok()) CheckInfo(d, "MergeHistogram", call.merge().target(), response, call.merge());
        break;
      }
      case HistogramsCall::kStats: {
        v1::ServerStats response;
        api::GetServerStats(ctx, &response);
        CheckStats(d, response, call.stats());
        break;
      }
      case HistogramsCall::kSnapshot: {
        v1::WriteSnapshotResponse response;
        d.Check("WriteSnapshot", api::WriteSnapshot(ctx, &response), call.snapshot());
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

HISTD_FUZZ_PROGRAM_TARGET(histd::fuzz::HistogramsProgram,
                          {"a", "b", "h", "", "h.1-x_", "a b", "..", std::string(128, 'n'),
                           std::string(129, 'n'), "\xc3\xa9"})
