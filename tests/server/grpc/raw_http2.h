// A bare HTTP/2 client connection over TCP, for tests that must see or send the frames a
// gRPC client hides: PING and its acknowledgement, GOAWAY with its error code and debug data
// (RFC 9113, section 6). It speaks only the connection preface and frame headers; no streams.
//
//   RawHttp2 h2;  h2.Connect("127.0.0.1:port")   preface + empty SETTINGS, ACKs the server's
//   h2.SendPing(payload), h2.SendPingAck(payload)
//   h2.Next(timeout)   the next frame other than SETTINGS (acknowledged as they come) and
//                      WINDOW_UPDATE; kTimedOut when none came in time, kClosed once the
//                      server closed.
// Thread safety: one thread at a time.
#pragma once

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace histd::server::testing {

struct Http2Frame {
  enum Outcome { kFrame, kTimedOut, kClosed } outcome = kTimedOut;
  uint8_t type = 0;
  uint8_t flags = 0;
  uint32_t stream = 0;
  std::string payload;

  static constexpr uint8_t kSettings = 0x4, kPing = 0x6, kGoaway = 0x7, kWindowUpdate = 0x8;
  static constexpr uint8_t kAck = 0x1;
  static constexpr uint32_t kNoError = 0x0, kEnhanceYourCalm = 0xb;

  bool IsPing() const { return outcome == kFrame && type == kPing && (flags & kAck) == 0; }
  bool IsPingAck() const { return outcome == kFrame && type == kPing && (flags & kAck) != 0; }
  bool IsGoaway() const { return outcome == kFrame && type == kGoaway; }
  // GOAWAY: error code and debug data.
  uint32_t GoawayError() const { return payload.size() >= 8 ? BigEndian32(payload.data() + 4) : 0; }
  std::string GoawayDebug() const { return payload.size() > 8 ? payload.substr(8) : std::string(); }
  uint64_t PingPayload() const {
    uint64_t v = 0;
    for (size_t i = 0; i < 8 && i < payload.size(); ++i) v = v << 8 | uint8_t(payload[i]);
    return v;
  }

  static uint32_t BigEndian32(const char* p) {
    return uint32_t(uint8_t(p[0])) << 24 | uint32_t(uint8_t(p[1])) << 16 |
           uint32_t(uint8_t(p[2])) << 8 | uint32_t(uint8_t(p[3]));
  }
};

class RawHttp2 {
 public:
  RawHttp2() = default;
  RawHttp2(const RawHttp2&) = delete;
  RawHttp2& operator=(const RawHttp2&) = delete;
  ~RawHttp2() {
    if (fd_ >= 0) close(fd_);
  }

  // Connects to "host:port" and sends the client preface and an empty SETTINGS frame.
  bool Connect(const std::string& address) {
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos) return false;
    addrinfo hints = {};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(address.substr(0, colon).c_str(), address.substr(colon + 1).c_str(), &hints,
                    &found) != 0) {
      return false;
    }
    fd_ = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
    const bool connected = fd_ >= 0 && connect(fd_, found->ai_addr, found->ai_addrlen) == 0;
    freeaddrinfo(found);
    if (!connected) return false;
    static constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    return SendAll(std::string(kPreface, sizeof(kPreface) - 1)) &&
           SendFrame(Http2Frame::kSettings, 0, "");
  }

  bool SendPing(uint64_t payload) { return SendFrame(Http2Frame::kPing, 0, Bytes8(payload)); }
  bool SendPingAck(uint64_t payload) {
    return SendFrame(Http2Frame::kPing, Http2Frame::kAck, Bytes8(payload));
  }

  Http2Frame Next(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (true) {
      Http2Frame frame;
      char header[9];
      frame.outcome = ReadExactly(header, 9, deadline);
      if (frame.outcome != Http2Frame::kFrame) return frame;
      const uint32_t length =
          uint32_t(uint8_t(header[0])) << 16 | uint32_t(uint8_t(header[1])) << 8 | uint8_t(header[2]);
      frame.type = uint8_t(header[3]);
      frame.flags = uint8_t(header[4]);
      frame.stream = Http2Frame::BigEndian32(header + 5) & 0x7fffffffu;
      frame.payload.resize(length);
      // A frame that has begun arrives whole: allow it a second past the deadline.
      frame.outcome = ReadExactly(frame.payload.data(), length, absl::Now() + absl::Seconds(1));
      if (frame.outcome != Http2Frame::kFrame) return frame;
      if (frame.type == Http2Frame::kSettings) {
        if ((frame.flags & Http2Frame::kAck) == 0) SendFrame(Http2Frame::kSettings, Http2Frame::kAck, "");
        continue;
      }
      if (frame.type == Http2Frame::kWindowUpdate) continue;
      return frame;
    }
  }

 private:
  static std::string Bytes8(uint64_t v) {
    std::string s(8, '\0');
    for (int i = 7; i >= 0; --i, v >>= 8) s[i] = char(v & 0xff);
    return s;
  }

  bool SendFrame(uint8_t type, uint8_t flags, const std::string& payload) {
    std::string frame(9, '\0');
    frame[0] = char(payload.size() >> 16);
    frame[1] = char(payload.size() >> 8);
    frame[2] = char(payload.size());
    frame[3] = char(type);
    frame[4] = char(flags);
    return SendAll(frame + payload);
  }

  bool SendAll(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += size_t(n);
    }
    return true;
  }

  Http2Frame::Outcome ReadExactly(char* out, size_t size, absl::Time deadline) {
    size_t got = 0;
    while (got < size) {
      int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
      if (left_ms <= 0 && got > 0) {  // half a frame in: wait for the rest
        deadline = absl::Now() + absl::Seconds(1);
        left_ms = 1000;
      }
      if (left_ms <= 0) return Http2Frame::kTimedOut;
      pollfd p = {fd_, POLLIN, 0};
      const int ready = poll(&p, 1, static_cast<int>(left_ms));
      if (ready == 0) return Http2Frame::kTimedOut;
      if (ready < 0) return Http2Frame::kClosed;
      const ssize_t n = recv(fd_, out + got, size - got, 0);
      if (n <= 0) return Http2Frame::kClosed;
      got += size_t(n);
    }
    return Http2Frame::kFrame;
  }

  int fd_ = -1;
};

}  // namespace histd::server::testing
