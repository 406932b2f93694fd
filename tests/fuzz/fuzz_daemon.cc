#include "tests/fuzz/fuzz_daemon.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "google/protobuf/stubs/logging.h"
#include "server/core/log.h"
#include "server/core/options.h"
#include "server/grpc/server.h"

namespace histd::fuzz {
namespace {

constexpr int kMaxPrinted = 20;
constexpr auto kDeadline = std::chrono::seconds(20);

std::string Truncated(std::string s) {
  if (s.size() > 2000) s = s.substr(0, 2000) + "...";
  return s;
}

std::string SnapshotPath() {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/histd-fuzz-" +
         std::to_string(getpid()) + ".snapshot";
}

void RemoveSnapshot() {
  const std::string path = SnapshotPath();
  unlink(path.c_str());
  unlink((path + ".tmp").c_str());
}

}  // namespace

FuzzDaemon& FuzzDaemon::Get() {
  static FuzzDaemon* daemon = new FuzzDaemon();  // never destroyed: the process just exits
  return *daemon;
}

FuzzDaemon::FuzzDaemon() {
  // Requests that do not parse are the fuzzer's business, not log lines.
  google::protobuf::SetLogHandler(nullptr);
  server::SetLogLevel(server::LogLevel::kError);
  const char* abort_env = std::getenv("HISTD_FUZZ_ABORT_ON_FINDING");
  abort_on_finding_ = abort_env != nullptr && std::strcmp(abort_env, "1") == 0;

  server::Options o;
  o.address = "127.0.0.1:0";
  o.engine.kind = EngineKind::kCpu;
  o.engine.cpu_threads = 2;
  o.limits.max_histograms = 16;
  o.limits.max_bins_per_histogram = uint64_t{1} << 16;
  o.limits.max_message_bytes = 1 << 20;
  o.limits.max_concurrent_streams = 4;
  o.pipeline.staging_buffers = 4;
  o.pipeline.staging_buffer_bytes = size_t{1} << 20;
  o.pipeline.stager_threads = 1;
  o.pipeline.acknowledger_threads = 1;
  o.pipeline.stream_read_ahead_bytes = size_t{1} << 20;
  o.snapshot.path = SnapshotPath();
  RemoveSnapshot();
  std::atexit(RemoveSnapshot);
  o.query.chunk_bytes = size_t{64} << 10;
  o.rpc_workers = 2;
  o.shutdown_grace = absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<server::HistdServer>> server = server::HistdServer::Start(o);
  if (!server.ok()) {
    std::fprintf(stderr, "histd-fuzz: cannot start the daemon: %s\n", server.status().ToString().c_str());
    std::abort();
  }
  static server::HistdServer* const running = server->release();  // serves until exit
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  channel_ = grpc::CreateCustomChannel(running->address(), grpc::InsecureChannelCredentials(), args);
  histograms_ = v1::Histograms::NewStub(channel_);
  query_ = v1::Query::NewStub(channel_);
  compute_ = v1::Compute::NewStub(channel_);
  std::atexit([] { Get().PrintSummary(); });
}

void FuzzDaemon::Prepare(grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + kDeadline);
}

void FuzzDaemon::Check(const char* method, const grpc::Status& status,
                       const google::protobuf::Message& request) {
  auto it = calls_.begin();
  while (it != calls_.end() && it->first != method) ++it;
  if (it == calls_.end()) it = calls_.insert(calls_.end(), {method, std::vector<uint64_t>(17)});
  const int code = static_cast<int>(status.error_code());
  it->second[code >= 0 && code <= 16 ? code : 2] += 1;
  if (status.error_code() == grpc::StatusCode::INTERNAL ||
      status.error_code() == grpc::StatusCode::UNKNOWN ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    Finding(method, "code " + std::to_string(code) + ": " + status.error_message(), request);
  }
}

void FuzzDaemon::Finding(const char* method, const std::string& what,
                         const google::protobuf::Message& request) {
  ++findings_;
  if (findings_ <= kMaxPrinted) {
    std::fprintf(stderr, "histd-fuzz: FINDING %llu: %s: %s\n  request: %s\n",
                 static_cast<unsigned long long>(findings_), method, what.c_str(),
                 Truncated(request.ShortDebugString()).c_str());
  }
  if (abort_on_finding_) std::abort();
}

grpc::Status FuzzDaemon::Create(const v1::CreateHistogramRequest& request) {
  grpc::ClientContext context;
  Prepare(&context);
  v1::HistogramInfo info;
  const grpc::Status status = histograms_->CreateHistogram(&context, request, &info);
  Check("CreateHistogram", status, request);
  if (status.ok()) created_.push_back(request.spec().name());
  return status;
}

void FuzzDaemon::Ingest(const v1::IngestRequest& request) {
  if (ingest_ == nullptr) {
    ingest_context_ = std::make_unique<grpc::ClientContext>();  // no deadline: it lives on
    ingest_ = v1::Ingest::NewStub(channel_)->Ingest(ingest_context_.get());
  }
  v1::IngestResponse response;
  if (!ingest_->Write(request) || !ingest_->Read(&response)) {
    // The stream ended: its status says why; the next message opens a new one.
    ingest_->WritesDone();
    const grpc::Status status = ingest_->Finish();
    Check("Ingest stream", status, request);
    if (status.ok()) Finding("Ingest stream", "ended OK before the producer half-closed", request);
    ingest_.reset();
    ingest_context_.reset();
    return;
  }
  const grpc::Status status(static_cast<grpc::StatusCode>(response.code()), response.message());
  Check("Ingest message", status, request);
  if (response.sequence() != request.sequence()) {
    Finding("Ingest message", "acknowledged sequence " + std::to_string(response.sequence()),
            request);
  }
}

void FuzzDaemon::EndInput() {
  for (const std::string& name : created_) {
    grpc::ClientContext context;
    Prepare(&context);
    v1::DeleteHistogramRequest request;
    request.set_name(name);
    v1::DeleteHistogramResponse response;
    const grpc::Status status = histograms_->DeleteHistogram(&context, request, &response);
    if (!status.ok() && status.error_code() != grpc::StatusCode::NOT_FOUND) {
      StoppedServing("DeleteHistogram", status, 0);
    }
  }
  created_.clear();
  // Every 64 inputs: nothing is left, and the daemon answers.
  if (++inputs_ % 64 != 0) return;
  grpc::ClientContext context;
  Prepare(&context);
  v1::ListHistogramsRequest request;
  v1::ListHistogramsResponse response;
  const grpc::Status status = histograms_->ListHistograms(&context, request, &response);
  if (!status.ok() || response.histograms_size() != 0) {
    StoppedServing("ListHistograms", status, response.histograms_size());
  }
}

void FuzzDaemon::StoppedServing(const char* method, const grpc::Status& status, int left) {
  std::fprintf(stderr, "histd-fuzz: the daemon stopped serving: %s gave %d (%s), %d histograms left\n",
               method, static_cast<int>(status.error_code()), status.error_message().c_str(), left);
  std::abort();
}

void FuzzDaemon::PrintSummary() const {
  std::fprintf(stderr, "histd-fuzz: %llu findings; codes per method (code:count):\n",
               static_cast<unsigned long long>(findings_));
  for (const auto& [method, codes] : calls_) {
    std::string line;
    for (size_t c = 0; c < codes.size(); ++c) {
      if (codes[c] > 0) line += " " + std::to_string(c) + ":" + std::to_string(codes[c]);
    }
    std::fprintf(stderr, "  %-18s%s\n", method.c_str(), line.c_str());
  }
}

}  // namespace histd::fuzz
