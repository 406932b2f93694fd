#include "server/core/crc32c.h"

#include <array>
#include <cstring>

namespace histd::server {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // reflected Castagnoli

std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ kPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}

// Byte at a time: any CPU.
uint32_t Crc32cTable(const uint8_t* data, size_t n, uint32_t state) {
  static const std::array<uint32_t, 256> table = MakeTable();
  for (size_t i = 0; i < n; ++i) state = table[(state ^ data[i]) & 0xFFu] ^ (state >> 8);
  return state;
}

#if defined(__x86_64__)
// SSE4.2's crc32 instruction computes exactly this polynomial, 8 bytes at a time.
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const uint8_t* data, size_t n,
                                                       uint32_t state) {
  uint64_t s = state;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    s = __builtin_ia32_crc32di(s, word);
  }
  uint32_t s32 = static_cast<uint32_t>(s);
  for (; i < n; ++i) s32 = __builtin_ia32_crc32qi(s32, data[i]);
  return s32;
}
#endif

}  // namespace

uint32_t Crc32c(const uint8_t* data, size_t n, uint32_t crc) {
  const uint32_t state = ~crc;
#if defined(__x86_64__)
  static const bool has_sse42 = __builtin_cpu_supports("sse4.2");
  if (has_sse42) return ~Crc32cSse42(data, n, state);
#endif
  return ~Crc32cTable(data, n, state);
}

}  // namespace histd::server
