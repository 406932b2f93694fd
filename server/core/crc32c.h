// CRC-32C (Castagnoli, the polynomial of iSCSI, ext4 and LevelDB): the checksum of snapshot
// bins. Crc32c("123456789") == 0xE3069283.
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <cstdint>

namespace histd::server {

// The CRC of `n` bytes at `data`, continuing from `crc` (the CRC of the bytes before them;
// 0 to start).
uint32_t Crc32c(const uint8_t* data, size_t n, uint32_t crc = 0);

}  // namespace histd::server
