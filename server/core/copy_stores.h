// How ingest copies samples into staging (server/core/ingest_validation.h).
#pragma once

namespace histd::server {

// kAuto: parts of at least 4 KiB go with non-temporal (streaming) stores where the CPU has
// AVX2 and the destination is 4-byte aligned, so staging lines are neither read for
// ownership nor kept in the cache; smaller parts through the cache. kCached: always
// through the cache (benchmarks and A/B runs compare the two).
enum class CopyStores { kAuto, kCached };

}  // namespace histd::server
