#include "tests/fuzz/fuzz_core.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/engine_factory.h"
#include "google/protobuf/stubs/logging.h"
#include "server/core/api_histograms.h"
#include "server/core/api_ingest.h"
#include "server/core/histogram_store.h"
#include "server/core/host_buffer_pool.h"
#include "server/core/ingest_pipeline.h"
#include "server/core/log.h"
#include "server/core/memory_budget.h"
#include "server/core/options.h"
#include "server/core/query_reader.h"
#include "server/core/snapshot.h"
#include "server/core/worker_pool.h"

namespace histd::fuzz {
namespace {

constexpr int kMaxPrinted = 20;

std::string Truncated(std::string s) {
  if (s.size() > 2000) s = s.substr(0, 2000) + "...";
  return s;
}

// In memory when /dev/shm exists: a snapshot per WriteSnapshot call costs no disk.
std::string SnapshotPath() {
  const char* dir = std::getenv("TMPDIR");
  std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                     : dir != nullptr && *dir != '\0' ? dir
                                                      : "/tmp";
  return base + "/histd-fuzz-" + std::to_string(getpid()) + ".snapshot";
}

void RemoveSnapshot() {
  const std::string path = SnapshotPath();
  unlink(path.c_str());
  unlink((path + ".tmp").c_str());
}

server::Options FuzzOptions() {
  server::Options o;
  o.engine.kind = EngineKind::kCpu;
  o.engine.cpu_threads = 1;
  o.limits.max_histograms = 16;
  o.limits.max_bins_per_histogram = uint64_t{1} << 12;
  o.limits.max_message_bytes = 16 << 10;
  o.limits.max_memory_bytes = uint64_t{8} << 20;
  o.limits.max_concurrent_queries = 4;
  o.pipeline.staging_buffers = 2;
  o.pipeline.staging_buffer_bytes = size_t{64} << 10;
  o.pipeline.stager_threads = 0;
  o.pipeline.acknowledger_threads = 0;
  o.pipeline.stream_read_ahead_bytes = size_t{64} << 10;
  o.snapshot.path = SnapshotPath();
  o.query.chunk_bytes = size_t{4} << 10;
  o.render.max_pixels = 64;
  o.rpc_workers = 1;
  return o;
}

}  // namespace

// What HistdServer::Start assembles, minus the transport (and the HTTP endpoint, metrics,
// access control: nothing a request's content reaches).
struct FuzzCore::Parts {
  server::Options options = FuzzOptions();
  std::unique_ptr<Engine> engine;
  std::unique_ptr<server::MemoryBudget> host_budget;
  server::MemoryCharge fixed_charge;
  std::unique_ptr<server::HistogramStore> store;
  std::unique_ptr<server::IngestPipeline> pipeline;
  std::unique_ptr<server::WorkerPool> workers;  // unused by the API calls; the context has one
  std::unique_ptr<server::HostBufferPool> query_buffers;
  absl::Mutex snapshot_mu;
};

FuzzCore& FuzzCore::Get() {
  static FuzzCore* core = new FuzzCore();  // never destroyed: the process just exits
  return *core;
}

namespace {
[[noreturn]] void CannotStart(const absl::Status& status) {
  std::fprintf(stderr, "histd-fuzz: cannot assemble the core: %s\n", status.ToString().c_str());
  std::abort();
}
}  // namespace

FuzzCore::FuzzCore() : parts_(std::make_unique<Parts>()) {
  // Requests that do not parse are the fuzzer's business, not log lines.
  google::protobuf::SetLogHandler(nullptr);
  server::SetLogLevel(server::LogLevel::kError);
  const char* abort_env = std::getenv("HISTD_FUZZ_ABORT_ON_FINDING");
  abort_on_finding_ = abort_env != nullptr && std::strcmp(abort_env, "1") == 0;
  RemoveSnapshot();
  std::atexit(RemoveSnapshot);

  Parts& p = *parts_;
  const server::Options& o = p.options;
  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeEngine(o.engine);
  if (!engine.ok()) CannotStart(engine.status());
  p.engine = *std::move(engine);
  p.host_budget = std::make_unique<server::MemoryBudget>("host memory", "--max_memory_bytes",
                                                         o.limits.max_memory_bytes);
  p.store = std::make_unique<server::HistogramStore>(*p.engine, o.limits.max_histograms,
                                                     o.limits.max_bins_per_histogram,
                                                     p.host_budget.get());
  absl::StatusOr<server::MemoryCharge> fixed = p.host_budget->Charge(
      uint64_t(o.pipeline.staging_buffers) * o.pipeline.staging_buffer_bytes +
          uint64_t(o.rpc_workers) * server::QueryBandBytes(o.query.chunk_bytes),
      "staging buffers and pooled query buffers");
  if (!fixed.ok()) CannotStart(fixed.status());
  p.fixed_charge = *std::move(fixed);
  absl::StatusOr<std::unique_ptr<server::IngestPipeline>> pipeline =
      server::IngestPipeline::Create(*p.engine, o.pipeline, nullptr);
  if (!pipeline.ok()) CannotStart(pipeline.status());
  p.pipeline = *std::move(pipeline);
  p.workers = std::make_unique<server::WorkerPool>(o.rpc_workers, "histd-fuzz");
  p.query_buffers = std::make_unique<server::HostBufferPool>(
      p.engine.get(), server::QueryBandBytes(o.query.chunk_bytes), o.rpc_workers);

  ctx_ = std::make_unique<server::ServiceContext>(p.options);
  server::ServiceContext& ctx = *ctx_;
  ctx.engine = p.engine.get();
  ctx.store = p.store.get();
  ctx.pipeline = p.pipeline.get();
  ctx.workers = p.workers.get();
  ctx.query_buffers = p.query_buffers.get();
  ctx.host_budget = p.host_budget.get();
  ctx.started = absl::Now();
  ctx.write_snapshot = [&p]() -> absl::StatusOr<server::SnapshotStats> {
    absl::MutexLock lock(&p.snapshot_mu);
    return server::WriteSnapshot(p.options.snapshot.path, *p.store, *p.engine);
  };
  fixed_bytes_ = p.host_budget->used();
  std::atexit([] { Get().PrintSummary(); });
}

void FuzzCore::Check(const char* method, const absl::Status& status,
                     const google::protobuf::Message& request) {
  auto it = calls_.begin();
  while (it != calls_.end() && it->first != method) ++it;
  if (it == calls_.end()) it = calls_.insert(calls_.end(), {method, std::vector<uint64_t>(17)});
  const int code = static_cast<int>(status.code());
  it->second[code >= 0 && code <= 16 ? code : 2] += 1;
  if (status.code() == absl::StatusCode::kInternal || status.code() == absl::StatusCode::kUnknown ||
      status.code() == absl::StatusCode::kDeadlineExceeded) {
    Finding(method, "code " + std::to_string(code) + ": " + std::string(status.message()), request);
  }
}

void FuzzCore::Finding(const char* method, const std::string& what,
                       const google::protobuf::Message& request) {
  ++findings_;
  if (findings_ <= kMaxPrinted) {
    std::fprintf(stderr, "histd-fuzz: FINDING %llu: %s: %s\n  request: %s\n",
                 static_cast<unsigned long long>(findings_), method, what.c_str(),
                 Truncated(request.ShortDebugString()).c_str());
  }
  if (abort_on_finding_) std::abort();
}

absl::Status FuzzCore::Create(const v1::CreateHistogramRequest& request) {
  v1::HistogramInfo info;
  const absl::Status status = server::api::CreateHistogram(*ctx_, request, &info);
  Check("CreateHistogram", status, request);
  if (status.ok()) created_.push_back(request.spec().name());
  return status;
}

void FuzzCore::Ingest(const v1::IngestRequest& request) {
  // Shared-memory registrations and messages belong to a stream and its peer (the gRPC
  // reactor's); with --allow_shm_ingest off, as here, the daemon refuses every one of them.
  if (request.has_shm() || request.has_register_shm() || !request.unregister_shm().empty()) {
    Check("Ingest shm (not run)", absl::OkStatus(), request);
    return;
  }
  if (absl::Status s = server::api::CheckIngestMessageSize(*ctx_, request.ByteSizeLong()); !s.ok()) {
    Check("Ingest message", s, request);
    return;
  }
  absl::StatusOr<server::IngestPipeline::Message> message = server::api::IngestMessageFor(
      *ctx_, request.histogram(), static_cast<int32_t>(request.type()),
      server::SamplePayload(request.samples()));
  if (!message.ok()) {
    Check("Ingest message", message.status(), request);
    return;
  }
  struct Outcome {
    absl::Mutex mu;
    int pending ABSL_GUARDED_BY(mu) = 2;  // on_staged and on_ack
    absl::Status status ABSL_GUARDED_BY(mu);
  };
  auto outcome = std::make_shared<Outcome>();
  ctx_->pipeline->Submit(
      *std::move(message),
      [outcome] {
        absl::MutexLock lock(&outcome->mu);
        --outcome->pending;
      },
      [outcome](absl::Status status, uint64_t /*samples*/) {
        absl::MutexLock lock(&outcome->mu);
        outcome->status = std::move(status);
        --outcome->pending;
      });
  absl::MutexLock lock(&outcome->mu);
  outcome->mu.Await(absl::Condition(
      +[](int* pending) { return *pending == 0; }, &outcome->pending));
  Check("Ingest message", outcome->status, request);
}

absl::StatusOr<v1::HistogramInfo> FuzzCore::Info(const std::string& name) {
  v1::GetHistogramInfoRequest request;
  request.set_name(name);
  v1::HistogramInfo info;
  if (absl::Status s = server::api::GetHistogramInfo(*ctx_, request, &info); !s.ok()) return s;
  return info;
}

absl::StatusOr<std::string> FuzzCore::Bins(const std::string& name) {
  v1::QueryRequest request;
  request.set_name(name);
  absl::StatusOr<std::unique_ptr<server::QueryReader>> reader =
      server::QueryReader::Open(*ctx_, request);
  if (!reader.ok()) return reader.status();
  std::string bins;
  v1::QueryChunk chunk;
  while (!(*reader)->done()) {
    if ((*reader)->needs_read()) {
      if (absl::Status s = (*reader)->ReadBand(); !s.ok()) return s;
    }
    (*reader)->NextChunk(&chunk);
    bins += chunk.data();
  }
  return bins;
}

void FuzzCore::EndInput() {
  for (const std::string& name : created_) {
    v1::DeleteHistogramRequest request;
    request.set_name(name);
    const absl::Status status = server::api::DeleteHistogram(*ctx_, request);
    if (!status.ok() && status.code() != absl::StatusCode::kNotFound) {
      StoppedServing("DeleteHistogram", status, 0);
    }
  }
  created_.clear();
  // Every 64 inputs: nothing is left, and the core answers.
  if (++inputs_ % 64 != 0) return;
  v1::ListHistogramsResponse response;
  const absl::Status status = server::api::ListHistograms(*ctx_, &response);
  if (!status.ok() || response.histograms_size() != 0) {
    StoppedServing("ListHistograms", status, response.histograms_size());
  }
  if (ctx_->queries.active() != 0) {
    std::fprintf(stderr, "histd-fuzz: %d query permits held after the input\n",
                 ctx_->queries.active());
    std::abort();
  }
  // A deleted histogram's memory returns when the last reference goes, which may be the
  // pipeline's, dropped on its own thread just after the acknowledgement: give it a second.
  const absl::Time deadline = absl::Now() + absl::Seconds(1);
  while (ctx_->host_budget->used() != fixed_bytes_ && absl::Now() < deadline) {
    absl::SleepFor(absl::Microseconds(100));
  }
  if (ctx_->host_budget->used() != fixed_bytes_) {
    std::fprintf(stderr, "histd-fuzz: the host budget holds %llu bytes, %llu when idle\n",
                 static_cast<unsigned long long>(ctx_->host_budget->used()),
                 static_cast<unsigned long long>(fixed_bytes_));
    std::abort();
  }
}

void FuzzCore::StoppedServing(const char* what, const absl::Status& status, int left) {
  std::fprintf(stderr, "histd-fuzz: the core stopped serving: %s gave %s, %d histograms left\n",
               what, status.ToString().c_str(), left);
  std::abort();
}

void FuzzCore::PrintSummary() const {
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
