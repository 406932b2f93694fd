// FuzzCore: the daemon's core the API fuzz targets call, without its transport, and what they
// share.
//
// One core per fuzzing process, assembled at first use as HistdServer assembles it (CPU
// engine, host budget, store, ingest pipeline, query band buffers, ServiceContext) with small
// limits: 16 histograms of at most 2^12 bins, 16 KiB messages, 8 MiB of host memory, two
// 64 KiB staging buffers, 4 concurrent queries. Every bound on what an input can make the core do comes from these
// limits, as it would for a client of a daemon started with them. It is never shut down
// (libFuzzer exits without unwinding).
// Calls go to the transport-free API (server/core/api_*.h, query_reader.h), the functions the
// gRPC services run, on the fuzzing thread.
//
// Per input: Create and Ingest go through here so that EndInput can undo them (EndInput
// deletes every histogram the input created). Ingest submits one message as the ingest
// reactor does (api::CheckIngestMessageSize, api::IngestMessageFor, IngestPipeline::Submit)
// and waits until it is acknowledged and staged; shared-memory registrations and messages,
// which belong to a stream and its peer, are counted and not run.
// EndInput asserts that the core still serves: the deletes answer OK or NOT_FOUND, every 64
// inputs ListHistograms answers OK and lists nothing, no query permit is held, and the host
// budget holds nothing but the fixed charges within a second; otherwise it aborts. Check counts every call's code by method; INTERNAL,
// UNKNOWN and DEADLINE_EXCEEDED (nothing sets a deadline here: only a bug gives it), and any
// broken response invariant reported through Finding, are findings: counted and printed with
// the request (the first 20), and a summary of codes per method is printed at exit. They abort
// (so libFuzzer keeps the input as a crash) only with HISTD_FUZZ_ABORT_ON_FINDING=1.
// Thread safety: one input at a time (libFuzzer calls the target from one thread).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "histd/v1/histograms.pb.h"
#include "histd/v1/ingest.pb.h"
#include "server/core/service_context.h"
#include "tests/fuzz/proto_mutator.h"

namespace histd::fuzz {

// Calls of one input beyond this many are ignored (a long program mostly repeats itself).
inline constexpr int kMaxCallsPerInput = 24;

class FuzzCore {
 public:
  static FuzzCore& Get();

  server::ServiceContext& ctx() { return *ctx_; }

  // Records one call's outcome.
  void Check(const char* method, const absl::Status& status, const google::protobuf::Message& request);
  // Records a finding that is not a status code (e.g. an OK response that breaks its contract).
  void Finding(const char* method, const std::string& what, const google::protobuf::Message& request);

  absl::Status Create(const v1::CreateHistogramRequest& request);
  // Submits one message as the ingest reactor does and waits for its acknowledgement, whose
  // code is checked like a call's.
  void Ingest(const v1::IngestRequest& request);
  // References for the targets' checks, not counted as calls: the histogram's info
  // (GetHistogramInfo) and its bins as stored (a whole-histogram Query: rows * cols bytes).
  absl::StatusOr<v1::HistogramInfo> Info(const std::string& name);
  absl::StatusOr<std::string> Bins(const std::string& name);
  void EndInput();

 private:
  struct Parts;
  FuzzCore();
  void PrintSummary() const;
  [[noreturn]] static void StoppedServing(const char* what, const absl::Status& status, int left);

  std::unique_ptr<Parts> parts_;  // engine, store, pipeline, ... (fuzz_core.cc)
  std::unique_ptr<server::ServiceContext> ctx_;
  uint64_t fixed_bytes_ = 0;  // the host budget's use with no histogram and no call
  std::vector<std::string> created_;
  uint64_t inputs_ = 0;
  // calls_[method][code]
  std::vector<std::pair<std::string, std::vector<uint64_t>>> calls_;
  uint64_t findings_ = 0;
  bool abort_on_finding_ = false;
};

}  // namespace histd::fuzz

// HISTD_FUZZ_PROGRAM_TARGET(Type, {words...}) defines the libFuzzer entry points of a target
// whose input is one serialized program of type Type: the structure-aware mutator
// (proto_mutator.h, with the words as its dictionary) and LLVMFuzzerTestOneInput, which runs
// the program with histd::fuzz::Run(const Type&) (the target defines it before the macro).
// An input that does not parse is rejected (-1: libFuzzer keeps it out of the corpus).
#define HISTD_FUZZ_PROGRAM_TARGET(Type, ...)                                \
  HISTD_FUZZ_PROTO_MUTATOR(Type, __VA_ARGS__)                               \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    Type program;                                                           \
    if (!program.ParseFromArray(data, static_cast<int>(size))) return -1;   \
    ::histd::fuzz::Run(program);                                            \
    return 0;                                                               \
  }
