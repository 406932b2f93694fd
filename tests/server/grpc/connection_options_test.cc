// Options::Connections on real connections: the keepalive pings the server sends, the ping
// policy it enforces on clients (GOAWAY too_many_pings), and connection ages (GOAWAY, then a
// transparent reconnect). Frames are watched with a bare HTTP/2 connection
// (tests/server/raw_http2.h); client behaviour with real gRPC channels.
#include <grpc/support/log.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tests/server/grpc/raw_http2.h"
#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

class ConnectionOptionsTest : public ServiceTest {
 protected:
  // The fixture's server, restarted with `connections`.
  void Restart(const Options::Connections& connections) {
    Options o = DefaultOptions();
    o.connections = connections;
    StartServer(o);
  }
  // Connects and waits out the opening exchange (SETTINGS, WINDOW_UPDATE): frames the server
  // sends then reset its count of ping strikes.
  void ConnectSettled(RawHttp2& h2) {
    ASSERT_TRUE(h2.Connect(server_->address()));
    for (int frames = 0; frames < 10; ++frames) {  // until 200 ms pass without a frame
      const Http2Frame f = h2.Next(absl::Milliseconds(200));
      if (f.outcome == Http2Frame::kTimedOut) return;
      ASSERT_EQ(f.outcome, Http2Frame::kFrame) << "closed while settling";
    }
    FAIL() << "the server kept sending frames on a new connection";
  }
  Http2Frame NextSkipping(RawHttp2& h2, uint8_t skipped_type, absl::Duration timeout) {
    Http2Frame f;
    do {
      f = h2.Next(timeout);
    } while (f.outcome == Http2Frame::kFrame && f.type == skipped_type);
    return f;
  }
};
INSTANTIATE_TEST_SUITE_P(Cpu, ConnectionOptionsTest, ::testing::Values("cpu"));

// Pings sent one at a time, each waiting for its ACK: the first is never a strike, each later
// one inside the minimum interval is, and the strike after max_ping_strikes gets GOAWAY
// ENHANCE_YOUR_CALM "too_many_pings" and a closed connection.
TEST_P(ConnectionOptionsTest, PingsInsideTheMinimumIntervalGetGoawayAfterTheStrikes) {
  for (int strikes : {1, 2, 3}) {
    SCOPED_TRACE(::testing::Message() << "max_ping_strikes " << strikes);
    Options::Connections c;
    c.keepalive_permit_without_calls = true;  // the interval, not the no-call rule, applies
    c.http2_min_recv_ping_interval_without_data = absl::Seconds(10);
    c.http2_max_ping_strikes = strikes;
    Restart(c);
    RawHttp2 h2;
    ConnectSettled(h2);
    const int tolerated = strikes + 1;  // the first ping, then `strikes` strikes
    for (int i = 1; i <= tolerated; ++i) {
      ASSERT_TRUE(h2.SendPing(i));
      const Http2Frame f = h2.Next(absl::Seconds(5));
      ASSERT_TRUE(f.IsPingAck()) << "ping " << i << ": outcome " << f.outcome << " type "
                                 << int(f.type) << " " << f.GoawayDebug();
      EXPECT_EQ(f.PingPayload(), uint64_t(i));
    }
    ASSERT_TRUE(h2.SendPing(tolerated + 1));
    const Http2Frame goaway = NextSkipping(h2, Http2Frame::kPing, absl::Seconds(5));
    ASSERT_TRUE(goaway.IsGoaway()) << "outcome " << goaway.outcome << " type " << int(goaway.type);
    EXPECT_EQ(goaway.GoawayError(), Http2Frame::kEnhanceYourCalm);
    EXPECT_EQ(goaway.GoawayDebug(), "too_many_pings");
    EXPECT_EQ(NextSkipping(h2, Http2Frame::kPing, absl::Seconds(5)).outcome, Http2Frame::kClosed);
  }
}

