// histd::client::WatchStream: one histd.v1.Query/Watch stream, read update by update.
//
//   std::unique_ptr<WatchStream> watch = client.Watch(request);
//   histd::v1::WatchUpdate update;
//   while (watch->Next(&update)) { ... update.rows() x update.cols() cells in update.data() ... }
//   absl::Status why = watch->Finish();  // UNAVAILABLE at daemon shutdown, CANCELLED after Cancel
//
// Next checks each update's shape: data holds rows * cols elements of dtype (DTYPE_U32 or
// DTYPE_U8) and sequence numbers increase; a malformed update ends the stream with INTERNAL.
// The stream has no deadline (the client's rpc_timeout does not apply).
//
// Thread safety: Next and Finish from one thread; Cancel from any thread, at any time.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "histd/v1/query.grpc.pb.h"

namespace histd::client {

class WatchStream {
 public:
  WatchStream(histd::v1::Query::Stub& stub, const histd::v1::WatchRequest& request,
              bool wait_for_ready);
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;
  ~WatchStream();  // cancels a stream still open

  // Blocks for the next update; false once the stream has ended (Finish says why).
  bool Next(histd::v1::WatchUpdate* update);
  // Ends the stream; a blocked Next returns false.
  void Cancel();
  // The stream's status once Next returned false.
  absl::Status Finish();

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<histd::v1::WatchUpdate>> reader_;
  absl::Status problem_;  // a malformed update
  uint64_t last_sequence_ = 0;
  bool finished_ = false;
  absl::Status status_;
};

}  // namespace histd::client
