// Fuzz target: Histograms.ReadAndResetHistogram without its transport
// (server/core/read_and_reset_reader.h: what the gRPC reactor runs on a worker, and the
// chunks it writes), with create and ingest filling histograms between cycles, against the
// CPU engine.
//
// Feeds: one serialized histd.fuzz.ReadAndResetProgram (histd_fuzz.proto), mutated field by
// field (proto_mutator.h); its calls run in order against the process's core (fuzz_core.h:
// 4 KiB default chunks, 16 KiB messages, 4 concurrent queries). A read-and-reset holds a
// query permit as the gRPC service's does; it may be cancelled before the reset, and its
// client may stop reading after some chunks (the reader is dropped, as the reactor is).
// Asserts, against the histogram's info and bins read just before (GetHistogramInfo and a
// whole-histogram Query; nothing else runs meanwhile):
//   - cancelled before the reset: not OK; not OK: the histogram untouched (bins, counters);
//   - OK: each chunk's offset is the bytes before it, its data at most the chunk size asked
//     (0: the default; within [1, message limit - 4096]) and the whole chunk within the
//     message limit; only the first carries info and total_bytes = rows x cols; read to the
//     end, the chunks add up to total_bytes and are the bins read before, in as many chunks
//     as the chunk size gives; the info is the histogram's spec, the cycle's counters are
//     those read before, total_count is the bins' sum and saturated_bins the bins at cap,
//     and the sum equals samples_applied when no bin is at cap (else is at most it);
//   - after an OK call, however far it was read: every bin and counter is zero.
// The core keeps serving, with every permit and charge returned (fuzz_core.h). INTERNAL or
// UNKNOWN codes and broken invariants are findings (printed, counted).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "histd_fuzz.pb.h"
#include "server/core/read_and_reset_reader.h"
#include "tests/fuzz/fuzz_core.h"