// Pings spaced wider than the minimum interval are no strikes; with max_ping_strikes 0 any
// number of fast pings is tolerated.
TEST_P(ConnectionOptionsTest, PingsOutsideTheIntervalOrWithoutAStrikeLimitAreAnswered) {
  Options::Connections c;
  c.keepalive_permit_without_calls = true;
  c.http2_min_recv_ping_interval_without_data = absl::Milliseconds(200);
  c.http2_max_ping_strikes = 1;
  Restart(c);
  {
    RawHttp2 spaced;
    ConnectSettled(spaced);
    for (int i = 1; i <= 5; ++i) {
      ASSERT_TRUE(spaced.SendPing(i));
      ASSERT_TRUE(spaced.Next(absl::Seconds(5)).IsPingAck()) << "spaced ping " << i;
      absl::SleepFor(absl::Milliseconds(300));
    }
  }  // closed before the restart, which would wait for it

  c.http2_min_recv_ping_interval_without_data = absl::Seconds(10);
  c.http2_max_ping_strikes = 0;
  Restart(c);
  RawHttp2 unlimited;
  ConnectSettled(unlimited);
  for (int i = 1; i <= 20; ++i) {
    ASSERT_TRUE(unlimited.SendPing(i));
    ASSERT_TRUE(unlimited.Next(absl::Seconds(5)).IsPingAck()) << "unlimited ping " << i;
  }
}

// gRPC's own log lines, captured while a test runs.
class GrpcLogCapture {
 public:
  GrpcLogCapture() {
    Instance() = this;
    gpr_set_log_function(&GrpcLogCapture::Capture);
  }
  ~GrpcLogCapture() {
    gpr_set_log_function(nullptr);  // back to gRPC's default
    Instance() = nullptr;
  }
  bool Contains(const std::string& text) {
    absl::MutexLock lock(&mu_);
    for (const std::string& line : lines_) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

 private:
  static GrpcLogCapture*& Instance() {
    static GrpcLogCapture* instance = nullptr;
    return instance;
  }
  static void Capture(gpr_log_func_args* args) {
    if (GrpcLogCapture* self = Instance()) {
      absl::MutexLock lock(&self->mu_);
      self->lines_.push_back(args->message);
    }
  }
  absl::Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
};

// A gRPC client channel with keepalive pings on an open ingest stream (gRPC core's client
// sends them at most once a second), against a server that accepts one ping in 10 s and one
// strike: the third ping gets GOAWAY too_many_pings, which ends the stream UNAVAILABLE, and
// the client logs it. The same client against a server whose minimum is below its interval
// keeps its stream.
TEST_P(ConnectionOptionsTest, ClientPingingTooOftenIsCutOffWithTooManyPings) {
  for (const bool too_often : {true, false}) {
    SCOPED_TRACE(too_often ? "server minimum 10s" : "server minimum 10ms");
    Options::Connections c;
    c.http2_min_recv_ping_interval_without_data =
        too_often ? absl::Seconds(10) : absl::Milliseconds(10);
    c.http2_max_ping_strikes = 1;
    Restart(c);
    ASSERT_TRUE(Create("h", 2, 2).ok());
    GrpcLogCapture log;
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 100);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateCustomChannel(server_->address(), grpc::InsecureChannelCredentials(), args);
    std::unique_ptr<v1::Ingest::Stub> ingest = v1::Ingest::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    auto stream = ingest->Ingest(&ctx);
    v1::IngestResponse ack;
    ASSERT_TRUE(stream->Write(IndexMessage(1, "h", {0})));
    ASSERT_TRUE(stream->Read(&ack));
    EXPECT_EQ(ack.code(), 0);
    // Idle stream: only the client's keepalive pings cross the connection now.
    absl::SleepFor(absl::Milliseconds(3500));
    if (too_often) {
      EXPECT_FALSE(stream->Write(IndexMessage(2, "h", {1})) && stream->Read(&ack));
      const grpc::Status status = stream->Finish();
      EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
      EXPECT_TRUE(log.Contains("too_many_pings"));
    } else {
      ASSERT_TRUE(stream->Write(IndexMessage(2, "h", {1})));
      ASSERT_TRUE(stream->Read(&ack));
      EXPECT_EQ(ack.code(), 0);
      stream->WritesDone();
      EXPECT_TRUE(stream->Finish().ok());
      EXPECT_FALSE(log.Contains("too_many_pings"));
    }
  }
}

