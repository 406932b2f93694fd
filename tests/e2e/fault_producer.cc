// histd_fault_producer: the producer and the reference check of tests/e2e/fault_test.sh.
//
//   produce --server=HOST:PORT --histogram=NAME --bins=N --seed=S --log=FILE
//           [--max_samples=4096] [--rate=250] [--messages=0] [--window=32]
//       Streams messages over one ingest stream (client/ingest_stream.h). Message k (1, 2,
//       ...) holds MessageSamples(S, k, max_samples) bin indices drawn by MessageSample(S, k,
//       i) in [0, N), so the log need not carry samples: S and k recompute them. At most
//       `rate` messages a second; `messages` > 0 stops after that many, 0 runs until the
//       daemon ends the stream. FILE gets one line per event, flushed as it happens (times
//       are microseconds since the epoch, as bash's $EPOCHREALTIME):
//         start seed=S bins=N max_samples=M histogram=NAME
//         sent K T        before message K is handed to the stream
//         unsent K        it never left (the stream was already closed): nothing applied
//         ack K CODE T    its acknowledgement (CODE: google.rpc.Code; 0 = applied)
//         error TEXT      a protocol violation or a local failure
//         end exit=E stream=CODE unacknowledged=U sent=.. acked=.. refused=.. TEXT
//       Exit status: 0  every message sent and applied (`messages` > 0);
//                    3  the daemon shut down gracefully: its stream ended UNAVAILABLE
//                       "histd is shutting down" with every sent message acknowledged
//                       (applied, or refused UNAVAILABLE after the shutdown notice);
//                    4  the stream broke without that shutdown (daemon killed, connection
//                       lost); messages left unacknowledged have an unknown fate;
//                    1  this producer's own failure: a rejection other than UNAVAILABLE, an
//                       acknowledgement that does not match what was sent, a log write;
//                    2  usage.
//
//   check --npy=FILE.npy --cap=C --mode=exact|bounded [--kill_time_us=T --window_ms=W] LOG...
//       Recomputes each producer's messages from its log and compares, bin for bin, with
//       FILE (rows x cols u1, as `histctl query NAME -o FILE.npy` writes it):
//         exact    (graceful shutdown) every sent message must have an acknowledgement, and
//                  each bin must equal min(C, hits of the applied messages).
//         bounded  (kill -9) min(C, hits of messages applied and acknowledged at or before
//                  T - W) <= bin <= min(C, hits of every message sent and not refused).
//       Fails when a bin of the sent messages reaches C (saturation would hide counts).
//       Prints "key value" lines: messages_sent messages_acked messages_refused
//       messages_unacknowledged samples_sent samples_acked restored_samples max_bin
//       missing_acked_samples extra_samples; bounded also samples_lower_bound and
//       loss_window_ms (how far back from T the acknowledged samples missing from FILE
//       reach, if the newest were the ones lost). Exit 0 when the check holds, 1 when not.
//
//   flip FILE OFFSET COUNT    inverts COUNT bytes of FILE from OFFSET (a damaged snapshot).
//
// The check is independent of the client library: it reads the logs and the .npy itself.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "client/histd_client.h"
#include "client/ingest_stream.h"

namespace {

constexpr int kExitApplied = 0;
constexpr int kExitOwnFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitGracefulShutdown = 3;
constexpr int kExitStreamBroken = 4;
constexpr int kCodeUnavailable = 14;  // google.rpc.Code

[[noreturn]] void Usage(const std::string& message) {
  std::fprintf(stderr, "histd_fault_producer: %s (see tests/e2e/fault_producer.cc)\n",
               message.c_str());
  std::exit(kExitUsage);
}

// --name=value arguments; the others are returned as positional.
std::map<std::string, std::string> ParseFlags(int argc, char** argv,
                                              std::vector<std::string>* positional) {
  std::map<std::string, std::string> flags;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0) {
      const size_t eq = arg.find('=');
      if (eq == std::string::npos) Usage("flag without a value: " + arg);
      flags[arg.substr(2, eq - 2)] = arg.substr(eq + 1);
    } else {
      positional->push_back(arg);
    }
  }
  return flags;
}

uint64_t ToU64(const std::string& s) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0') Usage("not a number: " + s);
  return v;
}

