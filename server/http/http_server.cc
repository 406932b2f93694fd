#include "server/http/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>

#include <httplib.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/match.h"
#include "engine/thread_name.h"
#include "server/http/http_tls.h"

namespace histd::server {
namespace {

constexpr time_t kTimeoutSeconds = 5;

// httplib's default also sets SO_REUSEPORT, with which a second daemon on the same port would
// share it silently instead of failing to start.
void ReuseAddressOnly(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

}  // namespace

std::string HttpRequest::header(absl::string_view name) const {
  auto it = headers.find(absl::AsciiStrToLower(name));
  return it == headers.end() ? std::string() : it->second;
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

void HttpRoutes::Add(std::string path, HttpHandler handler) {
  exact_[std::move(path)] = std::move(handler);
}

void HttpRoutes::AddPrefix(std::string prefix, HttpHandler handler) {
  prefixes_.erase(std::remove_if(prefixes_.begin(), prefixes_.end(),
                                 [&](const auto& route) { return route.first == prefix; }),
                  prefixes_.end());
  prefixes_.emplace_back(std::move(prefix), std::move(handler));
  std::sort(prefixes_.begin(), prefixes_.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

void HttpRoutes::WrapHandlers(const std::function<HttpHandler(HttpHandler)>& wrap) {
  for (auto& [path, handler] : exact_) handler = wrap(std::move(handler));
  for (auto& [prefix, handler] : prefixes_) handler = wrap(std::move(handler));
}

void HttpRoutes::Merge(const HttpRoutes& other) {
  for (const auto& [path, handler] : other.exact_) Add(path, handler);
  for (const auto& [prefix, handler] : other.prefixes_) AddPrefix(prefix, handler);
}

const HttpHandler* HttpRoutes::Find(absl::string_view path, std::string* rest) const {
  if (auto it = exact_.find(path); it != exact_.end()) return &it->second;
  for (const auto& [prefix, handler] : prefixes_) {
    if (absl::StartsWith(path, prefix)) {
      *rest = std::string(path.substr(prefix.size()));
      return &handler;
    }
  }
  return nullptr;
}

absl::Status SplitHostPort(const std::string& address, const char* flag, std::string* host,
                           int* port) {
  const auto bad = [&](const char* why) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s='%s': %s (want host:port or [ipv6]:port, e.g. 127.0.0.1:9440)", flag, address, why));
  };
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return bad("no port");
  std::string h = address.substr(0, colon);
  if (!h.empty() && h.front() == '[') {
    if (h.size() < 2 || h.back() != ']') return bad("unbalanced brackets");
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string::npos) {
    return bad("an IPv6 host needs brackets");
  }
  if (h.empty()) return bad("no host");
  int p = 0;
  const std::string port_text = address.substr(colon + 1);
  if (port_text.empty() || !std::all_of(port_text.begin(), port_text.end(), ::isdigit) ||
      !absl::SimpleAtoi(port_text, &p) || p > 65535) {
    return bad("the port is not a number in [0, 65535]");
  }
  *host = std::move(h);
  *port = p;
  return absl::OkStatus();
}

HttpServer::HttpServer(HttpRoutes routes, std::shared_ptr<HttpTls> tls)
    : routes_(std::make_shared<const HttpRoutes>(std::move(routes))), tls_(std::move(tls)) {
  if (tls_ == nullptr) {
    server_ = std::make_unique<httplib::Server>();
  } else {
    HttpTls* t = tls_.get();
    server_ = std::make_unique<httplib::SSLServer>([t](SSL_CTX& ctx) { return t->Configure(ctx); });
  }
}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address,
                                                              HttpRoutes routes, int threads,
                                                              std::shared_ptr<HttpTls> tls) {
  std::string host;
  int port = 0;
  if (absl::Status s = SplitHostPort(address, "--http_address", &host, &port); !s.ok()) return s;
  if (threads < 1) return absl::InvalidArgumentError("HTTP threads must be >= 1");
  std::unique_ptr<HttpServer> http(new HttpServer(std::move(routes), std::move(tls)));
  if (!http->server_->is_valid()) {
    return absl::FailedPreconditionError("the HTTP endpoint's TLS context could not be set up");
  }
  httplib::Server& svr = *http->server_;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  svr.set_socket_options(ReuseAddressOnly);
  svr.set_read_timeout(kTimeoutSeconds);
  svr.set_write_timeout(kTimeoutSeconds);
  svr.set_keep_alive_timeout(kTimeoutSeconds);
  svr.set_payload_max_length(0);
  HttpServer* self = http.get();
  svr.set_pre_routing_handler([self](const httplib::Request& req, httplib::Response& res) {
    if (req.method != "GET" && req.method != "HEAD") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      res.set_content("read-only: GET or HEAD\n", "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    HttpRequest request;
    request.method = req.method;
    request.path = req.path;
    for (const auto& [k, v] : req.params) request.params.emplace(k, v);
    for (const auto& [k, v] : req.headers) request.headers.emplace(absl::AsciiStrToLower(k), v);
    request.remote_address = req.remote_addr;
    const HttpResponse response = self->Dispatch(request);
    res.status = response.status;
    for (const auto& [k, v] : response.headers) res.set_header(k, v);
    res.set_content(response.body, response.content_type.c_str());
    return httplib::Server::HandlerResponse::Handled;
  });
  const bool bound =
      port == 0 ? (port = svr.bind_to_any_port(host)) > 0 : svr.bind_to_port(host, port);
  if (!bound) {
    return absl::UnavailableError(absl::StrFormat(
        "--http_address=%s: cannot listen (address in use, or not an address of this host)",
        address));
  }
  http->address_ = host.find(':') != std::string::npos ? absl::StrCat("[", host, "]:", port)
                                                       : absl::StrCat(host, ":", port);
  auto listening_ended = std::make_shared<std::atomic<bool>>(false);
  http->listener_ = std::thread([&svr, listening_ended] {
    NameCurrentThread("histd-http");
    svr.listen_after_bind();
    listening_ended->store(true);
  });
  // Stop must not run before the listener is up: httplib's stop() would miss it.
  while (!svr.is_running() && !listening_ended->load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return http;
}

void HttpServer::Stop() {
  if (!listener_.joinable()) return;
  server_->stop();
  listener_.join();
}

void HttpServer::AddRoutes(const HttpRoutes& routes) {
  absl::MutexLock lock(&mu_);
  auto merged = std::make_shared<HttpRoutes>(*routes_);
  merged->Merge(routes);
  routes_ = std::move(merged);
}

HttpResponse HttpServer::Dispatch(const HttpRequest& request) const {
  std::shared_ptr<const HttpRoutes> routes;
  {
    absl::MutexLock lock(&mu_);
    routes = routes_;
  }
  std::string rest;
  const HttpHandler* handler = routes->Find(request.path, &rest);
  if (handler == nullptr) return HttpResponse::Text(404, "not found\n");
  if (rest.empty()) return (*handler)(request);
  HttpRequest with_rest = request;
  with_rest.path_rest = std::move(rest);
  return (*handler)(with_rest);
}

}  // namespace histd::server