// The server's keepalive: a ping after keepalive_time of silence; unanswered, the connection
// is closed after keepalive_timeout. Without calls it pings only when permitted.
TEST_P(ConnectionOptionsTest, UnansweredKeepaliveClosesTheConnection) {
  Options::Connections c;
  c.keepalive_time = absl::Milliseconds(300);
  c.keepalive_timeout = absl::Milliseconds(500);
  c.keepalive_permit_without_calls = true;
  Restart(c);
  RawHttp2 h2;
  const absl::Time connected = absl::Now();
  ASSERT_TRUE(h2.Connect(server_->address()));
  Http2Frame ping = h2.Next(absl::Seconds(5));
  ASSERT_TRUE(ping.IsPing()) << "outcome " << ping.outcome << " type " << int(ping.type);
  const absl::Time pinged = absl::Now();
  EXPECT_GE(pinged - connected, absl::Milliseconds(250));
  // Not answered: the connection goes after the timeout (a GOAWAY may come first).
  Http2Frame end = NextSkipping(h2, Http2Frame::kGoaway, absl::Seconds(5));
  EXPECT_EQ(end.outcome, Http2Frame::kClosed);
  EXPECT_GE(absl::Now() - pinged, absl::Milliseconds(400));
  EXPECT_LE(absl::Now() - pinged, absl::Seconds(3));

  c.keepalive_permit_without_calls = false;
  Restart(c);
  RawHttp2 idle;
  ASSERT_TRUE(idle.Connect(server_->address()));
  EXPECT_EQ(idle.Next(absl::Milliseconds(1200)).outcome, Http2Frame::kTimedOut)
      << "a keepalive ping on a connection without calls";
}

// Answered keepalive pings keep the connection: they come every keepalive_time.
TEST_P(ConnectionOptionsTest, AnsweredKeepaliveKeepsTheConnection) {
  Options::Connections c;
  c.keepalive_time = absl::Milliseconds(200);
  c.keepalive_timeout = absl::Milliseconds(500);
  c.keepalive_permit_without_calls = true;
  Restart(c);
  RawHttp2 h2;
  ASSERT_TRUE(h2.Connect(server_->address()));
  int pings = 0;
  const absl::Time end = absl::Now() + absl::Milliseconds(1500);
  while (absl::Now() < end) {
    const Http2Frame f = h2.Next(end - absl::Now());
    if (f.outcome == Http2Frame::kTimedOut) break;
    ASSERT_EQ(f.outcome, Http2Frame::kFrame) << "connection closed after " << pings << " pings";
    ASSERT_TRUE(f.IsPing()) << "type " << int(f.type);
    ++pings;
    ASSERT_TRUE(h2.SendPingAck(f.PingPayload()));
  }
  EXPECT_GE(pings, 4);  // 1.5 s / 200 ms, with room for timer slack on a loaded machine
  EXPECT_LE(pings, 8);
}

// max_connection_age: the server's graceful GOAWAY at that age (+-10%): GOAWAY NO_ERROR with
// the largest stream id and a PING; once the PING is answered, the final GOAWAY and the close.
TEST_P(ConnectionOptionsTest, ConnectionOlderThanMaxAgeGetsGoaway) {
  Options::Connections c;
  c.max_connection_age = absl::Milliseconds(500);
  c.max_connection_age_grace = absl::Seconds(2);
  Restart(c);
  RawHttp2 h2;
  const absl::Time connected = absl::Now();
  ASSERT_TRUE(h2.Connect(server_->address()));
  const Http2Frame goaway = h2.Next(absl::Seconds(5));
  const absl::Duration age = absl::Now() - connected;
  ASSERT_TRUE(goaway.IsGoaway()) << "outcome " << goaway.outcome << " type " << int(goaway.type);
  EXPECT_EQ(goaway.GoawayError(), Http2Frame::kNoError);
  EXPECT_GE(age, absl::Milliseconds(400));
  EXPECT_LE(age, absl::Seconds(3));
  const Http2Frame ping = h2.Next(absl::Seconds(5));
  ASSERT_TRUE(ping.IsPing()) << "outcome " << ping.outcome << " type " << int(ping.type);
  ASSERT_TRUE(h2.SendPingAck(ping.PingPayload()));
  const Http2Frame last = h2.Next(absl::Seconds(1));
  ASSERT_TRUE(last.IsGoaway()) << "outcome " << last.outcome << " type " << int(last.type);
  EXPECT_EQ(last.GoawayError(), Http2Frame::kNoError);
  EXPECT_EQ(h2.Next(absl::Seconds(1)).outcome, Http2Frame::kClosed);  // within 1 s, not the grace
}

