#include "server/core/api_histograms.h"

#include <utility>

#include "absl/time/clock.h"
#include "server/core/log.h"
#include "server/core/proto_convert.h"

namespace histd::server::api {
namespace {

// Spec, counters, bin summary and memory of one histogram (one engine call).
absl::Status FillInfo(Engine& engine, const HistogramEntry& entry, v1::HistogramInfo* info) {
  absl::StatusOr<HistogramSummary> summary = engine.Summarize(entry.storage());
  if (!summary.ok()) return summary.status();
  EntryToInfo(entry, engine.device(), info);
  info->set_saturated_bins(summary->saturated_bins);
  info->set_total_count(summary->total_count);
  return absl::OkStatus();
}

}  // namespace

absl::Status CreateHistogram(ServiceContext& ctx, const v1::CreateHistogramRequest& request,
                             v1::HistogramInfo* response) {
  absl::StatusOr<HistogramSpec> spec = SpecFromProto(request.spec());
  if (!spec.ok()) return spec.status();
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Create(*spec);
  if (!entry.ok()) {
    LogWarning("histogram_create_refused",
               {{"name", spec->name}, {"status", entry.status().ToString()}});
    return entry.status();
  }
  LogInfo("histogram_created", {{"name", spec->name},
                                {"rows", spec->shape.rows},
                                {"cols", spec->shape.cols},
                                {"cap", spec->shape.cap},
                                {"axes", spec->has_both_axes()},
                                {"bytes", (*entry)->storage().bytes_used()},
                                {"device", ctx.engine->device()}});
  return FillInfo(*ctx.engine, **entry, response);
}

absl::Status DeleteHistogram(ServiceContext& ctx, const v1::DeleteHistogramRequest& request) {
  absl::Status status = ctx.store->Delete(request.name());
  if (status.ok()) LogInfo("histogram_deleted", {{"name", request.name()}});
  return status;
}

absl::Status ListHistograms(ServiceContext& ctx, v1::ListHistogramsResponse* response) {
  for (const auto& entry : ctx.store->List()) {
    if (absl::Status s = FillInfo(*ctx.engine, *entry, response->add_histograms()); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status GetHistogramInfo(ServiceContext& ctx, const v1::GetHistogramInfoRequest& request,
                              v1::HistogramInfo* response) {
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Find(request.name());
  if (!entry.ok()) return entry.status();
  return FillInfo(*ctx.engine, **entry, response);
}

absl::Status ResetHistogram(ServiceContext& ctx, const v1::ResetHistogramRequest& request,
                            v1::HistogramInfo* response) {
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Find(request.name());
  if (!entry.ok()) return entry.status();
  // Bins and counters together, as one cycle's end (HistogramEntry, "Cycles").
  if (absl::Status s = (*entry)->Reset(*ctx.engine); !s.ok()) return s;
  LogInfo("histogram_reset", {{"name", request.name()}});
  return FillInfo(*ctx.engine, **entry, response);
}

absl::Status MergeHistogram(ServiceContext& ctx, const v1::MergeHistogramRequest& request,
                            v1::HistogramInfo* response) {
  absl::StatusOr<std::shared_ptr<HistogramEntry>> target =
      ctx.store->Merge(request.source(), request.target());
  if (!target.ok()) return target.status();
  return FillInfo(*ctx.engine, **target, response);
}

absl::Status WriteSnapshot(ServiceContext& ctx, v1::WriteSnapshotResponse* response) {
  absl::StatusOr<SnapshotStats> written = ctx.write_snapshot();
  if (!written.ok()) return written.status();
  response->set_path(written->path);
  response->set_histograms(written->histograms);
  response->set_bin_bytes(written->bin_bytes);
  response->set_seconds(written->seconds);
  return absl::OkStatus();
}

void GetServerStats(const ServiceContext& ctx, v1::ServerStats* response) {
uint64_t bytes_used = 0;
const auto entries = ctx.store->List();
for (const auto& entry : entries) bytes_used += entry->storage().bytes_used();
const IngestStats ingest = ctx.pipeline->stats();
response->set_engine(ctx.engine->name());
response->set_histograms(entries.size());
response->set_bytes_used(bytes_used);
response->set_batches(ingest.batches);
response->set_messages(ingest.messages);
response->set_samples(ingest.samples);
response->set_bytes(ingest.bytes);
response->set_active_streams(ctx.active_streams.load());
response->set_staging_buffers(ingest.staging_buffers);
response->set_staging_buffers_in_flight(ingest.staging_buffers_in_flight);
response->set_queued_messages(ingest.queued_messages);
response->set_unacknowledged_messages(ingest.unacknowledged_messages);
const EngineStats engine = ctx.engine->stats();
response->set_copy_seconds(engine.copy_seconds);
response->set_kernel_seconds(engine.kernel_seconds);
response->set_apply_seconds(ingest.apply_seconds);
response->set_enqueue_seconds(ingest.enqueue_seconds);
response->set_acknowledge_seconds(ingest.acknowledge_seconds);
response->set_stage_seconds(ingest.stage_seconds);
response->set_stage_wait_seconds(ingest.stage_wait_seconds);
const QueryStatsSnapshot queries = ctx.query_stats.Snapshot();
response->set_queries(queries.queries);
response->set_query_seconds(queries.seconds);
response->set_query_worker_wait_seconds(queries.worker_wait_seconds);
response->set_query_read_seconds(queries.read_seconds);
response->set_query_write_seconds(queries.write_seconds);
response->set_uptime_seconds(absl::ToDoubleSeconds(absl::Now() - ctx.started));
response->set_memory_budget_bytes(ctx.host_budget->limit());
response->set_memory_used_bytes(ctx.host_budget->used());
response->set_memory_peak_bytes(ctx.host_budget->peak());
response->set_memory_refusals(ctx.host_budget->refusals());
if (ctx.device_budgets != nullptr) {  // sums over the devices
  response->set_device_memory_budget_bytes(ctx.device_budgets->limit());
  response->set_device_memory_used_bytes(ctx.device_budgets->used());
  response->set_device_memory_refusals(ctx.device_budgets->refusals());
}
response->set_active_queries(ctx.queries.active());
response->set_query_refusals(ctx.queries.refusals());
response->set_snapshot_failures(ctx.snapshots.failures.load());
if (ctx.access != nullptr) {
  const RefusalCounts refusals = ctx.access->refusals();
  response->set_auth_unauthenticated(refusals.unauthenticated);
  response->set_auth_permission_denied(refusals.permission_denied);
}
}

}  // namespace histd::server::api
