// FuzzDaemon: the in-process daemon the RPC fuzz targets talk to, and what they share.
//
// One HistdServer per fuzzing process, started at first use on 127.0.0.1:0 with the CPU
// engine and small limits (16 histograms of at most 2^16 bins, 1 MiB messages, 4 MiB of
// staging), so that no input can make the daemon take more than a few MiB; it is never
// shut down (libFuzzer exits without unwinding). Calls go through the generated stubs over
// a real channel, each with a 20 s deadline.
//
// Per input: Create and Ingest go through here so that EndInput can undo them (EndInput
// deletes every histogram the input created; one ingest stream serves every input and is
// reopened when the daemon ends it). EndInput asserts that the daemon still serves: the
// deletes answer OK or NOT_FOUND, and every 64 inputs ListHistograms answers OK and lists
// nothing; otherwise it aborts. Check counts every call's code by method; INTERNAL,
// UNKNOWN and DEADLINE_EXCEEDED (20 s on these tiny inputs is a hang), and any broken
// response invariant reported through Finding, are findings: counted and printed with the
// request (the first 20), and a summary of codes per method is printed at exit. They abort
// (so libFuzzer keeps the input as a crash) only with HISTD_FUZZ_ABORT_ON_FINDING=1.
// Thread safety: one input at a time (libFuzzer calls the target from one thread).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "google/protobuf/message.h"
#include "histd/v1/compute.grpc.pb.h"
#include "histd/v1/histograms.grpc.pb.h"
#include "histd/v1/ingest.grpc.pb.h"
#include "histd/v1/query.grpc.pb.h"

namespace histd::fuzz {

// Calls of one input beyond this many are ignored (each is a round trip, and a long
// program mostly repeats itself).
inline constexpr int kMaxCallsPerInput = 24;

class FuzzDaemon {
 public:
  static FuzzDaemon& Get();

  v1::Histograms::Stub& histograms() { return *histograms_; }
  v1::Query::Stub& query() { return *query_; }
  v1::Compute::Stub& compute() { return *compute_; }
  // A context with the per-call deadline set.
  static void Prepare(grpc::ClientContext* context);

  // Records one call's outcome.
  void Check(const char* method, const grpc::Status& status, const google::protobuf::Message& request);
  // Records a finding that is not a status code (e.g. an OK response that breaks its contract).
  void Finding(const char* method, const std::string& what, const google::protobuf::Message& request);

  grpc::Status Create(const v1::CreateHistogramRequest& request);
  // Sends one message on this input's ingest stream and waits for its acknowledgement; the
  // acknowledgement's code is checked like a call's.
  void Ingest(const v1::IngestRequest& request);
  void EndInput();

 private:
  FuzzDaemon();
  void PrintSummary() const;
  [[noreturn]] static void StoppedServing(const char* method, const grpc::Status& status, int left);

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Histograms::Stub> histograms_;
  std::unique_ptr<v1::Query::Stub> query_;
  std::unique_ptr<v1::Compute::Stub> compute_;
  std::vector<std::string> created_;
  std::unique_ptr<grpc::ClientContext> ingest_context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::IngestRequest, v1::IngestResponse>> ingest_;
  uint64_t inputs_ = 0;
  // calls_[method][code]
  std::vector<std::pair<std::string, std::vector<uint64_t>>> calls_;
  uint64_t findings_ = 0;
  bool abort_on_finding_ = false;
};

}  // namespace histd::fuzz