// A gRPC channel calling through several connection ages: every call succeeds (the client
// reconnects transparently), and the channel left READY more than once (new connections).
// An ingest stream opened before an age goes on over its old connection while the grace is
// infinite, and is ended once a finite grace has passed.
TEST_P(ConnectionOptionsTest, ClientsReconnectTransparentlyAfterMaxAge) {
  Options::Connections c;
  c.max_connection_age = absl::Milliseconds(400);
  Restart(c);
  ASSERT_TRUE(Create("h", 2, 2).ok());
  std::atomic<bool> done{false};
  std::atomic<int> departures{0};
  std::thread watcher([&] {
    grpc_connectivity_state last = channel_->GetState(true);
    while (!done.load()) {
      if (channel_->WaitForStateChange(last, std::chrono::system_clock::now() +
                                                 std::chrono::milliseconds(100))) {
        if (last == GRPC_CHANNEL_READY) departures.fetch_add(1);
        last = channel_->GetState(false);
      }
    }
  });
  auto stream_ctx = std::make_unique<grpc::ClientContext>();
  auto stream = ingest_->Ingest(stream_ctx.get());
  v1::IngestResponse ack;
  int calls = 0, failed = 0;
  const absl::Time end = absl::Now() + absl::Milliseconds(2000);
  for (uint64_t sequence = 1; absl::Now() < end; ++sequence) {
    v1::ListHistogramsRequest req;
    v1::ListHistogramsResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status s = histograms_->ListHistograms(&ctx, req, &resp);
    ++calls;
    if (!s.ok()) {
      ++failed;
      ADD_FAILURE() << "call " << calls << ": " << s.error_code() << " " << s.error_message();
    }
    ASSERT_TRUE(stream->Write(IndexMessage(sequence, "h", {0})));
    ASSERT_TRUE(stream->Read(&ack));
    EXPECT_EQ(ack.code(), 0);
    absl::SleepFor(absl::Milliseconds(50));
  }
  done.store(true);
  watcher.join();
  EXPECT_EQ(failed, 0);
  EXPECT_GE(calls, 10);
  EXPECT_GE(departures.load(), 2) << "connections replaced";
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());

  c.max_connection_age_grace = absl::Milliseconds(300);
  Restart(c);
  ASSERT_TRUE(Create("h", 2, 2).ok());
  grpc::ClientContext graced_ctx;
  auto graced = ingest_->Ingest(&graced_ctx);
  const absl::Time opened = absl::Now();
  ASSERT_TRUE(graced->Write(IndexMessage(1, "h", {0})));
  ASSERT_TRUE(graced->Read(&ack));
  EXPECT_EQ(ack.code(), 0);
  while (graced->Read(&ack)) {
  }
  const grpc::Status ended = graced->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::UNAVAILABLE) << ended.error_message();
  EXPECT_GE(absl::Now() - opened, absl::Milliseconds(500));
  EXPECT_LE(absl::Now() - opened, absl::Seconds(5));
}

TEST_P(ConnectionOptionsTest, OutOfRangeOptionsRefuseTheStart) {
  auto refused = [&](auto change, const std::string& name) {
    Options o = DefaultOptions();
    change(o.connections);
    absl::StatusOr<std::unique_ptr<HistdServer>> s = HistdServer::Start(o);
    ASSERT_FALSE(s.ok()) << name;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(name), std::string::npos) << s.status();
  };
  refused([](Options::Connections& c) { c.keepalive_time = absl::ZeroDuration(); },
          "grpc_keepalive_time");
  refused([](Options::Connections& c) { c.keepalive_timeout = absl::Microseconds(10); },
          "grpc_keepalive_timeout");
  refused([](Options::Connections& c) { c.max_connection_age = -absl::Seconds(1); },
          "grpc_max_connection_age");
  refused([](Options::Connections& c) { c.max_connection_age_grace = -absl::Seconds(1); },
          "grpc_max_connection_age_grace");
  refused([](Options::Connections& c) {
    c.http2_min_recv_ping_interval_without_data = -absl::Seconds(1);
  }, "grpc_http2_min_recv_ping_interval_without_data");
  refused([](Options::Connections& c) { c.http2_max_ping_strikes = -1; },
          "grpc_http2_max_ping_strikes");
}

}  // namespace
}  // namespace histd::server::testing
