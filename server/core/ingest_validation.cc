#include "server/core/ingest_validation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace histd::server {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the wire format is little-endian and copied as is");

const char* KindName(SampleKind kind) {
  return kind == SampleKind::kBinIndex ? "SAMPLE_TYPE_BIN_INDEX_U32" : "SAMPLE_TYPE_XY_F32";
}

// Hot loops. This file is compiled at -O3 (server/CMakeLists.txt) and these two functions
// get an AVX2 clone picked at load time, so each reduction runs as packed compares: about
// 3x the scalar -O2 loop, close to memcpy speed (measured with 1 MiB messages, x86-64).
// The 4-byte loads go through memcpy: the payload has no alignment guarantee.
__attribute__((target_clones("avx2", "default"))) uint32_t LargestWord(const uint8_t* p,
                                                                      size_t words) {
  uint32_t largest = 0;
  for (size_t i = 0; i < words; ++i) {
    uint32_t v;
    std::memcpy(&v, p + 4 * i, 4);
    largest = v > largest ? v : largest;
  }
  return largest;
}

// Nonzero when some word has all float32 exponent bits set (inf or NaN).
__attribute__((target_clones("avx2", "default"))) uint32_t AnyNonFinite(const uint8_t* p,
                                                                       size_t words) {
  constexpr uint32_t kExponent = 0x7f800000u;
  uint32_t any = 0;
  for (size_t i = 0; i < words; ++i) {
    uint32_t bits;
    std::memcpy(&bits, p + 4 * i, 4);
    any |= static_cast<uint32_t>((bits & kExponent) == kExponent);
  }
  return any;
}

// Copies `words` 4-byte words from src to dst (when dst is not null) and reduces them with
// `reduce` in L1-sized chunks, so each byte comes from memory once. Returns the reductions
// combined with `combine`.
template <typename Reduce, typename Combine>
uint32_t CopyAndReduce(const uint8_t* src, size_t words, uint8_t* dst, Reduce reduce,
                       Combine combine) {
  constexpr size_t kChunkWords = 4096;  // 16 KiB: in L1 between the copy and the scan
  uint32_t result = 0;
  for (size_t i = 0; i < words; i += kChunkWords) {
    const size_t n = std::min(kChunkWords, words - i);
    const uint8_t* chunk = src + 4 * i;
    if (dst != nullptr) {
      std::memcpy(dst + 4 * i, chunk, 4 * n);
      chunk = dst + 4 * i;
    }
    result = combine(result, reduce(chunk, n));
  }
  return result;
}

// Which reduction a copy computes: the largest word (bin indices) or whether any word is
// a non-finite float32 (coordinates), with its combining step.
enum class Check { kLargest, kNonFinite };

template <Check kCheck>
uint32_t ReduceWords(const uint8_t* p, size_t words) {
  return kCheck == Check::kLargest ? LargestWord(p, words) : AnyNonFinite(p, words);
}
template <Check kCheck>
uint32_t Combine(uint32_t a, uint32_t b) {
  return kCheck == Check::kLargest ? (a > b ? a : b) : (a | b);
}

#if defined(__x86_64__)
// Streaming copy for large parts (x86-64 with AVX2): each 32-byte vector is loaded once,
// reduced in registers and written with a non-temporal store, so the staging buffer's lines
// are neither read for ownership nor left in the cache (the device, or the engine's
// threads, read them later). The previous chunked memcpy + re-scan ran at about half this
// speed (bench/staging_copy.cc). Ends with a store fence: the caller publishes the buffer
// with ordinary release operations, which do not order non-temporal stores on x86.
// Requires dst 4-byte aligned; head and tail words go through CopyAndReduce.
template <Check kCheck>
__attribute__((target("avx2"))) uint32_t StreamCopyAndReduce(const uint8_t* src, size_t words,
                                                              uint8_t* dst) {
  auto reduce = ReduceWords<kCheck>;
  auto combine = Combine<kCheck>;
  constexpr size_t kVectorWords = 8, kStepWords = 4 * kVectorWords;
  size_t head = ((32 - (reinterpret_cast<uintptr_t>(dst) & 31)) & 31) / 4;
  head = std::min(head, words);
  uint32_t result = CopyAndReduce(src, head, dst, reduce, combine);
  const size_t body = (words - head) / kStepWords * kStepWords;
  const uint8_t* s = src + 4 * head;
  uint8_t* d = dst + 4 * head;
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
  __m256i acc = _mm256_setzero_si256();
  for (size_t i = 0; i < body; i += kStepWords) {
    __m256i v[4];
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 4 * (i + k * kVectorWords)));
      if constexpr (kCheck == Check::kLargest) {
        acc = _mm256_max_epu32(acc, v[k]);
      } else {
        acc = _mm256_or_si256(acc, _mm256_cmpeq_epi32(_mm256_and_si256(v[k], exponent), exponent));
      }
    }
    for (int k = 0; k < 4; ++k)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 4 * (i + k * kVectorWords)), v[k]);
  }
  _mm_sfence();
  alignas(32) uint32_t lanes[kVectorWords];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  for (uint32_t lane : lanes) result = combine(result, kCheck == Check::kLargest ? lane : lane & 1u);
  const size_t done = head + body;
  return combine(result, CopyAndReduce(src + 4 * done, words - done, dst + 4 * done, reduce, combine));
}

bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

