#include "server/core/daemon_metrics.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "engine/multi_engine.h"

#ifndef HISTD_VERSION
#define HISTD_VERSION "unknown"
#endif

namespace histd::server {
namespace {

using metrics::FamilyInfo;
using metrics::Type;

// Calls that read a histogram and end (Watch streams last as long as their client).
constexpr const char* kQueryMethods[] = {"Query",  "Project", "Cdf", "Quantiles",
                                         "Render", "ReadAndResetHistogram"};
static_assert(std::size(kQueryMethods) == 6, "one DaemonMetrics::query_duration_ slot each");

// The engines that hold histograms, one per device, and their device names.
std::vector<const Engine*> Devices(const Engine& engine) {
  std::vector<const Engine*> members = MultiEngineMembers(engine);
  if (members.empty()) members.push_back(&engine);
  return members;
}

// Index into Devices() of the device holding `entry`.
size_t DeviceIndex(const Engine& engine, const HistogramEntry& entry) {
  return MultiEngineMembers(engine).empty() ? 0 : static_cast<size_t>(MemberOf(entry.storage()));
}

}  // namespace

const char* StatusCodeName(int code) {
  static constexpr const char* kNames[kStatusCodes] = {
      "OK",          "Canceled",         "Unknown",           "InvalidArgument",
      "DeadlineExceeded", "NotFound",    "AlreadyExists",     "PermissionDenied",
      "ResourceExhausted", "FailedPrecondition", "Aborted",   "OutOfRange",
      "Unimplemented", "Internal",       "Unavailable",       "DataLoss",
      "Unauthenticated"};
  return code >= 0 && code < kStatusCodes ? kNames[code] : "Unknown";
}

const std::vector<double>& LatencyBuckets() {
  static const std::vector<double> kBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                               0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                               1,      2.5,     5,      10};
  return kBuckets;
}

DaemonMetrics::DaemonMetrics()
    : ack_latency_(registry_.AddHistogram(
          {"histd_ack_latency_seconds",
           "Ingest messages from their receipt to their acknowledgement being written.",
           Type::kHistogram},
          {}, LatencyBuckets(), 1e-9)),
      batch_samples_(registry_.AddHistogram(
          {"histd_batch_samples", "Samples per batch handed to the engine.", Type::kHistogram},
          {},
          {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216,
           67108864, 268435456},
          1)) {
  const FamilyInfo messages{"histd_ingest_messages_total",
                            "Ingest messages acknowledged, by status code.", Type::kCounter};
  for (int code = 1; code < kStatusCodes; ++code) {
    ingest_rejected_[code] = &registry_.AddCounter(messages, {{"code", StatusCodeName(code)}});
  }
  const FamilyInfo queries{"histd_query_duration_seconds",
                           "Query calls from their start to their final status, by method.",
                           Type::kHistogram};
  for (size_t i = 0; i < query_duration_.size(); ++i) {
    query_duration_[i] =
        &registry_.AddHistogram(queries, {{"method", kQueryMethods[i]}}, LatencyBuckets(), 1e-9);
  }
}

metrics::Histogram* DaemonMetrics::query_duration(absl::string_view method) {
  for (size_t i = 0; i < query_duration_.size(); ++i) {
    if (method == kQueryMethods[i]) return query_duration_[i];
  }
  return nullptr;
}

