#include "client/histd_client.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "client/dtype.h"
#include "client/grpc_status.h"

namespace histd::client {
namespace {

// A unary call through a generated stub method, with the status converted once.
template <typename Request, typename Response, typename Method>
absl::StatusOr<Response> CallUnary(std::unique_ptr<grpc::ClientContext> context,
                                   Method method, const Request& request) {
  Response response;
  grpc::Status status = method(context.get(), request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

}  // namespace

const char* ServingStatusName(ServingStatus status) {
  switch (status) {
    case ServingStatus::kServing: return "SERVING";
    case ServingStatus::kNotServing: return "NOT_SERVING";
    case ServingStatus::kServiceUnknown: return "SERVICE_UNKNOWN";
    default: return "UNKNOWN";
  }
}

Client::Client(const std::string& target, ClientOptions options) : options_(options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  channel_ = CreateChannel(target, options_.security, args);
  histograms_ = histd::v1::Histograms::NewStub(channel_);
  query_ = histd::v1::Query::NewStub(channel_);
  compute_ = histd::v1::Compute::NewStub(channel_);
  ingest_ = histd::v1::Ingest::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> Client::NewContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (options_.rpc_timeout > absl::ZeroDuration()) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  }
  context->set_wait_for_ready(options_.wait_for_ready);
  return context;
}

#define HISTD_UNARY(stub, Method, Request, Response)                                      \
  absl::StatusOr<histd::v1::Response> Client::Method(const histd::v1::Request& request) { \
    return CallUnary<histd::v1::Request, histd::v1::Response>(                            \
        NewContext(),                                                                     \
        [this](grpc::ClientContext* c, const histd::v1::Request& r,                       \
               histd::v1::Response* out) { return stub->Method(c, r, out); },             \
        request);                                                                         \
  }

HISTD_UNARY(histograms_, CreateHistogram, CreateHistogramRequest, HistogramInfo)
HISTD_UNARY(histograms_, DeleteHistogram, DeleteHistogramRequest, DeleteHistogramResponse)
HISTD_UNARY(histograms_, ListHistograms, ListHistogramsRequest, ListHistogramsResponse)
HISTD_UNARY(histograms_, GetHistogramInfo, GetHistogramInfoRequest, HistogramInfo)
HISTD_UNARY(histograms_, ResetHistogram, ResetHistogramRequest, HistogramInfo)
HISTD_UNARY(histograms_, MergeHistogram, MergeHistogramRequest, HistogramInfo)
HISTD_UNARY(histograms_, GetServerStats, GetServerStatsRequest, ServerStats)
HISTD_UNARY(histograms_, WriteSnapshot, WriteSnapshotRequest, WriteSnapshotResponse)
HISTD_UNARY(query_, Project, ProjectRequest, ProjectResponse)
HISTD_UNARY(query_, Cdf, CdfRequest, CdfResponse)
HISTD_UNARY(query_, Render, RenderRequest, RenderResponse)
HISTD_UNARY(query_, Quantiles, QuantilesRequest, QuantilesResponse)
HISTD_UNARY(compute_, Reduce, ReduceRequest, ReduceResponse)
HISTD_UNARY(compute_, Scan, ScanRequest, ScanResponse)
HISTD_UNARY(compute_, Transpose, TransposeRequest, TransposeResponse)
HISTD_UNARY(compute_, Matmul, MatmulRequest, MatmulResponse)
#undef HISTD_UNARY

std::unique_ptr<WatchStream> Client::Watch(const histd::v1::WatchRequest& request) {
  return std::make_unique<WatchStream>(*query_, request, options_.wait_for_ready);
}

absl::Status CheckQueryHeader(const histd::v1::QueryChunk& first) {
  absl::StatusOr<uint64_t> bytes = ArrayByteLength(first.dtype(), first.rows(), first.cols());
  if (!bytes.ok()) {
    return absl::InternalError(absl::StrCat("query result header: ", bytes.status().message()));
  }
  if (*bytes != first.total_bytes()) {
    return absl::InternalError(absl::StrCat(
        "query result header: ", first.rows(), " x ", first.cols(), " ",
        DTypeShortName(first.dtype()), " needs ", *bytes, " bytes but total_bytes is ",
        first.total_bytes()));
  }
  return absl::OkStatus();
}

absl::StatusOr<QueryResult> Client::Query(const histd::v1::QueryRequest& request) {
  std::unique_ptr<grpc::ClientContext> context = NewContext();
  std::unique_ptr<grpc::ClientReader<histd::v1::QueryChunk>> reader =
      query_->Query(context.get(), request);
  QueryResult result;
  histd::v1::QueryChunk chunk;
  bool have_header = false;
  uint64_t total_bytes = 0;  // from the first chunk; later chunks need not repeat it
  absl::Status problem;
  while (reader->Read(&chunk)) {
    if (!problem.ok()) continue;  // drain to the end, then report
    if (!have_header) {
      problem = CheckQueryHeader(chunk);
      if (!problem.ok()) {
        context->TryCancel();
        continue;
      }
      have_header = true;
      result.dtype = chunk.dtype();
      result.rows = chunk.rows();
      result.cols = chunk.cols();
      result.cap = chunk.cap();
      total_bytes = chunk.total_bytes();
      result.bytes.reserve(total_bytes);
    }
    if (chunk.offset() != result.bytes.size()) {
      problem = absl::InternalError(absl::StrCat("query chunk at offset ", chunk.offset(),
                                                 ", expected ", result.bytes.size()));
    } else if (chunk.data().size() > total_bytes - result.bytes.size()) {
      problem = absl::InternalError(absl::StrCat(
          "query chunk of ", chunk.data().size(), " bytes at offset ", chunk.offset(),
          " runs past total_bytes ", total_bytes));
    }
    if (!problem.ok()) {
      context->TryCancel();
      continue;
    }
    result.bytes.append(chunk.data());
  }
  grpc::Status status = reader->Finish();
  if (!problem.ok()) return problem;
  if (!status.ok()) return FromGrpcStatus(status);
  if (!have_header) return absl::InternalError("query stream ended without a chunk");
  if (result.bytes.size() != total_bytes) {
    return absl::InternalError(absl::StrCat("query stream ended after ", result.bytes.size(),
                                            " of ", total_bytes, " bytes"));
  }
  return result;
}

absl::StatusOr<ReadAndResetResult> Client::ReadAndResetHistogram(
    const histd::v1::ReadAndResetHistogramRequest& request) {
  std::unique_ptr<grpc::ClientContext> context = NewContext();
  std::unique_ptr<grpc::ClientReader<histd::v1::ReadAndResetChunk>> reader =
      histograms_->ReadAndResetHistogram(context.get(), request);
  ReadAndResetResult result;
  histd::v1::ReadAndResetChunk chunk;
  bool have_header = false;
  uint64_t total_bytes = 0;
  absl::Status problem;
  while (reader->Read(&chunk)) {
    if (!problem.ok()) continue;  // drain to the end, then report
    if (!have_header) {
      have_header = true;
      result.info = chunk.info();
      total_bytes = chunk.total_bytes();
      const uint64_t bins = uint64_t{result.info.spec().rows()} * result.info.spec().cols();
      if (bins != total_bytes) {
        problem = absl::InternalError(absl::StrCat(
            "read-and-reset header: ", result.info.spec().rows(), " x ",
            result.info.spec().cols(), " bins but total_bytes is ", total_bytes));
        context->TryCancel();
        continue;
      }
      result.bins.reserve(total_bytes);
    }
    if (chunk.offset() != result.bins.size()) {
      problem = absl::InternalError(absl::StrCat("read-and-reset chunk at offset ", chunk.offset(),
                                                 ", expected ", result.bins.size()));
    } else if (chunk.data().size() > total_bytes - result.bins.size()) {
      problem = absl::InternalError(absl::StrCat(
          "read-and-reset chunk of ", chunk.data().size(), " bytes at offset ", chunk.offset(),
          " runs past total_bytes ", total_bytes));
    }
    if (!problem.ok()) {
      context->TryCancel();
      continue;
    }
    result.bins.append(chunk.data());
  }
  grpc::Status status = reader->Finish();
  if (problem.ok() && !status.ok()) problem = FromGrpcStatus(status);
  if (problem.ok() && !have_header) problem = absl::InternalError("read-and-reset stream ended without a chunk");
  if (problem.ok() && result.bins.size() != total_bytes) {
    problem = absl::InternalError(absl::StrCat("read-and-reset stream ended after ",
                                               result.bins.size(), " of ", total_bytes, " bytes"));
  }
  if (!problem.ok() && have_header) {
    return absl::Status(problem.code(),
                        absl::StrCat(problem.message(),
                                     " (the histogram was already read and reset on the server: "
                                     "this cycle's bins are lost)"));
  }
  if (!problem.ok()) return problem;
  return result;
}

absl::StatusOr<ServingStatus> Client::CheckHealth(const std::string& service) {
  // grpc.health.v1 messages by hand (no generated code for them is installed):
  //   HealthCheckRequest  { string service = 1; }
  //   HealthCheckResponse { ServingStatus status = 1; }
  if (service.size() > 127) return absl::InvalidArgumentError("health service name too long");
  std::string request_bytes;
  if (!service.empty()) {
    request_bytes.push_back('\x0a');
    request_bytes.push_back(static_cast<char>(service.size()));
    request_bytes += service;
  }
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::unique_ptr<grpc::ClientContext> context = NewContext();
  grpc::GenericStub stub(channel_);
  absl::Notification done;
  grpc::Status status;
  stub.UnaryCall(context.get(), "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request,
                 &response, [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  if (!status.ok()) return FromGrpcStatus(status);
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return absl::InternalError("unreadable health response");
  std::string bytes;
  for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  // Field 1, varint; absent means 0 (UNKNOWN). Other fields are skipped only if absent.
  if (bytes.empty()) return ServingStatus::kUnknown;
  if (bytes.size() == 2 && bytes[0] == '\x08' && static_cast<unsigned char>(bytes[1]) < 0x80) {
    const int value = bytes[1];
    if (value >= 0 && value <= 3) return static_cast<ServingStatus>(value);
  }
  return absl::InternalError("unexpected health response encoding");
}

std::unique_ptr<IngestStream> Client::OpenIngestStream(IngestStreamOptions options) {
  return std::make_unique<IngestStream>(ingest_.get(), std::move(options));
}

}  // namespace histd::client
