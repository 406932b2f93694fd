// Runs a unary RPC's blocking work (engine calls) on the worker pool and finishes the RPC
// with its status, so that the gRPC callback thread returns at once.
//
//   return RunOnWorkers(context, *ctx.workers, [=] { return DoWork(request, response); });
//
// Refused(context, status) finishes a unary call at once (nothing scheduled).
// The request and response stay valid until Finish (gRPC owns them); `work` may fill the
// response. A call cancelled, or past its deadline, by the time a worker takes it finishes
// CANCELLED or DEADLINE_EXCEEDED without running `work`; one that gets there while `work`
// runs stops the engine's loops between chunks (engine/cancellation.h) and finishes the
// same way. Thread safety: `work` runs on one worker thread.
#pragma once

#include <chrono>
#include <functional>
#include <utility>

#include <grpcpp/support/server_callback.h>
#include <grpcpp/server_context.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/cancellation.h"
#include "server/grpc/status_util.h"
#include "server/core/worker_pool.h"

namespace histd::server {

// Finishes a unary call at once with `status` (a refusal: nothing was scheduled).
inline grpc::ServerUnaryReactor* Refused(grpc::CallbackServerContext* context,
                                         const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

inline grpc::ServerUnaryReactor* RunOnWorkers(grpc::CallbackServerContext* context,
                                              WorkerPool& workers,
                                              std::function<absl::Status()> work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  workers.Schedule([context, reactor, work = std::move(work)] {
    // A call whose client gave up while it waited for a worker costs no engine time.
    if (context->IsCancelled()) {
      reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the call was cancelled"));
      return;
    }
    if (std::chrono::system_clock::now() >= context->deadline()) {
      reactor->Finish(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                   "the deadline passed before a worker was free"));
      return;
    }
    const CancellationScope scope(absl::FromChrono(context->deadline()),
                                  [context] { return context->IsCancelled(); });
    reactor->Finish(ToGrpcStatus(work()));
  });
  return reactor;
}

}  // namespace histd::server
