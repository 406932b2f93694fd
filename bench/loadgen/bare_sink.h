// BareSink: the ceiling for the load generator -- a gRPC server with histd's Ingest service
// definition (proto/histd/v1/ingest.proto) that does nothing but count bytes.
//
// Built the way histd's own IngestService is (callback API, one ServerBidiReactor per
// stream, one outstanding write at a time), but each message is acknowledged as soon as it
// is read: no validation, no staging, no engine. Reads are not held back, so only gRPC and
// the client's in-flight window limit a producer. The ack echoes the sequence with code 0
// and samples = payload bytes / 4.
//
// Thread safety: bytes()/messages() may be read from any thread while streams run;
// Shutdown() once, from any thread (the destructor calls it).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "histd/v1/ingest.grpc.pb.h"

namespace grpc {
class Server;
}

namespace histd::bench {

class BareSink {
 public:
  // Listens on `address` (port 0: a free port); accepts messages up to max_message_bytes.
  static absl::StatusOr<std::unique_ptr<BareSink>> Start(const std::string& address,
                                                         int max_message_bytes);
  ~BareSink();
  BareSink(const BareSink&) = delete;
  BareSink& operator=(const BareSink&) = delete;

  const std::string& address() const { return address_; }
  uint64_t bytes() const { return service_.bytes.load(std::memory_order_relaxed); }
  uint64_t messages() const { return service_.messages.load(std::memory_order_relaxed); }

  void Shutdown();

 private:
  class Service final : public histd::v1::Ingest::CallbackService {
   public:
    grpc::ServerBidiReactor<histd::v1::IngestRequest, histd::v1::IngestResponse>* Ingest(
        grpc::CallbackServerContext* context) override;
    std::atomic<uint64_t> bytes{0};
    std::atomic<uint64_t> messages{0};
  };

  BareSink() = default;

  Service service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace histd::bench
