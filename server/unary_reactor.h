// Runs a unary RPC's blocking work (engine calls) on the worker pool and finishes the RPC
// with its status, so that the gRPC callback thread returns at once.
//
//   return RunOnWorkers(context, *ctx.workers, [=] { return DoWork(request, response); });
//
// The request and response stay valid until Finish (gRPC owns them); `work` may fill the
// response. Thread safety: `work` runs on one worker thread.
#pragma once

#include <functional>
#include <utility>

#include <grpcpp/support/server_callback.h>
#include <grpcpp/server_context.h>

#include "absl/status/status.h"
#include "server/status_util.h"
#include "server/worker_pool.h"

namespace histd::server {

inline grpc::ServerUnaryReactor* RunOnWorkers(grpc::CallbackServerContext* context,
                                              WorkerPool& workers,
                                              std::function<absl::Status()> work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  workers.Schedule([reactor, work = std::move(work)] { reactor->Finish(ToGrpcStatus(work())); });
  return reactor;
}

}  // namespace histd::server