void DaemonMetrics::Attach(const DaemonMetricSources& s) {
  metrics::Registry& r = registry_;
  const IngestPipeline* pipeline = s.pipeline;
  const Engine* engine = s.engine;
  const std::string engine_kind = engine->device_memory_bytes().empty() ? "cpu" : "cuda";
  r.AddGaugeFn({"histd_build_info", "Always 1; the labels name the version and the engine.",
                Type::kGauge},
               {{"version", HISTD_VERSION}, {"engine", engine_kind}}, [] { return 1.0; });

  r.AddCounterFn({"histd_ingest_samples_total",
                  "Samples of the ingest messages acknowledged OK.", Type::kCounter},
                 {}, [pipeline] { return pipeline->stats().samples; });
  r.AddCounterFn({"histd_ingest_bytes_total",
                  "Payload bytes of the ingest messages acknowledged OK.", Type::kCounter},
                 {}, [pipeline] { return pipeline->stats().bytes; });
  r.AddCounterFn({"histd_ingest_messages_total", "Ingest messages acknowledged, by status code.",
                  Type::kCounter},
                 {{"code", "OK"}}, [pipeline] { return pipeline->stats().messages; });
  r.AddCounterFn({"histd_ingest_samples_outside_total",
                  "Samples acknowledged OK that landed in no bin (coordinates below, above or "
                  "outside an axis, NaN).",
                  Type::kCounter},
                 {}, [pipeline] { return pipeline->stats().samples_outside; });
  r.AddCounterFn({"histd_batches_total", "Batches handed to the engine.", Type::kCounter}, {},
                 [pipeline] { return pipeline->stats().batches; });
  r.AddCounterFn({"histd_ingest_parked_messages_total",
                  "Ingest messages that waited for room in a staging buffer.", Type::kCounter},
                 {}, [pipeline] { return pipeline->stats().parked_messages; });
  r.AddCollector({"histd_ingest_parked_seconds_total",
                  "Seconds ingest messages waited for room in a staging buffer, summed.",
                  Type::kCounter},
                 [pipeline](metrics::Emitter& out) { out.Emit({}, pipeline->stats().park_seconds); });
  r.AddCollector({"histd_ingest_flush_wait_seconds_total",
                  "Seconds sealed staging buffers waited to be handed to the engine, summed.",
                  Type::kCounter},
                 [pipeline](metrics::Emitter& out) {
                   out.Emit({}, pipeline->stats().flush_wait_seconds);
                 });
  const FamilyInfo staging{"histd_staging_buffers", "Staging buffers, by state.", Type::kGauge};
  r.AddGaugeFn(staging, {{"state", "in_flight"}}, [pipeline] {
    return static_cast<double>(pipeline->stats().staging_buffers_in_flight);
  });
  r.AddGaugeFn(staging, {{"state", "free"}}, [pipeline] {
    const IngestStats stats = pipeline->stats();
    return static_cast<double>(stats.staging_buffers - stats.staging_buffers_in_flight);
  });
  // Staging and query buffers come from the engine: page-locked on the CUDA engine.
  const bool pinned = engine_kind == "cuda";
  const uint64_t staging_bytes =
      uint64_t(std::max(s.options->pipeline.staging_buffers, 0)) *
      s.options->pipeline.staging_buffer_bytes;
  const HostBufferPool* query_buffers = s.query_buffers;
  r.AddGaugeFn({"histd_pinned_bytes",
                "Page-locked host memory held for staging and query buffers (0 on the CPU "
                "engine).",
                Type::kGauge},
               {}, [pinned, staging_bytes, query_buffers] {
                 return pinned ? static_cast<double>(staging_bytes + query_buffers->held_bytes())
                               : 0.0;
               });

  const FamilyInfo budget{"histd_memory_budget_bytes",
                          "Memory budgets (--max_memory_bytes, --max_device_memory_bytes per "
                          "device): the limit, the bytes charged now and the most ever charged "
                          "(device: sums over the devices).",
                          Type::kGauge};
  const auto add_budget = [&](const char* kind, const auto* b) {
    if (b == nullptr) return;
    r.AddGaugeFn(budget, {{"kind", kind}, {"state", "limit"}},
                 [b] { return static_cast<double>(b->limit()); });
    r.AddGaugeFn(budget, {{"kind", kind}, {"state", "used"}},
                 [b] { return static_cast<double>(b->used()); });
    r.AddGaugeFn(budget, {{"kind", kind}, {"state", "peak"}},
                 [b] { return static_cast<double>(b->peak()); });
  };
  add_budget("host", s.host_budget);
  add_budget("device", s.device_budgets);
  if (const DeviceMemoryBudgets* budgets = s.device_budgets; budgets != nullptr) {
    // One budget per device, in the order of Devices().
    r.AddCollector({"histd_device_memory_budget_bytes",
                    "Each device's budget (--max_device_memory_bytes): the limit, the bytes "
                    "charged now and the most ever charged.",
                    Type::kGauge},
                   [engine, budgets](metrics::Emitter& out) {
                     const std::vector<const Engine*> devices = Devices(*engine);
                     for (size_t i = 0; i < budgets->count() && i < devices.size(); ++i) {
                       const MemoryBudget& b = budgets->device(i);
                       const std::string name = devices[i]->device();
                       out.EmitInteger({{"device", name}, {"state", "limit"}}, b.limit());
                       out.EmitInteger({{"device", name}, {"state", "used"}}, b.used());
                       out.EmitInteger({{"device", name}, {"state", "peak"}}, b.peak());
                     }
                   });
  }

  const HistogramStore* store = s.store;
  r.AddCollector({"histd_device_memory_used_bytes",
                  "Bytes of histogram bins on each device (host memory for the CPU engine).",
                  Type::kGauge},
                 [engine, store](metrics::Emitter& out) {
                   const std::vector<const Engine*> devices = Devices(*engine);
                   std::vector<uint64_t> bytes(devices.size(), 0);
                   for (const auto& entry : store->List()) {
                     bytes[DeviceIndex(*engine, *entry)] += entry->storage().bytes_used();
                   }
                   for (size_t d = 0; d < devices.size(); ++d) {
                     out.EmitInteger({{"device", devices[d]->device()}}, bytes[d]);
                   }
                 });
  r.AddCollector({"histd_histograms", "Histograms resident on each device.", Type::kGauge},
                 [engine, store](metrics::Emitter& out) {
                   const std::vector<const Engine*> devices = Devices(*engine);
                   std::vector<uint64_t> count(devices.size(), 0);
                   for (const auto& entry : store->List()) ++count[DeviceIndex(*engine, *entry)];
                   for (size_t d = 0; d < devices.size(); ++d) {
                     out.EmitInteger({{"device", devices[d]->device()}}, count[d]);
                   }
                 });
  r.AddCollector({"histd_gpu_kernel_seconds_total",
                  "Time in ingest kernels on each device (CPU apply time on the CPU engine).",
                  Type::kCounter},
                 [engine](metrics::Emitter& out) {
                   for (const Engine* d : Devices(*engine)) {
                     out.Emit({{"device", d->device()}}, d->stats().kernel_seconds);
                   }
                 });
  r.AddCollector({"histd_gpu_copy_seconds_total",
                  "Time in host-to-device copies of ingest on each device (0 on the CPU engine).",
                  Type::kCounter},
                 [engine](metrics::Emitter& out) {
                   for (const Engine* d : Devices(*engine)) {
                     out.Emit({{"device", d->device()}}, d->stats().copy_seconds);
                   }
                 });

  const SnapshotCounters* snapshots = s.snapshots;
  r.AddGaugeFn({"histd_snapshot_last_success_timestamp_seconds",
                "Unix time at which the last successful snapshot write ended (0: none yet).",
                Type::kGauge},
               {}, [snapshots] { return snapshots->last_success_unix_seconds.load(); });
  r.AddGaugeFn({"histd_snapshot_duration_seconds",
                "How long the last successful snapshot write took.", Type::kGauge},
               {}, [snapshots] { return snapshots->last_duration_seconds.load(); });
  r.AddCounterFn({"histd_snapshot_failures_total", "Snapshot writes that failed.",
                  Type::kCounter},
                 {}, [snapshots] { return snapshots->failures.load(); });
  const std::atomic<uint64_t>* streams = s.active_streams;
  r.AddGaugeFn({"histd_active_streams", "Ingest streams open now.", Type::kGauge}, {},
               [streams] { return static_cast<double>(streams->load()); });

  if (!s.options->http.per_histogram_metrics) return;
  r.AddCollector({"histd_histogram_samples",
                  "Samples applied to each histogram since its last reset (or restore).",
                  Type::kGauge},
                 [store](metrics::Emitter& out) {
                   for (const auto& entry : store->List()) {
                     out.EmitInteger({{"histogram", entry->name()}},
                                     entry->counters().samples_applied);
                   }
                 });
  Engine* summaries = s.engine_for_summaries;
  r.AddCollector({"histd_histogram_saturated_bins",
                  "Bins of each histogram at its cap (one engine call per histogram per "
                  "scrape).",
                  Type::kGauge},
                 [store, summaries](metrics::Emitter& out) {
                   for (const auto& entry : store->List()) {
                     absl::StatusOr<HistogramSummary> summary =
                         summaries->Summarize(entry->storage());
                     if (summary.ok()) {
                       out.EmitInteger({{"histogram", entry->name()}}, summary->saturated_bins);
                     }
                   }
                 });
}

}  // namespace histd::server
