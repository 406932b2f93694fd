// The HTTP endpoint's route table and server (server/http/http_server.h), through real
// loopback connections with hand-written requests.
#include "server/http/http_server.h"

#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/server/http/loopback_http.h"

namespace histd::server {
namespace {

using testing::GetHttp;
using testing::HttpReply;
using testing::SendHttp;

HttpRoutes TestRoutes() {
  HttpRoutes routes;
  routes.Add("/plain", [](const HttpRequest& r) {
    return HttpResponse::Text(
        200, absl::StrCat(r.method, " ", r.path, " probe=", r.header("x-PROBE")));
  });
  routes.AddPrefix("/render/", [](const HttpRequest& r) {
    auto it = r.params.find("w");
    HttpResponse response = HttpResponse::Text(
        200, absl::StrCat("rest=", r.path_rest, " w=", it == r.params.end() ? "-" : it->second));
    response.content_type = "image/png";
    response.headers.emplace_back("Cache-Control", "no-store");
    return response;
  });
  routes.AddPrefix("/render/deep/", [](const HttpRequest& r) {
    return HttpResponse::Text(418, absl::StrCat("deep ", r.path_rest));
  });
  return routes;
}

TEST(HttpServerTest, RoutesExactPathsAndTheLongestPrefix) {
  absl::StatusOr<std::unique_ptr<HttpServer>> http =
      HttpServer::Start("127.0.0.1:0", TestRoutes(), 2);
  ASSERT_TRUE(http.ok()) << http.status();
  const std::string address = (*http)->address();
  ASSERT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;

  HttpReply r = GetHttp(address, "/plain");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "GET /plain probe=yes");

  r = GetHttp(address, "/render/h%201.png?w=640");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "rest=h 1.png w=640");  // decoded path and parameters
  EXPECT_NE(r.head.find("Content-Type: image/png"), std::string::npos) << r.head;
  EXPECT_NE(r.head.find("Cache-Control: no-store"), std::string::npos) << r.head;

  r = GetHttp(address, "/render/deep/x");
  EXPECT_EQ(r.status, 418);
  EXPECT_EQ(r.body, "deep x");

  EXPECT_EQ(GetHttp(address, "/plainer").status, 404);
  EXPECT_EQ(GetHttp(address, "/").status, 404);
  EXPECT_EQ(GetHttp(address, "/render").status, 404);  // the prefix is "/render/"
}

TEST(HttpServerTest, RoutesAddedWhileServingAreServedFromThen) {
  HttpRoutes first;
  first.Add("/a", [](const HttpRequest&) { return HttpResponse::Text(200, "a1"); });
  absl::StatusOr<std::unique_ptr<HttpServer>> http = HttpServer::Start("127.0.0.1:0", first, 2);
  ASSERT_TRUE(http.ok()) << http.status();
  const std::string address = (*http)->address();
  EXPECT_EQ(GetHttp(address, "/b/x").status, 404);
  HttpRoutes later;
  later.AddPrefix("/b/", [](const HttpRequest& r) { return HttpResponse::Text(200, r.path_rest); });
  later.Add("/a", [](const HttpRequest&) { return HttpResponse::Text(200, "a2"); });
  (*http)->AddRoutes(later);
  EXPECT_EQ(GetHttp(address, "/b/x").body, "x");
  EXPECT_EQ(GetHttp(address, "/a").body, "a2");  // replaced
}

TEST(HttpServerTest, HeadHasGetsHeadersAndNoBody) {
  absl::StatusOr<std::unique_ptr<HttpServer>> http =
      HttpServer::Start("127.0.0.1:0", TestRoutes(), 1);
  ASSERT_TRUE(http.ok()) << http.status();
  const HttpReply r = SendHttp((*http)->address(),
                       "HEAD /plain HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
}

TEST(HttpServerTest, OnlyGetAndHeadAreServed) {
  absl::StatusOr<std::unique_ptr<HttpServer>> http =
      HttpServer::Start("127.0.0.1:0", TestRoutes(), 1);
  ASSERT_TRUE(http.ok()) << http.status();
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    const HttpReply r = SendHttp((*http)->address(), absl::StrCat(method, " /plain HTTP/1.1\r\nHost: t\r\n"
                                                          "Connection: close\r\n\r\n"));
    EXPECT_EQ(r.status, 405) << method;
    EXPECT_NE(r.head.find("Allow: GET, HEAD"), std::string::npos) << method << r.head;
  }
  // With a body (never read): refused the same, before any handler runs.
  const HttpReply r = SendHttp((*http)->address(),
                       "POST /plain HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
                       "Connection: close\r\n\r\nabc");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.body.find("probe"), std::string::npos);
}

TEST(HttpServerTest, ASecondServerOnTheSamePortIsRefused) {
  absl::StatusOr<std::unique_ptr<HttpServer>> first =
      HttpServer::Start("127.0.0.1:0", TestRoutes(), 1);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<HttpServer>> second =
      HttpServer::Start((*first)->address(), TestRoutes(), 1);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
  EXPECT_EQ(GetHttp((*first)->address(), "/plain").status, 200);
}

TEST(HttpServerTest, StopEndsServingAndIsIdempotent) {
  absl::StatusOr<std::unique_ptr<HttpServer>> http =
      HttpServer::Start("127.0.0.1:0", TestRoutes(), 1);
  ASSERT_TRUE(http.ok()) << http.status();
  const std::string address = (*http)->address();
  (*http)->Stop();
  (*http)->Stop();
  EXPECT_EQ(GetHttp(address, "/plain").status, 0);  // connection refused
}

TEST(HttpServerTest, MalformedAddressesAreInvalidArguments) {
  for (const char* address : {"", "9440", "127.0.0.1", "127.0.0.1:", "127.0.0.1:x",
                              "127.0.0.1:65536", ":9440", "::1:9440", "[::1:9440"}) {
    absl::StatusOr<std::unique_ptr<HttpServer>> http =
        HttpServer::Start(address, HttpRoutes(), 1);
    EXPECT_EQ(http.status().code(), absl::StatusCode::kInvalidArgument) << address;
  }
  std::string host;
  int port = -1;
  ASSERT_TRUE(SplitHostPort("[::1]:80", "--http_address", &host, &port).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 80);
}

}  // namespace
}  // namespace histd::server
