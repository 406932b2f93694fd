// The daemon's embedded HTTP endpoint: a table of routes to handler functions, served by
// cpp-httplib (Debian's libcpp-httplib) on threads of its own.
//
//   HttpRoutes routes;
//   routes.Add("/healthz", [](const HttpRequest&) { return HttpResponse::Text(200, "ok\n"); });
//   routes.AddPrefix("/render/", RenderPage);         // request.path_rest: after the prefix
//   absl::StatusOr<std::unique_ptr<HttpServer>> http =
//       HttpServer::Start("127.0.0.1:9440", std::move(routes), /*threads=*/4);
//
// Pages live in server/http/ beside this file, each adding its routes; handlers see only
// HttpRequest and HttpResponse (no httplib, no gRPC types). The endpoint is read-only: GET
// and HEAD are routed (HEAD answers GET's headers), other methods get 405 (a body is never
// read), unknown paths 404. Requests are bounded: 8 KiB request line and headers
// (httplib's limits), no body read, 5 s to read a request or write a response, a kept-alive
// connection closed after 5 s idle or 5 requests; `threads` connections are served at once,
// the rest wait in the kernel's backlog.
//
// Routes can be added while serving (AddRoutes): the daemon starts the endpoint with its
// probes and /metrics before anything else, and adds the pages that read histograms once
// the store and engine exist.
//
// Thread safety: handlers run on the server's threads, concurrently. AddRoutes may be called
// from any thread; a request is routed by the table as it was when the request arrived.
// Stop (and the destructor) wait for running handlers.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/string_view.h"

namespace httplib {
class Server;
}

namespace histd::server {

class HttpTls;

struct HttpRequest {
  std::string method;     // GET or HEAD
  std::string path;       // decoded, without the query string
  std::string path_rest;  // for a prefix route: the path after the prefix
  std::multimap<std::string, std::string> params;   // query parameters, decoded
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string remote_address;

  // The first value of header `name` (any case), or empty.
  std::string header(absl::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers

  static HttpResponse Text(int status, std::string body);
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

class HttpRoutes {
 public:
  // `path` exactly, e.g. "/metrics". A later Add of the same path replaces it.
  void Add(std::string path, HttpHandler handler);
  // Every path that starts with `prefix` (which ends in '/'), e.g. "/render/".
  void AddPrefix(std::string prefix, HttpHandler handler);
  // Adds every route of `other` (replacing equal paths and prefixes).
  void Merge(const HttpRoutes& other);
  // Replaces every handler h by wrap(h) (e.g. an access check in front of each page).
  void WrapHandlers(const std::function<HttpHandler(HttpHandler)>& wrap);

  // The handler for `path` (exact routes first, then the longest prefix), with *rest set to
  // what follows a prefix; null when none matches.
  const HttpHandler* Find(absl::string_view path, std::string* rest) const;

 private:
  std::map<std::string, HttpHandler, std::less<>> exact_;
  std::vector<std::pair<std::string, HttpHandler>> prefixes_;
};

class HttpServer {
 public:
  // Binds `address` (host:port, [v6]:port; port 0 picks a free port) and serves `routes`,
  // over TLS when `tls` is given (server/http/http_tls.h).
  // INVALID_ARGUMENT for a malformed address, UNAVAILABLE when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const std::string& address,
                                                           HttpRoutes routes, int threads,
                                                           std::shared_ptr<HttpTls> tls = nullptr);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound host:port.
  const std::string& address() const { return address_; }
  // Serves `routes` too, from now on.
  void AddRoutes(const HttpRoutes& routes);
  // Stops accepting and waits for the handlers running now. Idempotent.
  void Stop();

 private:
  HttpServer(HttpRoutes routes, std::shared_ptr<HttpTls> tls);
  HttpResponse Dispatch(const HttpRequest& request) const;

  mutable absl::Mutex mu_;
  std::shared_ptr<const HttpRoutes> routes_ ABSL_GUARDED_BY(mu_);  // replaced, never changed
  std::shared_ptr<HttpTls> tls_;  // outlives server_, whose handshakes use it
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
  std::string address_;
};

// Splits "host:port" or "[v6]:port" into host (brackets removed) and port; INVALID_ARGUMENT
// naming `flag` otherwise. Exposed for tests.
absl::Status SplitHostPort(const std::string& address, const char* flag, std::string* host,
                           int* port);

}  // namespace histd::server
