#include "bench/loadgen/load_runner.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <thread>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/histd_client.h"
#include "histd/v1/ingest.grpc.pb.h"

namespace histd::bench {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

void SleepUntilNs(int64_t t) {
  std::this_thread::sleep_until(Clock::time_point(std::chrono::nanoseconds(t)));
}

// The run's clock: warm-up from start, measured window [begin, end).
struct Window {
  int64_t start = 0;
  int64_t begin = 0;
  int64_t end = 0;
  bool Contains(int64_t t) const { return t >= begin && t < end; }
};

void NoteError(LoadResult* r, const std::string& what) {
  if (r->first_error.empty()) r->first_error = what;
}

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One producer: a writer (Run, on its own thread) and a reader thread for the acks.
// Thread safety: mu_ guards the send-time queue shared by the two threads; everything else
// belongs to one of them (reader_result_ passes to the writer when the reader is joined),
// and result() is read after Run() has returned.
class Producer {
 public:
  Producer(const LoadSpec& spec, int index) : spec_(spec), index_(index) {
    uint64_t state = spec.seed * 1000003 + static_cast<uint64_t>(index);
    payloads_.resize(std::max(1, spec.payload_buffers));
    for (std::string& p : payloads_) {
      p.resize(spec.message_bytes);
      auto* out = reinterpret_cast<uint32_t*>(p.data());  // std::string data is aligned
      for (size_t i = 0; i < spec.message_bytes / 4; ++i) {
        const uint64_t r = SplitMix64(&state);
        out[i] = static_cast<uint32_t>(((r >> 32) * spec.bins) >> 32);  // uniform in [0, bins)
      }
    }
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(static_cast<int>(spec.message_bytes) + (1 << 16));
    args.SetMaxReceiveMessageSize(1 << 20);
    // A connection of its own, as separate producer processes would have.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    channel_ = client::CreateChannel(spec.target, spec.security, args);
    stub_ = histd::v1::Ingest::NewStub(channel_);
    if (spec.shm) {
      shm_key_ = absl::StrCat("/histd-loadgen-", getpid(), "-", index);
      shm_bytes_ = spec.message_bytes * static_cast<size_t>(std::max(1, spec.max_in_flight));
      const int fd = shm_open(shm_key_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
      if (fd >= 0 && ftruncate(fd, static_cast<off_t>(shm_bytes_)) == 0) {
        void* p = mmap(nullptr, shm_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) shm_ = static_cast<uint8_t*>(p);
      }
      if (fd >= 0) close(fd);
    }
  }
  ~Producer() {
    if (shm_ != nullptr) munmap(shm_, shm_bytes_);
    if (!shm_key_.empty()) shm_unlink(shm_key_.c_str());
  }

  void Run(const Window& w) {
    window_ = w;
    context_.set_deadline(std::chrono::system_clock::now() +
                          std::chrono::nanoseconds(w.end - NowNs()) + std::chrono::seconds(120));
    context_.set_wait_for_ready(true);
    stream_ = stub_->Ingest(&context_);
    if (spec_.shm && !RegisterRegion()) {
      stream_->WritesDone();
      const grpc::Status status = stream_->Finish();
      (void)status;
      return;
    }
    std::thread reader([this] { ReaderLoop(); });

    const double rate = spec_.samples_per_s_per_producer;
    const double interval_ns = rate > 0 ? 1e9 * (spec_.message_bytes / 4) / rate : 0;
    histd::v1::IngestRequest request;
    request.set_type(histd::v1::SAMPLE_TYPE_BIN_INDEX_U32);
    const size_t h = spec_.histograms.size();
    for (uint64_t k = 0;; ++k) {
      if (interval_ns > 0) {
        const int64_t due = w.start + static_cast<int64_t>(k * interval_ns);
        if (due >= w.end) break;
        SleepUntilNs(due);
      }
      const int64_t now = NowNs();
      if (now >= w.end) break;
      {
        auto window_open = [this] {
          mu_.AssertHeld();
          return reader_done_ || static_cast<int>(send_ns_.size()) < spec_.max_in_flight;
        };
        absl::MutexLock lock(&mu_);
        if (!mu_.AwaitWithTimeout(absl::Condition(&window_open),
                                  absl::Nanoseconds(w.end - now))) {
          break;  // the window stayed full until the end
        }
        if (reader_done_) break;
        send_ns_.push_back(NowNs());
      }
      request.set_sequence(k + 1);
      request.set_histogram(spec_.histograms[(index_ + k) % h]);
      std::string& payload = payloads_[k % payloads_.size()];
      bool ok;
      if (spec_.shm) {  // slot k % max_in_flight: its previous message is acknowledged
        const size_t offset = (k % static_cast<uint64_t>(spec_.max_in_flight)) * spec_.message_bytes;
        if (spec_.shm_write_each) std::memcpy(shm_ + offset, payload.data(), payload.size());
        request.mutable_shm()->set_region("loadgen");
        request.mutable_shm()->set_offset(offset);
        request.mutable_shm()->set_count(payload.size() / 4);
        ok = stream_->Write(request);
      } else {
        // Lend the pre-generated buffer to the request instead of copying it.
        request.mutable_samples()->swap(payload);
        ok = stream_->Write(request);
        request.mutable_samples()->swap(payload);
      }
      if (!ok) break;  // the stream is broken; Finish says why
      ++result_.messages_sent;
    }
    stream_->WritesDone();
    reader.join();
    result_.messages = reader_result_.messages;
    result_.samples = reader_result_.samples;
    result_.bytes = reader_result_.bytes;
    result_.rejected = reader_result_.rejected;
    result_.ack_latency = reader_result_.ack_latency;
    result_.first_error = reader_result_.first_error;
    const grpc::Status status = stream_->Finish();
    if (!status.ok()) {
      NoteError(&result_, absl::StrCat("producer ", index_, ": stream ended with ",
                                       status.error_code(), ": ", status.error_message()));
    }
  }

  const LoadResult& result() const { return result_; }

 private:
  // Registers the region on the stream (sequence 0) and reads its acknowledgement.
  bool RegisterRegion() {
    if (shm_ == nullptr) {
      NoteError(&result_, absl::StrCat("producer ", index_, ": cannot create ", shm_key_));
      return false;
    }
    histd::v1::IngestRequest request;
    request.mutable_register_shm()->set_region("loadgen");
    request.mutable_register_shm()->set_key(shm_key_);
    request.mutable_register_shm()->set_byte_size(shm_bytes_);
    histd::v1::IngestResponse ack;
    if (!stream_->Write(request) || !stream_->Read(&ack) || ack.code() != 0) {
      NoteError(&result_, absl::StrCat("producer ", index_, ": shared-memory registration failed: ",
                                       ack.code(), " ", ack.message()));
      return false;
    }
    shm_unlink(shm_key_.c_str());
    shm_key_.clear();
    if (!spec_.shm_write_each) {  // every slot once; messages then only reference them
      const size_t slots = shm_bytes_ / spec_.message_bytes;
      for (size_t k = 0; k < slots; ++k) {
        const std::string& payload = payloads_[k % payloads_.size()];
        std::memcpy(shm_ + k * spec_.message_bytes, payload.data(), payload.size());
      }
    }
    return true;
  }

  void ReaderLoop() {
    histd::v1::IngestResponse ack;
    uint64_t expected = 1;
    while (stream_->Read(&ack)) {
      const int64_t now = NowNs();
      int64_t sent_at = 0;
      bool orphan = false;
      {
        absl::MutexLock lock(&mu_);
        if (send_ns_.empty()) {
          orphan = true;
        } else {
          sent_at = send_ns_.front();
          send_ns_.pop_front();
        }
      }
      if (orphan || ack.sequence() != expected) {
        NoteError(&reader_result_, absl::StrCat("producer ", index_, ": ack for sequence ",
                                                ack.sequence(), " where ", expected,
                                                " was due (one ack per message, in order)"));
        context_.TryCancel();
        break;
      }
      ++expected;
      if (ack.code() != 0) {
        ++reader_result_.rejected;
        NoteError(&reader_result_, absl::StrCat("producer ", index_, ": message ", ack.sequence(),
                                                " rejected, code ", ack.code(), ": ",
                                                ack.message()));
        continue;
      }
      if (window_.Contains(now)) {
        ++reader_result_.messages;
        reader_result_.samples += spec_.message_bytes / 4;
        reader_result_.bytes += spec_.message_bytes;
      }
      if (sent_at >= window_.begin && now < window_.end) {
        reader_result_.ack_latency.Record(now - sent_at);
      }
    }
    absl::MutexLock lock(&mu_);
    reader_done_ = true;
  }

  const LoadSpec& spec_;
  const int index_;
  Window window_;
  std::vector<std::string> payloads_;
  std::string shm_key_;       // until registered
  size_t shm_bytes_ = 0;
  uint8_t* shm_ = nullptr;    // max_in_flight message slots
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<histd::v1::Ingest::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<histd::v1::IngestRequest, histd::v1::IngestResponse>>
      stream_;
  LoadResult result_;         // writer thread; complete when Run() returns
  LoadResult reader_result_;  // reader thread until it is joined

  absl::Mutex mu_;
  std::deque<int64_t> send_ns_ ABSL_GUARDED_BY(mu_);  // written, not yet acknowledged
  bool reader_done_ ABSL_GUARDED_BY(mu_) = false;
};

// Reads (or renders) whole histograms round robin until the window ends.
void QueryLoop(const LoadSpec& spec, const Window& w, LoadResult* out) {
  client::ClientOptions options;
  options.rpc_timeout = absl::Seconds(60);
  options.security = spec.security;
  client::Client client(spec.target, options);
  for (uint64_t q = 0; NowNs() < w.end; ++q) {
    const std::string& name = spec.query_histograms[q % spec.query_histograms.size()];
    if (spec.render) {
      histd::v1::RenderRequest request = *spec.render;
      request.set_name(name);
      const int64_t t0 = NowNs();
      absl::StatusOr<histd::v1::RenderResponse> png = client.Render(request);
      const int64_t t1 = NowNs();
      if (!png.ok() || png->png().empty()) {
        ++out->query_errors;
        NoteError(out, absl::StrCat("render of '", name, "': ",
                                    png.ok() ? "an empty PNG" : png.status().ToString()));
      } else if (w.Contains(t0)) {
        out->query_latency.Record(t1 - t0);
      }
      SleepUntilNs(std::min(NowNs() + absl::ToInt64Nanoseconds(spec.query_interval), w.end));
      continue;
    }
    histd::v1::QueryRequest request;
    request.set_name(name);
    const int64_t t0 = NowNs();
    absl::StatusOr<client::QueryResult> result = client.Query(request);
    const int64_t t1 = NowNs();
    if (!result.ok()) {
      ++out->query_errors;
      NoteError(out, absl::StrCat("query of '", request.name(), "': ", result.status().ToString()));
    } else if (result->bytes.size() != spec.bins) {
      ++out->query_errors;
      NoteError(out, absl::StrCat("query of '", request.name(), "' returned ",
                                  result->bytes.size(), " bytes, expected ", spec.bins));
    } else if (w.Contains(t0)) {
      out->query_latency.Record(t1 - t0);
    }
    const int64_t next = NowNs() + absl::ToInt64Nanoseconds(spec.query_interval);
    SleepUntilNs(std::min(next, w.end));
  }
}

}  // namespace

int LatencyHistogram::BucketOf(int64_t nanos) {
  if (nanos < kSub) return static_cast<int>(std::max<int64_t>(nanos, 0));
  const int exponent = 63 - __builtin_clzll(static_cast<uint64_t>(nanos));  // >= kSubBits
  if (exponent > kMaxExponent) return kBuckets - 1;
  const int sub = static_cast<int>(nanos >> (exponent - kSubBits)) - kSub;
  return kSub + (exponent - kSubBits) * kSub + sub;
}

double LatencyHistogram::BucketMidNanos(int bucket) {
  if (bucket < kSub) return bucket;
  const int exponent = (bucket - kSub) / kSub + kSubBits;
  const int sub = (bucket - kSub) % kSub;
  const double width = std::ldexp(1.0, exponent - kSubBits);
  return (kSub + sub) * width + width / 2;
}

void LatencyHistogram::Record(int64_t nanos) {
  ++counts_[BucketOf(nanos)];
  ++count_;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
}

double LatencyHistogram::QuantileMs(double p) const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  const double rank = std::clamp(p, 0.0, 1.0) * static_cast<double>(count_ - 1);
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (counts_[i] > 0 && static_cast<double>(seen) > rank) return BucketMidNanos(i) / 1e6;
  }
  return BucketMidNanos(kBuckets - 1) / 1e6;
}