std::string Flag(const std::map<std::string, std::string>& flags, const std::string& name,
                 const char* fallback = nullptr) {
  auto it = flags.find(name);
  if (it != flags.end()) return it->second;
  if (fallback == nullptr) Usage("missing --" + name);
  return fallback;
}

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---------------------------------------------------------------- the samples
// splitmix64: message k of seed s is a pure function of (s, k), for the producer and check.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t MessageKey(uint64_t seed, uint64_t k) { return Mix(Mix(seed) ^ Mix(k + 0x51ed27)); }

uint64_t MessageSamples(uint64_t seed, uint64_t k, uint64_t max_samples) {
  return 1 + MessageKey(seed, k) % max_samples;
}

void MessageIndices(uint64_t seed, uint64_t k, uint64_t max_samples, uint64_t bins,
                    std::vector<uint32_t>* out) {
  const uint64_t key = MessageKey(seed, k);
  const uint64_t n = MessageSamples(seed, k, max_samples);
  out->resize(n);
  for (uint64_t i = 0; i < n; ++i) (*out)[i] = static_cast<uint32_t>(Mix(key + i) % bins);
}

// ---------------------------------------------------------------- produce
class EventLog {
 public:
  explicit EventLog(const std::string& path) : file_(std::fopen(path.c_str(), "w")) {
    if (file_ == nullptr) Usage("cannot write " + path);
  }
  ~EventLog() { std::fclose(file_); }
  // One line, flushed; false when it could not be written.
  bool Line(const std::string& line) {
    absl::MutexLock lock(&mu_);
    const bool ok = std::fputs(line.c_str(), file_) >= 0 && std::fputc('\n', file_) != EOF &&
                    std::fflush(file_) == 0;
    if (!ok) failed_ = true;
    return ok;
  }
  bool failed() {
    absl::MutexLock lock(&mu_);
    return failed_;
  }

 private:
  absl::Mutex mu_;
  FILE* file_;
  bool failed_ = false;
};

