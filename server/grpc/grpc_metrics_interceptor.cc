#include "server/grpc/grpc_metrics_interceptor.h"

#include <chrono>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace histd::server {
namespace {

using grpc::experimental::InterceptionHookPoints;
using metrics::FamilyInfo;
using metrics::Type;

const char* TypeLabel(bool client_streaming, bool server_streaming) {
  if (client_streaming && server_streaming) return "bidi_stream";
  if (client_streaming) return "client_stream";
  if (server_streaming) return "server_stream";
  return "unary";
}

struct MethodName {
  std::string service, method;
  bool client_streaming, server_streaming;
};

// The methods the daemon serves: its histd.v1 services, health and reflection.
std::vector<MethodName> ServedMethods() {
  std::vector<MethodName> out;
  for (const char* service :
       {"histd.v1.Histograms", "histd.v1.Ingest", "histd.v1.Query", "histd.v1.Compute"}) {
    const google::protobuf::ServiceDescriptor* d =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
    if (d == nullptr) continue;
    for (int i = 0; i < d->method_count(); ++i) {
      const google::protobuf::MethodDescriptor* m = d->method(i);
      out.push_back({service, m->name(), m->client_streaming(), m->server_streaming()});
    }
  }
  out.push_back({"grpc.health.v1.Health", "Check", false, false});
  out.push_back({"grpc.health.v1.Health", "Watch", false, true});
  out.push_back({"grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo", true, true});
  return out;
}

// go-grpc-prometheus's defaults (prometheus.DefBuckets).
const std::vector<double>& HandlingBuckets() {
  static const std::vector<double> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                               0.5,   1,    2.5,   5,    10};
  return kBuckets;
}

class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit MetricsInterceptor(const GrpcServerMetrics::Method* method)
      : method_(*method), start_(std::chrono::steady_clock::now()) {
    method_.started->Add();
  }
  // A call that ends without a status sent (cancelled first) is handled as Canceled.
  ~MetricsInterceptor() override {
    if (!handled_) Handled(grpc::StatusCode::CANCELLED);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() != nullptr) {
      method_.received->Add();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      method_.sent->Add();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) &&
        !handled_) {
      Handled(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  void Handled(grpc::StatusCode code) {
    handled_ = true;
    const int c = static_cast<int>(code);
    method_.handled[c >= 0 && c < kStatusCodes ? c : 2]->Add();  // 2: Unknown
    const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - start_)
                           .count();
    method_.handling->Observe(ns);
    if (method_.query_duration != nullptr) method_.query_duration->Observe(ns);
  }

  const GrpcServerMetrics::Method& method_;
  const std::chrono::steady_clock::time_point start_;
  bool handled_ = false;
};

class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(const GrpcServerMetrics* metrics) : metrics_(*metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    const GrpcServerMetrics::Method* method = metrics_.Find(info->method());
    return method == nullptr ? nullptr : new MetricsInterceptor(method);
  }

 private:
  const GrpcServerMetrics& metrics_;
};

}  // namespace

GrpcServerMetrics::GrpcServerMetrics(DaemonMetrics* daemon) {
  metrics::Registry& r = daemon->registry();
  const FamilyInfo started{"grpc_server_started_total",
                           "Total number of RPCs started on the server.", Type::kCounter};
  const FamilyInfo handled{
      "grpc_server_handled_total",
      "Total number of RPCs completed on the server, regardless of success or failure.",
      Type::kCounter};
  const FamilyInfo received{"grpc_server_msg_received_total",
                            "Total number of RPC stream messages received on the server.",
                            Type::kCounter};
  const FamilyInfo sent{"grpc_server_msg_sent_total",
                        "Total number of gRPC stream messages sent by the server.",
                        Type::kCounter};
  const FamilyInfo handling{"grpc_server_handling_seconds",
                            "Histogram of response latency (seconds) of gRPC that had been "
                            "application-level handled by the server.",
                            Type::kHistogram};
  for (const MethodName& m : ServedMethods()) {
    auto method = std::make_unique<Method>();
    const metrics::Labels labels = {
        {"grpc_method", m.method},
        {"grpc_service", m.service},
        {"grpc_type", TypeLabel(m.client_streaming, m.server_streaming)}};
    method->started = &r.AddCounter(started, labels);
    for (int code = 0; code < kStatusCodes; ++code) {
      metrics::Labels with_code = {{"grpc_code", StatusCodeName(code)}};
      with_code.insert(with_code.end(), labels.begin(), labels.end());
      method->handled[code] = &r.AddCounter(handled, with_code);
    }
    method->received = &r.AddCounter(received, labels);
    method->sent = &r.AddCounter(sent, labels);
    method->handling = &r.AddHistogram(handling, labels, HandlingBuckets(), 1e-9);
    if (absl::StartsWith(m.service, "histd.v1.")) {
      method->query_duration = daemon->query_duration(m.method);
    }
    methods_[absl::StrCat("/", m.service, "/", m.method)] = std::move(method);
  }
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
GrpcServerMetrics::MakeInterceptorFactory() {
  return std::make_unique<MetricsInterceptorFactory>(this);
}

const GrpcServerMetrics::Method* GrpcServerMetrics::Find(const char* full_method) const {
  if (full_method == nullptr) return nullptr;
  auto it = methods_.find(absl::string_view(full_method));
  return it == methods_.end() ? nullptr : it->second.get();
}

}  // namespace histd::server
