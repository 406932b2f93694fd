#include "server/grpc/histograms_service.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/core/log.h"
#include "server/grpc/proto_convert.h"
#include "server/grpc/read_reset_stream.h"
#include "server/grpc/unary_reactor.h"
#include "server/grpc/authorize_call.h"

namespace histd::server {
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

grpc::ServerUnaryReactor* HistogramsService::CreateHistogram(
    grpc::CallbackServerContext* context, const v1::CreateHistogramRequest* request,
    v1::HistogramInfo* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/CreateHistogram"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, request, response]() -> absl::Status {
    absl::StatusOr<HistogramSpec> spec = SpecFromProto(request->spec());
    if (!spec.ok()) return spec.status();
    absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx_.store->Create(*spec);
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
                                  {"device", ctx_.engine->device()}});
    return FillInfo(*ctx_.engine, **entry, response);
  });
}

grpc::ServerUnaryReactor* HistogramsService::DeleteHistogram(
    grpc::CallbackServerContext* context, const v1::DeleteHistogramRequest* request,
    v1::DeleteHistogramResponse* /*response*/) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/DeleteHistogram"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, request]() -> absl::Status {
    absl::Status status = ctx_.store->Delete(request->name());
    if (status.ok()) LogInfo("histogram_deleted", {{"name", request->name()}});
    return status;
  });
}

grpc::ServerUnaryReactor* HistogramsService::ListHistograms(
    grpc::CallbackServerContext* context, const v1::ListHistogramsRequest* /*request*/,
    v1::ListHistogramsResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/ListHistograms"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, response]() -> absl::Status {
    for (const auto& entry : ctx_.store->List()) {
      if (absl::Status s = FillInfo(*ctx_.engine, *entry, response->add_histograms()); !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* HistogramsService::GetHistogramInfo(
    grpc::CallbackServerContext* context, const v1::GetHistogramInfoRequest* request,
    v1::HistogramInfo* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/GetHistogramInfo"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, request, response]() -> absl::Status {
    absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx_.store->Find(request->name());
    if (!entry.ok()) return entry.status();
    return FillInfo(*ctx_.engine, **entry, response);
  });
}

grpc::ServerUnaryReactor* HistogramsService::ResetHistogram(
    grpc::CallbackServerContext* context, const v1::ResetHistogramRequest* request,
    v1::HistogramInfo* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/ResetHistogram"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, request, response]() -> absl::Status {
    absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx_.store->Find(request->name());
    if (!entry.ok()) return entry.status();
    // Bins and counters together, as one cycle's end (HistogramEntry, "Cycles").
    if (absl::Status s = (*entry)->Reset(*ctx_.engine); !s.ok()) return s;
    LogInfo("histogram_reset", {{"name", request->name()}});
    return FillInfo(*ctx_.engine, **entry, response);
  });
}

grpc::ServerUnaryReactor* HistogramsService::MergeHistogram(
    grpc::CallbackServerContext* context, const v1::MergeHistogramRequest* request,
    v1::HistogramInfo* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/MergeHistogram"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, request, response]() -> absl::Status {
    absl::StatusOr<std::shared_ptr<HistogramEntry>> target =
        ctx_.store->Merge(request->source(), request->target());
    if (!target.ok()) return target.status();
    return FillInfo(*ctx_.engine, **target, response);
  });
}

grpc::ServerUnaryReactor* HistogramsService::WriteSnapshot(
    grpc::CallbackServerContext* context, const v1::WriteSnapshotRequest* /*request*/,
    v1::WriteSnapshotResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/WriteSnapshot"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, response]() -> absl::Status {
    absl::StatusOr<SnapshotStats> written = ctx_.write_snapshot();
    if (!written.ok()) return written.status();
    response->set_path(written->path);
    response->set_histograms(written->histograms);
    response->set_bin_bytes(written->bin_bytes);
    response->set_seconds(written->seconds);
    return absl::OkStatus();
  });
}

grpc::ServerWriteReactor<v1::ReadAndResetChunk>* HistogramsService::ReadAndResetHistogram(
    grpc::CallbackServerContext* context, const v1::ReadAndResetHistogramRequest* request) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/ReadAndResetHistogram"); !s.ok()) {
    return RefusedReadAndResetStream(s);
  }
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return RefusedReadAndResetStream(permit.status());
  return StartReadAndResetStream(ctx_, context, *request, *std::move(permit));
}

grpc::ServerUnaryReactor* HistogramsService::GetServerStats(
    grpc::CallbackServerContext* context, const v1::GetServerStatsRequest* /*request*/,
    v1::ServerStats* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/GetServerStats"); !s.ok()) {
    return Refused(context, s);
  }
  // No engine call: answered on the callback thread.
  uint64_t bytes_used = 0;
  const auto entries = ctx_.store->List();
  for (const auto& entry : entries) bytes_used += entry->storage().bytes_used();
  const IngestStats ingest = ctx_.pipeline->stats();
  response->set_engine(ctx_.engine->name());
  response->set_histograms(entries.size());
  response->set_bytes_used(bytes_used);
  response->set_batches(ingest.batches);
  response->set_messages(ingest.messages);
  response->set_samples(ingest.samples);
  response->set_bytes(ingest.bytes);
  response->set_active_streams(ctx_.active_streams.load());
  response->set_staging_buffers(ingest.staging_buffers);
  response->set_staging_buffers_in_flight(ingest.staging_buffers_in_flight);
  response->set_queued_messages(ingest.queued_messages);
  response->set_unacknowledged_messages(ingest.unacknowledged_messages);
  const EngineStats engine = ctx_.engine->stats();
  response->set_copy_seconds(engine.copy_seconds);
  response->set_kernel_seconds(engine.kernel_seconds);
  response->set_apply_seconds(ingest.apply_seconds);
  response->set_enqueue_seconds(ingest.enqueue_seconds);
  response->set_acknowledge_seconds(ingest.acknowledge_seconds);
  response->set_stage_seconds(ingest.stage_seconds);
  response->set_stage_wait_seconds(ingest.stage_wait_seconds);
  const QueryStatsSnapshot queries = ctx_.query_stats.Snapshot();
  response->set_queries(queries.queries);
  response->set_query_seconds(queries.seconds);
  response->set_query_worker_wait_seconds(queries.worker_wait_seconds);
  response->set_query_read_seconds(queries.read_seconds);
  response->set_query_write_seconds(queries.write_seconds);
  response->set_uptime_seconds(absl::ToDoubleSeconds(absl::Now() - ctx_.started));
  response->set_memory_budget_bytes(ctx_.host_budget->limit());
  response->set_memory_used_bytes(ctx_.host_budget->used());
  response->set_memory_peak_bytes(ctx_.host_budget->peak());
  response->set_memory_refusals(ctx_.host_budget->refusals());
  if (ctx_.device_budget != nullptr) {
    response->set_device_memory_budget_bytes(ctx_.device_budget->limit());
    response->set_device_memory_used_bytes(ctx_.device_budget->used());
    response->set_device_memory_refusals(ctx_.device_budget->refusals());
  }
  response->set_active_queries(ctx_.queries.active());
  response->set_query_refusals(ctx_.queries.refusals());
  response->set_snapshot_failures(ctx_.snapshots.failures.load());
  if (ctx_.access != nullptr) {
    const RefusalCounts refusals = ctx_.access->refusals();
    response->set_auth_unauthenticated(refusals.unauthenticated);
    response->set_auth_permission_denied(refusals.permission_denied);
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace histd::server