int Produce(const std::map<std::string, std::string>& flags) {
  const std::string server = Flag(flags, "server");
  const std::string histogram = Flag(flags, "histogram");
  const uint64_t bins = ToU64(Flag(flags, "bins"));
  const uint64_t seed = ToU64(Flag(flags, "seed"));
  const uint64_t max_samples = ToU64(Flag(flags, "max_samples", "4096"));
  const uint64_t rate = ToU64(Flag(flags, "rate", "250"));
  const uint64_t messages = ToU64(Flag(flags, "messages", "0"));
  const uint64_t window = ToU64(Flag(flags, "window", "32"));
  if (bins == 0 || bins > (uint64_t{1} << 32) || max_samples == 0 || rate == 0 || window == 0) {
    Usage("--bins must be in [1, 2^32], --max_samples, --rate and --window >= 1");
  }
  EventLog log(Flag(flags, "log"));
  log.Line("start seed=" + std::to_string(seed) + " bins=" + std::to_string(bins) +
           " max_samples=" + std::to_string(max_samples) + " histogram=" + histogram);

  // The reader thread checks every ack against what message `sequence` carried.
  std::atomic<bool> mismatch{false};
  std::atomic<bool> foreign_rejection{false};
  uint64_t next_ack = 1, first_sample = 0;  // reader thread only
  histd::client::IngestStreamOptions options;
  options.max_message_bytes = 4 * max_samples;  // one SendIndices + Flush = one message
  options.max_in_flight_messages = window;
  options.on_ack = [&](const histd::client::IngestAck& ack) {
    const int code = static_cast<int>(ack.status.code());
    log.Line("ack " + std::to_string(ack.sequence) + " " + std::to_string(code) + " " +
             std::to_string(NowMicros()));
    const uint64_t want = MessageSamples(seed, ack.sequence, max_samples);
    if (ack.sequence != next_ack || ack.first_sample != first_sample || ack.samples != want ||
        ack.histogram != histogram) {
      log.Line("error ack " + std::to_string(ack.sequence) + " (first sample " +
               std::to_string(ack.first_sample) + ", " + std::to_string(ack.samples) +
               " samples) does not match message " + std::to_string(next_ack) +
               " (first sample " + std::to_string(first_sample) + ", " + std::to_string(want) +
               " samples)");
      mismatch = true;
    }
    if (!ack.status.ok() && code != kCodeUnavailable) {
      log.Line("error message " + std::to_string(ack.sequence) + " rejected: " +
               ack.status.ToString());
      foreign_rejection = true;
    }
    next_ack = ack.sequence + 1;
    first_sample += ack.samples;
  };

  histd::client::Client client(server);
  std::unique_ptr<histd::client::IngestStream> stream = client.OpenIngestStream(options);
  std::vector<uint32_t> indices;
  const auto begin = std::chrono::steady_clock::now();
  for (uint64_t k = 1; messages == 0 || k <= messages; ++k) {
    std::this_thread::sleep_until(begin + std::chrono::microseconds((k - 1) * 1000000 / rate));
    MessageIndices(seed, k, max_samples, bins, &indices);
    log.Line("sent " + std::to_string(k) + " " + std::to_string(NowMicros()));
    absl::Status sent = stream->SendIndices(histogram, indices);
    if (sent.ok()) sent = stream->Flush();
    if (!sent.ok()) {
      // A message the stream refused to write is not counted as sent (ingest_stream.h).
      if (stream->counters().messages_sent < k) log.Line("unsent " + std::to_string(k));
      break;
    }
  }
  const histd::client::IngestSummary summary = stream->Finish();
  const absl::Status& end = summary.stream_status;
  int exit_code;
  if (mismatch || foreign_rejection || log.failed()) {
    exit_code = kExitOwnFailure;
  } else if (end.ok() && summary.unacknowledged == 0 && summary.counters.messages_rejected == 0) {
    exit_code = messages > 0 ? kExitApplied : kExitOwnFailure;  // the daemon cannot end it OK
  } else if (absl::IsUnavailable(end) && summary.unacknowledged == 0 &&
             end.message().rfind("histd is shutting down", 0) == 0) {
    exit_code = kExitGracefulShutdown;
  } else if (!end.ok() && !absl::IsInternal(end)) {
    exit_code = kExitStreamBroken;  // INTERNAL: the library's protocol check failed
  } else {
    exit_code = kExitOwnFailure;
  }
  const histd::client::IngestCounters& c = summary.counters;
  const std::string line =
      "end exit=" + std::to_string(exit_code) + " stream=" +
      std::to_string(static_cast<int>(end.code())) + " unacknowledged=" +
      std::to_string(summary.unacknowledged) + " sent=" + std::to_string(c.messages_sent) +
      " acked=" + std::to_string(c.messages_acked) + " refused=" +
      std::to_string(c.messages_rejected) + " samples_acked=" + std::to_string(c.samples_acked) +
      " " + end.ToString();
  log.Line(line);
  std::fprintf(stderr, "histd_fault_producer seed %" PRIu64 ": %s\n", seed, line.c_str());
  return exit_code;
}

// ---------------------------------------------------------------- check
struct Npy {
  uint64_t rows = 0, cols = 0;
  std::string data;
};

std::string ReadFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) Usage("cannot read " + path);
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

// A 2D |u1 C-order .npy (version 1.0), as histctl writes a u8 query.
Npy ReadU8Npy(const std::string& path) {
  const std::string bytes = ReadFile(path);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0 || bytes[6] != 1) {
    Usage(path + ": not a version 1.0 .npy");
  }
  const size_t len =
      static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  const std::string dict = bytes.substr(10, len);
  if (dict.find("'descr': '|u1'") == std::string::npos ||
      dict.find("'fortran_order': False") == std::string::npos) {
    Usage(path + ": not a C-order |u1 array: " + dict);
  }
  Npy a;
  const size_t s = dict.find("'shape': (");
  if (s == std::string::npos ||
      std::sscanf(dict.c_str() + s + 10, "%" SCNu64 ", %" SCNu64, &a.rows, &a.cols) != 2) {
    Usage(path + ": not a 2D shape: " + dict);
  }
  a.data = bytes.substr(10 + len);
  if (a.data.size() != a.rows * a.cols) Usage(path + ": data length does not match the shape");
  return a;
}

