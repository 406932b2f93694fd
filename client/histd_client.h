// histd::client::Client: a blocking C++ client for every histd.v1 RPC.
//
// Contract: one method per unary RPC, each returning the server's response or its error as
// an absl::Status with the same code and message (see grpc_status.h). Query() reassembles
// the chunked QueryChunk stream into one QueryResult and checks that the chunks are
// contiguous and add up to total_bytes; ReadAndResetHistogram() does the same for its chunks. Nothing is retried: an error is returned as is.
// Streaming ingest lives in ingest_stream.h (OpenIngestStream below), Watch streams in
// watch_stream.h.
//
// Thread safety: a Client is safe to use from many threads at once (each call has its own
// grpc::ClientContext; the channel and stubs are thread-safe).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client_security.h"
#include "client/ingest_stream.h"
#include "client/watch_stream.h"
#include "histd/v1/compute.grpc.pb.h"
#include "histd/v1/histograms.grpc.pb.h"
#include "histd/v1/ingest.grpc.pb.h"
#include "histd/v1/query.grpc.pb.h"

namespace histd::client {

inline constexpr char kDefaultServerAddress[] = "127.0.0.1:7440";

struct ClientOptions {
  // Largest message the channel sends or receives (compute results and inputs are unary).
  int max_message_bytes = 64 << 20;
  // Deadline for each unary call and for a whole Query stream; zero means none.
  absl::Duration rpc_timeout = absl::ZeroDuration();
  // Wait for the channel to connect instead of failing fast with UNAVAILABLE.
  bool wait_for_ready = false;
  // TLS, client certificate and bearer token (client_security.h: LoadClientSecurity).
  ClientSecurity security;
};

// A whole query result: rows x cols elements of dtype, row-major little-endian in bytes.
struct QueryResult {
  histd::v1::DType dtype = histd::v1::DTYPE_UNSPECIFIED;
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint32_t cap = 0;
  std::string bytes;
};

// One monitoring cycle from ReadAndResetHistogram: the cycle's HistogramInfo (spec, the
// counters of exactly the samples in `bins`, and the sums of `bins`) and rows * cols bins,
// one byte each, row-major.
struct ReadAndResetResult {
  histd::v1::HistogramInfo info;
  std::string bins;
};

// grpc.health.v1 serving status (numbers as in health.proto).
enum class ServingStatus { kUnknown = 0, kServing = 1, kNotServing = 2, kServiceUnknown = 3 };
const char* ServingStatusName(ServingStatus status);

class Client {
 public:
  explicit Client(const std::string& target, ClientOptions options = {});

  // Histograms service.
  absl::StatusOr<histd::v1::HistogramInfo> CreateHistogram(
      const histd::v1::CreateHistogramRequest& request);
  absl::StatusOr<histd::v1::DeleteHistogramResponse> DeleteHistogram(
      const histd::v1::DeleteHistogramRequest& request);
  absl::StatusOr<histd::v1::ListHistogramsResponse> ListHistograms(
      const histd::v1::ListHistogramsRequest& request = {});
  absl::StatusOr<histd::v1::HistogramInfo> GetHistogramInfo(
      const histd::v1::GetHistogramInfoRequest& request);
  absl::StatusOr<histd::v1::HistogramInfo> ResetHistogram(
      const histd::v1::ResetHistogramRequest& request);
  absl::StatusOr<histd::v1::HistogramInfo> MergeHistogram(
      const histd::v1::MergeHistogramRequest& request);
  absl::StatusOr<histd::v1::ServerStats> GetServerStats(
      const histd::v1::GetServerStatsRequest& request = {});
  absl::StatusOr<histd::v1::WriteSnapshotResponse> WriteSnapshot(
      const histd::v1::WriteSnapshotRequest& request = {});
  // Reads every bin and counter of a histogram and zeroes them, atomically with respect to
  // ingest (see ReadAndResetHistogram in histograms.proto), reassembling the chunks. A
  // stream that fails after its first chunk returns the error with a note that the cycle
  // was reset on the server (its bins cannot be asked for again).
  absl::StatusOr<ReadAndResetResult> ReadAndResetHistogram(
      const histd::v1::ReadAndResetHistogramRequest& request);

  // Query service.
  absl::StatusOr<QueryResult> Query(const histd::v1::QueryRequest& request);
  absl::StatusOr<histd::v1::ProjectResponse> Project(const histd::v1::ProjectRequest& request);
  absl::StatusOr<histd::v1::CdfResponse> Cdf(const histd::v1::CdfRequest& request);
  absl::StatusOr<histd::v1::QuantilesResponse> Quantiles(
      const histd::v1::QuantilesRequest& request);
  // A PNG heatmap (RenderResponse.png) of a histogram or a region.
  absl::StatusOr<histd::v1::RenderResponse> Render(const histd::v1::RenderRequest& request);
  // Follows a histogram's pooled view (see watch_stream.h); no deadline.
  std::unique_ptr<WatchStream> Watch(const histd::v1::WatchRequest& request);

  // Compute service.
  absl::StatusOr<histd::v1::ReduceResponse> Reduce(const histd::v1::ReduceRequest& request);
  absl::StatusOr<histd::v1::ScanResponse> Scan(const histd::v1::ScanRequest& request);
  absl::StatusOr<histd::v1::TransposeResponse> Transpose(
      const histd::v1::TransposeRequest& request);
  absl::StatusOr<histd::v1::MatmulResponse> Matmul(const histd::v1::MatmulRequest& request);

  // grpc.health.v1.Health/Check; service "" asks about the server as a whole.
  absl::StatusOr<ServingStatus> CheckHealth(const std::string& service = "");

  // Opens one long-lived ingest stream (see ingest_stream.h). Unlike unary calls, the
  // stream has no deadline from rpc_timeout.
  std::unique_ptr<IngestStream> OpenIngestStream(IngestStreamOptions options = {});

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 private:
  // A context with this client's deadline and wait_for_ready applied.
  std::unique_ptr<grpc::ClientContext> NewContext() const;

  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<histd::v1::Histograms::Stub> histograms_;
  std::unique_ptr<histd::v1::Query::Stub> query_;
  std::unique_ptr<histd::v1::Compute::Stub> compute_;
  std::unique_ptr<histd::v1::Ingest::Stub> ingest_;
};

// Checks a QueryChunk sequence's header against its data length: rows * cols * size(dtype)
// must equal total_bytes (without overflow). Exposed for tests.
absl::Status CheckQueryHeader(const histd::v1::QueryChunk& first);

}  // namespace histd::client
