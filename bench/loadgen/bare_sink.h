// BareSink: the ceiling for the load generator -- a gRPC server with histd's Ingest service
// definition (proto/histd/v1/ingest.proto) that does nothing but count bytes.
//
// Built the way histd's own IngestService is (callback API, one ServerBidiReactor per
// stream, one outstanding write at a time), but each message is acknowledged as soon as it
// is read: no validation, no staging, no engine. Reads are not held back, so only gRPC and
// the client's in-flight window limit a producer. The ack echoes the sequence with code 0
// and samples = payload bytes / 4.
//
// It also answers histd's Query.Query, the query latency's peer: every name is a
// rows x cols histogram of zero bins, streamed in chunks of chunk_bytes the way histd's
// query stream sends them (a header on the first chunk, each chunk's data copied into the
// message, one write outstanding), without reading any bins.
//
// Thread safety: bytes()/messages() may be read from any thread while streams run;
// Shutdown() once, from any thread (the destructor calls it).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>

#include "absl/status/statusor.h"
#include "histd/v1/ingest.grpc.pb.h"
#include "histd/v1/query.grpc.pb.h"

namespace grpc {
class Server;
}

namespace histd::bench {

class BareSink {
 public:
  // What Query answers: a rows x cols one-byte histogram, chunk_bytes of data per chunk.
  struct QueryShape {
    uint32_t rows = 256, cols = 8192;
    uint64_t chunk_bytes = uint64_t{1} << 20;
  };

  // Listens on `address` (port 0: a free port) with `credentials` (histd's own TLS for a
  // like-for-like ceiling; null: plaintext); accepts messages up to max_message_bytes.
  static absl::StatusOr<std::unique_ptr<BareSink>> Start(
      const std::string& address, int max_message_bytes, const QueryShape& query,
      std::shared_ptr<grpc::ServerCredentials> credentials = nullptr);
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

  class QueryService final : public histd::v1::Query::CallbackService {
   public:
    explicit QueryService(const QueryShape& shape);
    grpc::ServerWriteReactor<histd::v1::QueryChunk>* Query(
        grpc::CallbackServerContext* context, const histd::v1::QueryRequest* request) override;

   private:
    const QueryShape shape_;
    const std::string zeros_;  // one chunk's data
  };

  explicit BareSink(const QueryShape& query) : query_service_(query) {}

  Service service_;
  QueryService query_service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace histd::bench
