// Plain HTTP/1.1 over a loopback TCP connection, for tests of the daemon's HTTP endpoint:
// the request goes out verbatim and the reply is read until the server closes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace histd::server::testing {

struct HttpReply {
  int status = 0;  // 0: no connection or no complete head
  std::string head, body;
};

// Sends `request` to 127.0.0.1 at the port of `address` ("host:port").
inline HttpReply SendHttp(const std::string& address, const std::string& request) {
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  HttpReply reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    close(fd);
    return reply;
  }
  (void)!write(fd, request.data(), request.size());
  std::string all;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) all.append(buffer, static_cast<size_t>(n));
  close(fd);
  const size_t split = all.find("\r\n\r\n");
  if (split == std::string::npos) return reply;
  reply.head = all.substr(0, split);
  reply.body = all.substr(split + 4);
  if (reply.head.size() > 12) (void)absl::SimpleAtoi(reply.head.substr(9, 3), &reply.status);
  return reply;
}

inline HttpReply GetHttp(const std::string& address, const std::string& target) {
  return SendHttp(address, absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: test\r\nX-Probe: yes\r\n"
                                        "Connection: close\r\n\r\n"));
}

}  // namespace histd::server::testing