struct Message {
  bool sent = false;
  bool unsent = false;
  bool acked = false;
  int code = -1;
  int64_t ack_us = 0;
};

struct ProducerLog {
  std::string path;
  uint64_t seed = 0, bins = 0, max_samples = 0;
  std::map<uint64_t, Message> messages;
};

ProducerLog ReadLog(const std::string& path) {
  ProducerLog log;
  log.path = path;
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) Usage("cannot read " + path);
  char line[4096];
  bool started = false;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    uint64_t k = 0;
    int code = 0;
    int64_t t = 0;
    if (std::sscanf(line, "start seed=%" SCNu64 " bins=%" SCNu64 " max_samples=%" SCNu64,
                    &log.seed, &log.bins, &log.max_samples) == 3) {
      started = true;
    } else if (std::sscanf(line, "sent %" SCNu64 " %" SCNd64, &k, &t) == 2) {
      log.messages[k].sent = true;
    } else if (std::sscanf(line, "unsent %" SCNu64, &k) == 1) {
      log.messages[k].unsent = true;
    } else if (std::sscanf(line, "ack %" SCNu64 " %d %" SCNd64, &k, &code, &t) == 3) {
      Message& m = log.messages[k];
      m.acked = true;
      m.code = code;
      m.ack_us = t;
    }
    // "error" and "end" lines are for people; the exit status carries them.
  }
  std::fclose(f);
  if (!started) Usage(path + ": no start line");
  return log;
}

