// histctl ingest: stream a sample file into a histogram through one IngestStream, with
// progress on stderr and a summary of what the server acknowledged and rejected.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/histctl/command.h"
#include "client/shm_ring.h"
#include "client/io/sample_reader.h"

namespace histd::histctl {
namespace {

struct IngestOpts {
  std::string format = "auto";
  std::string type = "auto";
  uint64_t message_bytes = 1 << 20;
  uint64_t window = 32;
  std::string progress = "auto";
  double progress_interval = 0.5;
  uint64_t max_errors_shown = 10;
  bool shm = false;
  uint64_t shm_bytes = 0;
};

// "1.23M" style counts.
std::string Human(double v) {
  if (v >= 1e9) return absl::StrFormat("%.2fG", v / 1e9);
  if (v >= 1e6) return absl::StrFormat("%.2fM", v / 1e6);
  if (v >= 1e3) return absl::StrFormat("%.1fk", v / 1e3);
  return absl::StrFormat("%.0f", v);
}

// Prints progress lines from its own thread until stopped. Reads the stream's counters and
// the reader's position, both safe to read from another thread (the reader position via
// the atomic the ingest loop updates).
class Progress {
 public:
  Progress(bool tty, absl::Duration interval, const client::IngestStream* stream,
           std::optional<uint64_t> total_samples, int64_t file_bytes,
           const std::atomic<uint64_t>* bytes_consumed)
      : tty_(tty), interval_(interval), stream_(stream), total_(total_samples),
        file_bytes_(file_bytes), bytes_consumed_(bytes_consumed), start_(absl::Now()) {
    thread_ = std::thread([this] {
      while (!stop_.WaitForNotificationWithTimeout(interval_)) Print(false);
    });
  }
  ~Progress() { Stop(); }

  void Stop() {
    if (!thread_.joinable()) return;
    stop_.Notify();
    thread_.join();
    Print(true);
  }