// Parts at least this large are copied with streaming stores where the CPU allows it.
// gRPC hands a 1 MiB message over in receive slices of mostly 32-128 KiB, some 4-16 KiB
// (loopback, measured with the load generator); each slice is one part.
constexpr size_t kStreamingMinWords = 1024;  // 4 KiB

// The copy + check of `words` words: streaming for large parts, chunked otherwise.
template <Check kCheck>
uint32_t CopyAndCheck(const uint8_t* src, size_t words, uint8_t* dst, CopyStores stores) {
#if defined(__x86_64__)
  if (stores == CopyStores::kAuto && dst != nullptr && words >= kStreamingMinWords &&
      (reinterpret_cast<uintptr_t>(dst) & 3) == 0 && CpuHasAvx2()) {
    return StreamCopyAndReduce<kCheck>(src, words, dst);
  }
#else
  (void)stores;
#endif
  return CopyAndReduce(src, words, dst, ReduceWords<kCheck>, Combine<kCheck>);
}

// first_index: the position of src[0] in its message, for the error message.
absl::Status CopyBinIndices(const HistogramSpec& spec, const uint8_t* src, size_t count,
                            uint8_t* dst, size_t first_index, CopyStores stores) {
  const uint64_t bins = spec.shape.bins();
  const uint32_t largest = CopyAndCheck<Check::kLargest>(src, count, dst, stores);
  if (count == 0 || largest < bins) return absl::OkStatus();
  for (size_t i = 0; i < count; ++i) {  // the rare path: find the first offender
    uint32_t v;
    std::memcpy(&v, src + 4 * i, 4);
    if (v >= bins) return BinIndexOutOfRangeError(spec, first_index + i, v);
  }
  return absl::OkStatus();
}

// Every coordinate is valid; the rare path (some word non-finite) counts the NaNs.
absl::Status CopyCoordinates(const uint8_t* src, size_t count, uint8_t* dst, CopyStores stores,
                             NanCounts* nans) {
  const uint32_t non_finite = CopyAndCheck<Check::kNonFinite>(src, 2 * count, dst, stores);
  if (non_finite == 0 || nans == nullptr) return absl::OkStatus();
  for (size_t i = 0; i < count; ++i) {
    float x, y;
    std::memcpy(&x, src + 8 * i, 4);
    std::memcpy(&y, src + 8 * i + 4, 4);
    nans->x += std::isnan(x);
    nans->y += std::isnan(y);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status BinIndexOutOfRangeError(const HistogramSpec& spec, uint64_t position, uint32_t value) {
  const uint64_t bins = spec.shape.bins();
  return absl::InvalidArgumentError(absl::StrFormat(
      "sample %d: bin index %d is out of range; histogram '%s' has %d bins (%d x %d), "
      "valid indices 0..%d; nothing of this message was applied",
      position, value, spec.name, bins, spec.shape.rows, spec.shape.cols, bins - 1));
}

absl::Status CheckIngestMessage(const HistogramSpec& spec, SampleKind kind, size_t payload_bytes) {
  const size_t element = SampleBytes(kind);
  if (payload_bytes % element != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "payload of %d bytes is not a multiple of %d (%s); nothing of this message was applied",
        payload_bytes, element, KindName(kind)));
  }
  if (kind == SampleKind::kCoordXY && !spec.has_both_axes()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "histogram '%s' has no %s: (x, y) coordinates need both x_axis and y_axis; send "
        "SAMPLE_TYPE_BIN_INDEX_U32 or create the histogram with axes",
        spec.name,
        spec.x_axis ? "y_axis" : (spec.y_axis ? "x_axis" : "axes")));
  }
  return absl::OkStatus();
}

absl::Status CopyValidatedSamples(const HistogramSpec& spec, SampleKind kind, const uint8_t* src,
                                  size_t count, uint8_t* dst, size_t first_index,
                                  CopyStores stores, NanCounts* nans) {
  return kind == SampleKind::kBinIndex ? CopyBinIndices(spec, src, count, dst, first_index, stores)
                                       : CopyCoordinates(src, count, dst, stores, nans);
}

absl::Status CopyValidatedPayload(const HistogramSpec& spec, SampleKind kind,
                                  const SamplePayload& payload, size_t first, size_t count,
                                  uint8_t* dst, CopyStores stores, NanCounts* nans) {
  const size_t element = SampleBytes(kind);
  uint8_t straddler[8];  // a sample split between two spans, gathered
  size_t gathered = 0;
  size_t index = first;  // of the next sample to check
  absl::Status status;
  auto out = [&](size_t i) { return dst == nullptr ? nullptr : dst + (i - first) * element; };
  payload.ForEachSpan(first * element, count * element, [&](const uint8_t* data, size_t n) {
    if (gathered > 0) {
      const size_t take = std::min(element - gathered, n);
      std::memcpy(straddler + gathered, data, take);
      gathered += take;
      data += take;
      n -= take;
      if (gathered < element) return true;
      status = CopyValidatedSamples(spec, kind, straddler, 1, out(index), index, stores, nans);
      if (!status.ok()) return false;
      index += 1;
      gathered = 0;
    }
    const size_t whole = n / element;
    status = CopyValidatedSamples(spec, kind, data, whole, out(index), index, stores, nans);
    if (!status.ok()) return false;
    index += whole;
    gathered = n - whole * element;
    std::memcpy(straddler, data + whole * element, gathered);
    return true;
  });
  return status;
}

}  // namespace histd::server