absl::StatusOr<LoadResult> RunLoad(const LoadSpec& spec) {
  if (spec.producers < 1) return absl::InvalidArgumentError("producers must be >= 1");
  if (spec.histograms.empty()) return absl::InvalidArgumentError("no histograms to ingest into");
  if (spec.bins == 0 || spec.bins > (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError("bins must be in [1, 2^32]");
  }
  if (spec.message_bytes < 4 || spec.message_bytes % 4 != 0) {
    return absl::InvalidArgumentError("message_bytes must be a positive multiple of 4");
  }
  if (spec.max_in_flight < 1) return absl::InvalidArgumentError("max_in_flight must be >= 1");
  if (spec.measure <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("measure must be > 0");
  }

  std::vector<std::unique_ptr<Producer>> producers;
  for (int i = 0; i < spec.producers; ++i) producers.push_back(std::make_unique<Producer>(spec, i));

  Window w;
  w.start = NowNs() + 20'000'000;  // let every thread start before the first message is due
  w.begin = w.start + absl::ToInt64Nanoseconds(spec.warmup);
  w.end = w.begin + absl::ToInt64Nanoseconds(spec.measure);

  std::vector<std::thread> threads;
  for (auto& p : producers) {
    Producer* producer = p.get();
    threads.emplace_back([producer, w] {
      SleepUntilNs(w.start);
      producer->Run(w);
    });
  }
  LoadResult query_result;
  if (!spec.query_histograms.empty()) {
    threads.emplace_back([&spec, w, &query_result] {
      SleepUntilNs(w.begin);  // queries only during the measured window
      QueryLoop(spec, w, &query_result);
    });
  }
  SleepUntilNs(w.begin);
  if (spec.on_window_start) spec.on_window_start();
  SleepUntilNs(w.end);
  if (spec.on_window_end) spec.on_window_end();
  for (std::thread& t : threads) t.join();

  LoadResult total;
  total.seconds = static_cast<double>(w.end - w.begin) / 1e9;
  for (const auto& p : producers) {
    const LoadResult& r = p->result();
    total.messages += r.messages;
    total.samples += r.samples;
    total.bytes += r.bytes;
    total.messages_sent += r.messages_sent;
    total.rejected += r.rejected;
    total.ack_latency.Merge(r.ack_latency);
    if (!r.first_error.empty()) NoteError(&total, r.first_error);
  }
  total.query_latency = query_result.query_latency;
  total.query_errors = query_result.query_errors;
  if (!query_result.first_error.empty()) NoteError(&total, query_result.first_error);
  return total;
}

}  // namespace histd::bench