 private:
  void Print(bool final_line) {
    const client::IngestCounters c = stream_->counters();
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
    std::string percent;
    if (total_.has_value() && *total_ > 0) {
      percent = absl::StrFormat(" (%.1f%%)", 100.0 * c.samples_sent / *total_);
    } else if (file_bytes_ > 0) {
      percent = absl::StrFormat(" (%.1f%% of file)", 100.0 * bytes_consumed_->load() / file_bytes_);
    }
    const std::string line = absl::StrCat(
        "sent ", Human(c.samples_sent), total_.has_value() ? "/" + Human(*total_) : "", " samples",
        percent, ", acked ", Human(c.samples_acked), ", rejected ", Human(c.samples_rejected),
        ", in flight ", c.messages_in_flight(), " msgs, ",
        Human(seconds > 0 ? c.samples_acked / seconds : 0), " samples/s");
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s%s", line.c_str(), final_line ? "\n" : "");
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

  const bool tty_;
  const absl::Duration interval_;
  const client::IngestStream* stream_;
  const std::optional<uint64_t> total_;
  const int64_t file_bytes_;
  const std::atomic<uint64_t>* bytes_consumed_;
  const absl::Time start_;
  absl::Notification stop_;
  std::thread thread_;
};

int RunIngest(const IngestOpts& o, const Invocation& inv) {
  absl::Status args = ExpectPositionals(inv, 2, "NAME FILE");
  if (!args.ok()) return ReportError(args, true);
  const std::string& name = inv.positionals[0];
  const std::string& path = inv.positionals[1];
  client::io::SampleReaderOptions reader_options;
  absl::StatusOr<client::io::FileFormat> format = client::io::ParseFileFormat(o.format);
  if (!format.ok()) return ReportError(format.status(), true);
  reader_options.format = *format;
  absl::StatusOr<histd::v1::SampleType> type = client::io::ParseSampleType(o.type);
  if (!type.ok()) return ReportError(type.status(), true);
  reader_options.type = *type;
  if (o.progress != "auto" && o.progress != "on" && o.progress != "off" && o.progress != "lines") {
    return ReportError(absl::InvalidArgumentError("--progress: want auto, on, lines or off"), true);
  }
  if (o.window == 0 || o.message_bytes == 0) {
    return ReportError(absl::InvalidArgumentError("--window and --message_bytes must be positive"), true);
  }

  absl::StatusOr<std::unique_ptr<client::io::SampleReader>> reader =
      client::io::OpenSampleReader(path, reader_options);
  if (!reader.ok()) return ReportError(reader.status());
  if (!(*reader)->conversion().empty()) {
    std::fprintf(stderr, "histctl: %s: %s\n", path.c_str(), (*reader)->conversion().c_str());
  }

  std::unique_ptr<client::Client> client = inv.Connect();
  client::IngestStreamOptions stream_options;
  stream_options.max_message_bytes = o.message_bytes;
  stream_options.max_in_flight_messages = o.window;
  std::unique_ptr<client::IngestStream> stream = client->OpenIngestStream(stream_options);
  std::unique_ptr<client::ShmRing> ring;
  if (o.shm) {
    const uint64_t ring_bytes = o.shm_bytes != 0 ? o.shm_bytes : o.window * o.message_bytes;
    absl::StatusOr<std::unique_ptr<client::ShmRing>> made =
        client::ShmRing::Create(stream.get(), ring_bytes);
    if (!made.ok()) {
      stream->Finish();
      return ReportError(made.status());
    }
    ring = *std::move(made);
  }

  const bool tty = isatty(fileno(stderr));
  const bool show = o.progress == "on" || o.progress == "lines" || (o.progress == "auto" && tty);
  std::atomic<uint64_t> bytes_consumed{0};
  std::unique_ptr<Progress> progress;
  if (show) {
    progress = std::make_unique<Progress>(tty && o.progress != "lines",
                                          absl::Seconds(o.progress_interval), stream.get(),
                                          (*reader)->total_samples(), (*reader)->file_bytes(),
                                          &bytes_consumed);
  }

  const absl::Time start = absl::Now();
  const histd::v1::SampleType sample_type = (*reader)->type();
  // Read about four messages' worth at a time.
  const size_t sample_bytes = sample_type == histd::v1::SAMPLE_TYPE_XY_F32 ? 8 : 4;
  const size_t read_samples = std::max<size_t>(1, 4 * o.message_bytes / sample_bytes);
  std::string buffer;
  absl::Status local;  // a file error or a broken stream
  while (true) {
    buffer.clear();
    absl::StatusOr<size_t> got = (*reader)->Read(read_samples, &buffer);
    bytes_consumed.store((*reader)->bytes_consumed());
    if (!got.ok()) {
      local = got.status();
      break;
    }
    if (*got == 0) break;
    if (ring == nullptr) {
      local = stream->Send(name, sample_type, buffer);
    } else {  // messages of at most message_bytes, each written into the ring
      const size_t chunk = std::max<size_t>(
          sample_bytes, std::min<uint64_t>(o.message_bytes, ring->capacity()) / sample_bytes *
                            sample_bytes);
      for (size_t at = 0; at < buffer.size() && local.ok(); at += chunk) {
        local = ring->Write(name, sample_type,
                            absl::string_view(buffer).substr(at, std::min(chunk, buffer.size() - at)));
      }
    }
    if (!local.ok()) break;
  }
  // On a file error, what was sent stays sent: Finish still waits for its acks, so the
  // summary is exact, and the file error is reported after it.
  client::IngestSummary summary = stream->Finish();
  if (progress) progress->Stop();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const client::IngestCounters& c = summary.counters;

  std::printf(
      "ingest %s <- %s: %llu %s samples in %llu messages; applied %llu messages (%llu samples), "
      "rejected %llu messages (%llu samples), unacknowledged %llu; %.3f s, %s samples/s\n",
      name.c_str(), path.c_str(), static_cast<unsigned long long>(c.samples_sent),
      client::io::SampleTypeName(sample_type), static_cast<unsigned long long>(c.messages_sent),
      static_cast<unsigned long long>(c.messages_acked), static_cast<unsigned long long>(c.samples_acked),
      static_cast<unsigned long long>(c.messages_rejected),
      static_cast<unsigned long long>(c.samples_rejected),
      static_cast<unsigned long long>(summary.unacknowledged), seconds,
      Human(seconds > 0 ? c.samples_acked / seconds : 0).c_str());
  std::fflush(stdout);

  uint64_t shown = 0;
  for (const client::IngestAck& ack : summary.rejected) {
    if (shown++ >= o.max_errors_shown) break;
    std::fprintf(stderr, "histctl: message %llu (samples %llu..%llu of %s) rejected: %s: %s\n",
                 static_cast<unsigned long long>(ack.sequence),
                 static_cast<unsigned long long>(ack.first_sample),
                 static_cast<unsigned long long>(ack.first_sample + ack.samples), path.c_str(),
                 absl::StatusCodeToString(ack.status.code()).c_str(),
                 std::string(ack.status.message()).c_str());
  }
  // The stream's own failure explains a broken Send best; a file error is reported as is.
  if (!summary.stream_status.ok()) return ReportError(summary.stream_status);
  if (!local.ok()) return ReportError(local);
  absl::Status overall = summary.OverallStatus();
  if (!overall.ok()) return ReportError(overall);
  return kExitOk;
}

}  // namespace

void AddIngestCommand(std::vector<Command>* commands) {
  commands->push_back(
      {"ingest",
       "stream samples from a file (.u32 indices, .f32 x/y pairs, .npy, .csv; integer indices "
       "and float64 coordinates are converted) into a histogram",
       "NAME FILE", [](FlagSet& flags) {
         auto o = std::make_shared<IngestOpts>();
         flags.String("format", &o->format, "input format: auto (by extension), raw, npy or csv");
         flags.String("type", &o->type, "sample type: auto, index (uint32 bin indices) or xy (float32 pairs)");
         flags.Uint("message_bytes", &o->message_bytes, "largest sample payload per message");
         flags.Uint("window", &o->window, "most messages in flight (sent, not yet acknowledged)");
         flags.String("progress", &o->progress, "progress on stderr: auto (when a terminal), on, lines or off");
         flags.Double("progress_interval", &o->progress_interval, "seconds between progress updates");
         flags.Uint("max_errors_shown", &o->max_errors_shown, "rejected messages to print");
         flags.Bool("shm", &o->shm,
                    "zero-copy local ingest: send the samples through a shared-memory ring "
                    "(the daemon must run with --allow_shm_ingest on this host)");
         flags.Uint("shm_bytes", &o->shm_bytes, "size of the --shm ring (0: window x message_bytes)");
         return [o](const Invocation& inv) { return RunIngest(*o, inv); };
       }});
}

}  // namespace histd::histctl
