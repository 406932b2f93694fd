// The Watch RPC (histd.v1.Query/Watch): a server-streaming reactor that refreshes a
// WatchView (server/core/watch_view.h: the request's checks, the pooled view and the update
// made when it changed) every interval on the worker pool and writes the updates it makes.
//
// Scheduling: the registry's ticker thread ("histd-watch") looks at every open stream every
// 10 ms and, when one is idle and its next read is due, hands the read to the worker pool;
// a read that finds a change starts a write. A stream has at most one read or write
// outstanding, and no callback thread ever waits on the engine.
// Bounds: the stream holds a --max_concurrent_queries permit and its WatchView (whose
// host-budget charge covers the update message) for its whole life. It ends
//   - UNAVAILABLE when the daemon shuts down (WatchRegistry::BeginShutdown), within a tick
//     of its outstanding read or write;
//   - CANCELLED when the client cancels, or leaves a write unfinished (stops reading) for
//     --watch_stall_timeout;
//   - with the error of a read (NOT_FOUND once the histogram is deleted).
//
// Thread safety: WatchRegistry may be used from any thread. Lock order: the registry's mu_,
// then a reactor's.
#pragma once

#include <set>
#include <thread>

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "histd/v1/query.pb.h"
#include "server/core/service_context.h"

namespace histd::server {

class WatchReactor;

// The open Watch streams and their ticker thread. Must outlive every stream: the gRPC
// server's Shutdown (which waits for every RPC) runs before it is destroyed.
class WatchRegistry {
 public:
  WatchRegistry() = default;
  ~WatchRegistry();
  WatchRegistry(const WatchRegistry&) = delete;
  WatchRegistry& operator=(const WatchRegistry&) = delete;

  // Every open stream ends with UNAVAILABLE after its outstanding read or write; new ones
  // are refused UNAVAILABLE.
  void BeginShutdown();
  // Registers a stream (starting the ticker on first use); UNAVAILABLE after BeginShutdown.
  absl::Status Add(WatchReactor* reactor);
  void Remove(WatchReactor* reactor);

 private:
  void TickerLoop();

  absl::Mutex mu_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  std::set<WatchReactor*> open_ ABSL_GUARDED_BY(mu_);
  std::thread ticker_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_ticker_;
};

// Starts a Watch stream; the reactor deletes itself once gRPC and the ticker are done with it.
grpc::ServerWriteReactor<v1::WatchUpdate>* StartWatchStream(grpc::CallbackServerContext* context,
                                                            ServiceContext& ctx,
                                                            WatchRegistry& registry,
                                                            const v1::WatchRequest& request);

}  // namespace histd::server