int Check(const std::map<std::string, std::string>& flags,
          const std::vector<std::string>& logs) {
  const Npy actual = ReadU8Npy(Flag(flags, "npy"));
  const uint64_t cap = ToU64(Flag(flags, "cap"));
  const std::string mode = Flag(flags, "mode");
  if (mode != "exact" && mode != "bounded") Usage("--mode must be exact or bounded");
  const bool bounded = mode == "bounded";
  const int64_t kill_us = bounded ? static_cast<int64_t>(ToU64(Flag(flags, "kill_time_us"))) : 0;
  const int64_t window_us = bounded ? static_cast<int64_t>(ToU64(Flag(flags, "window_ms"))) * 1000 : 0;
  if (logs.empty()) Usage("no producer logs");
  const uint64_t bins = actual.rows * actual.cols;

  std::vector<uint64_t> acked(bins, 0), upper(bins, 0), lower(bins, 0);
  uint64_t messages_sent = 0, messages_acked = 0, messages_refused = 0, unacknowledged = 0;
  uint64_t samples_sent = 0, samples_acked = 0, samples_lower = 0;
  std::vector<std::pair<int64_t, uint64_t>> ack_times;  // (ack time, samples) of applied
  int failures = 0;
  std::vector<uint32_t> indices;
  for (const std::string& path : logs) {
    const ProducerLog log = ReadLog(path);
    if (log.bins != bins) {
      std::fprintf(stderr, "check: %s streamed into %" PRIu64 " bins, the .npy has %" PRIu64 "\n",
                   path.c_str(), log.bins, bins);
      return 1;
    }
    uint64_t expected_k = 1;
    for (const auto& [k, m] : log.messages) {
      if (k != expected_k++ || !m.sent) {
        std::fprintf(stderr, "check: %s: message %" PRIu64 " has no 'sent' line or is out of order\n",
                     path.c_str(), k);
        return 1;
      }
      if (m.unsent) continue;  // never left the producer
      MessageIndices(log.seed, k, log.max_samples, bins, &indices);
      ++messages_sent;
      samples_sent += indices.size();
      if (m.acked && m.code != 0) {  // refused: nothing of it applied
        ++messages_refused;
        continue;
      }
      for (uint32_t i : indices) ++upper[i];
      if (!m.acked) {
        ++unacknowledged;
        if (!bounded) {  // a graceful shutdown acknowledges every message it received
          if (failures < 5) {
            std::fprintf(stderr, "check: %s: message %" PRIu64 " was sent and never acknowledged\n",
                         path.c_str(), k);
          }
          ++failures;
        }
        continue;
      }
      ++messages_acked;
      samples_acked += indices.size();
      ack_times.emplace_back(m.ack_us, indices.size());
      for (uint32_t i : indices) ++acked[i];
      if (bounded && m.ack_us <= kill_us - window_us) {
        samples_lower += indices.size();
        for (uint32_t i : indices) ++lower[i];
      }
    }
  }

  uint64_t restored = 0, max_bin = 0, missing = 0, extra = 0, saturated = 0;
  for (uint64_t b = 0; b < bins; ++b) {
    const uint64_t got = static_cast<unsigned char>(actual.data[b]);
    restored += got;
    max_bin = std::max(max_bin, upper[b]);
    if (upper[b] >= cap) ++saturated;
    const uint64_t want_acked = std::min(cap, acked[b]);
    missing += want_acked > got ? want_acked - got : 0;
    extra += got > want_acked ? got - want_acked : 0;
    const uint64_t lo = bounded ? std::min(cap, lower[b]) : want_acked;
    const uint64_t hi = bounded ? std::min(cap, upper[b]) : want_acked;
    if (got < lo || got > hi) {
      if (failures < 5) {
        const std::string want = lo == hi ? std::to_string(lo)
                                          : "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
        std::fprintf(stderr, "check: bin %" PRIu64 " (row %" PRIu64 ", col %" PRIu64 ") = %" PRIu64
                     ", want %s (acknowledged: %" PRIu64 ")\n",
                     b, b / actual.cols, b % actual.cols, got, want.c_str(), acked[b]);
      }
      ++failures;
    }
  }
  if (saturated > 0) {
    std::fprintf(stderr, "check: %" PRIu64 " bins reach the cap %" PRIu64
                 "; send fewer samples so that counts compare exactly\n", saturated, cap);
    ++failures;
  }
  std::printf("messages_sent %" PRIu64 "\nmessages_acked %" PRIu64 "\nmessages_refused %" PRIu64
              "\nmessages_unacknowledged %" PRIu64 "\nsamples_sent %" PRIu64
              "\nsamples_acked %" PRIu64 "\nrestored_samples %" PRIu64 "\nmax_bin %" PRIu64
              "\nmissing_acked_samples %" PRIu64 "\nextra_samples %" PRIu64 "\n",
              messages_sent, messages_acked, messages_refused, unacknowledged, samples_sent,
              samples_acked, restored, max_bin, missing, extra);
  if (bounded) {
    // How far back from the kill the newest acknowledged samples reach to make up `missing`.
    std::sort(ack_times.begin(), ack_times.end());
    uint64_t newest = 0;
    int64_t reach_us = 0;
    for (auto it = ack_times.rbegin(); it != ack_times.rend() && newest < missing; ++it) {
      newest += it->second;
      reach_us = kill_us - it->first;
    }
    std::printf("samples_lower_bound %" PRIu64 "\nloss_window_ms %.1f\n", samples_lower,
                reach_us / 1000.0);
  }
  if (failures > 0) {
    std::fprintf(stderr, "check: FAIL (%d problems)\n", failures);
    return 1;
  }
  return 0;
}

// ---------------------------------------------------------------- flip
int Flip(const std::vector<std::string>& args) {
  if (args.size() != 3) Usage("flip FILE OFFSET COUNT");
  const uint64_t offset = ToU64(args[1]), count = ToU64(args[2]);
  FILE* f = std::fopen(args[0].c_str(), "r+b");
  if (f == nullptr) Usage("cannot open " + args[0]);
  std::string bytes(count, '\0');
  if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0 ||
      std::fread(bytes.data(), 1, count, f) != count) {
    Usage("cannot read " + std::to_string(count) + " bytes at " + std::to_string(offset));
  }
  for (char& c : bytes) c = static_cast<char>(~c);
  if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0 ||
      std::fwrite(bytes.data(), 1, count, f) != count || std::fclose(f) != 0) {
    Usage("cannot write " + args[0]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  std::vector<std::string> positional;
  const std::map<std::string, std::string> flags =
      ParseFlags(std::max(0, argc - 2), argv + std::min(argc, 2), &positional);
  if (cmd == "produce" && positional.empty()) return Produce(flags);
  if (cmd == "check") return Check(flags, positional);
  if (cmd == "flip" && flags.empty()) return Flip(positional);
  Usage("usage: produce|check|flip");
}