namespace histd::fuzz {
namespace {

constexpr uint64_t kChunkHeaderRoom = 4096;  // the reader's room for a chunk's other fields

// The counters of a cycle, as HistogramInfo carries them.
std::string Counters(const v1::HistogramInfo& info) {
  return absl::StrCat(info.samples_applied(), "/", info.samples_rejected(), "/",
                      info.messages_applied(), "/", info.messages_rejected(), "/",
                      info.x_underflow(), "/", info.x_overflow(), "/", info.y_underflow(), "/",
                      info.y_overflow(), "/", info.samples_outside(), "/", info.x_nan(), "/",
                      info.y_nan());
}

// What a read-and-reset must have left: the histogram untouched, or zeroed.
std::string CheckAfter(FuzzCore& d, const std::string& name, const v1::HistogramInfo& before_info,
                       const std::string& before_bins, bool zeroed) {
  const absl::StatusOr<v1::HistogramInfo> info = d.Info(name);
  const absl::StatusOr<std::string> bins = d.Bins(name);
  if (!info.ok() || !bins.ok()) {
    return "the histogram cannot be read after: " + (info.ok() ? bins.status() : info.status()).ToString();
  }
  if (zeroed) {
    if (*bins != std::string(before_bins.size(), '\0') || info->total_count() != 0 ||
        Counters(*info) != Counters(v1::HistogramInfo())) {
      return "not zeroed: total_count " + std::to_string(info->total_count()) + ", counters " +
             Counters(*info);
    }
  } else if (*bins != before_bins || Counters(*info) != Counters(before_info)) {
    return "a failed read-and-reset changed the histogram: counters " + Counters(before_info) +
           " -> " + Counters(*info);
  }
  return "";
}

void RunReadAndReset(FuzzCore& d, const ReadAndResetCall& call) {
  const v1::ReadAndResetHistogramRequest& request = call.read_and_reset();
  const absl::StatusOr<v1::HistogramInfo> before_info = d.Info(request.name());
  const absl::StatusOr<std::string> before_bins = d.Bins(request.name());
  const bool exists = before_info.ok() && before_bins.ok();

  absl::StatusOr<server::ConcurrencyLimit::Permit> permit = d.ctx().queries.TryAcquire();
  if (!permit.ok()) {
    d.Check("ReadAndReset", permit.status(), request);
    return;
  }
  absl::StatusOr<std::unique_ptr<server::ReadAndResetReader>> reader =
      server::ReadAndResetReader::Open(d.ctx(), request, [&call] { return call.cancelled(); });
  d.Check("ReadAndReset", reader.status(), request);
  std::string broken;
  if (reader.ok() && (call.cancelled() || !exists)) {
    broken = call.cancelled() ? "a call cancelled before the reset answered OK"
                              : "OK for a histogram that GetHistogramInfo does not find";
  }
  if (reader.ok() && broken.empty()) {
    const server::Options& o = *d.ctx().options;
    const uint64_t limit = static_cast<uint64_t>(o.limits.max_message_bytes);
    const uint64_t chunk_bytes = std::clamp<uint64_t>(
        request.max_chunk_bytes() != 0 ? request.max_chunk_bytes() : o.query.chunk_bytes, 1,
        std::max<uint64_t>(1, limit > kChunkHeaderRoom ? limit - kChunkHeaderRoom : 1));
    const v1::HistogramSpec& spec = before_info->spec();
    const uint64_t total = uint64_t{spec.rows()} * spec.cols();
    v1::ReadAndResetChunk chunk;
    v1::HistogramInfo info;
    std::string bins;
    uint64_t chunks = 0, total_bytes = 0;
    while (!(*reader)->done() && (call.chunks_read() == 0 || chunks < call.chunks_read())) {
      (*reader)->NextChunk(&chunk);
      if (chunks == 0) {
        info = chunk.info();
        total_bytes = chunk.total_bytes();
      }
      if (broken.empty() &&
          (chunk.offset() != bins.size() || chunk.data().size() > chunk_bytes ||
           chunk.ByteSizeLong() > limit || chunk.has_info() != (chunks == 0) ||
           (chunks > 0 && chunk.total_bytes() != 0) || (chunks == 0 && total_bytes != total))) {
        broken = absl::StrCat("chunk ", chunks, ": offset ", chunk.offset(), " after ",
                              bins.size(), " bytes, ", chunk.data().size(), " bytes of data (",
                              chunk_bytes, " asked), ", chunk.ByteSizeLong(), " in all, info ",
                              chunk.has_info(), ", total_bytes ", chunk.total_bytes(), " of ",
                              total);
      }
      bins += chunk.data();
      ++chunks;
    }
    const uint64_t want_chunks = std::max<uint64_t>(1, (total + chunk_bytes - 1) / chunk_bytes);
    if (broken.empty() && (*reader)->done()) {
      uint64_t sum = 0, saturated = 0;
      for (const char c : bins) {
        sum += static_cast<uint8_t>(c);
        saturated += static_cast<uint8_t>(c) == spec.cap();
      }
      if (bins.size() != total || chunks != want_chunks || bins != *before_bins) {
        broken = absl::StrCat(bins.size(), " bytes in ", chunks, " chunks, ", total, " in ",
                              want_chunks, " wanted", bins == *before_bins ? "" : ", other bins");
      } else if (info.spec().SerializeAsString() != spec.SerializeAsString() ||
                 Counters(info) != Counters(*before_info) || info.total_count() != sum ||
                 info.saturated_bins() != saturated ||
                 (saturated == 0 ? sum != info.samples_applied() : sum > info.samples_applied())) {
        broken = absl::StrCat("the cycle's info ", info.ShortDebugString(), "; before: ",
                              before_info->ShortDebugString(), "; bins sum ", sum, ", ",
                              saturated, " at cap");
      }
    }
  }
  if (reader.ok()) reader->reset();  // the stream ends, read to the end or not
  if (broken.empty() && exists) {
    broken = CheckAfter(d, request.name(), *before_info, *before_bins, reader.ok());
  }
  if (!broken.empty()) d.Finding("ReadAndReset", broken, request);
}

void Run(const ReadAndResetProgram& program) {
  FuzzCore& d = FuzzCore::Get();
  for (int i = 0; i < program.calls_size() && i < kMaxCallsPerInput; ++i) {
    const ReadAndResetCall& call = program.calls(i);
    switch (call.call_case()) {
      case ReadAndResetCall::kCreate:
        (void)d.Create(call.create());
        break;
      case ReadAndResetCall::kIngest:
        d.Ingest(call.ingest());
        break;
      case ReadAndResetCall::kReadAndReset:
        RunReadAndReset(d, call);
        break;
      case ReadAndResetCall::CALL_NOT_SET:
        break;
    }
  }
  d.EndInput();
}

}  // namespace
}  // namespace histd::fuzz

HISTD_FUZZ_PROGRAM_TARGET(histd::fuzz::ReadAndResetProgram, {"a", "b", "h", "", "missing"})
