#include "server/core/malloc_tuning.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc
#include <limits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace histd::server {

bool SetMallocArenaMax(int arenas) {
  if (arenas <= 0) return true;
#if defined(__GLIBC__)
  return mallopt(M_ARENA_MAX, arenas) == 1;
#else
  return false;
#endif
}

bool SetMallocTrimThreshold(size_t bytes) {
  if (bytes == 0) return true;
#if defined(__GLIBC__)
  constexpr size_t kMax = static_cast<size_t>(std::numeric_limits<int>::max());
  if (bytes > kMax) return false;
  return mallopt(M_TRIM_THRESHOLD, static_cast<int>(bytes)) == 1 &&
         mallopt(M_TOP_PAD, static_cast<int>(bytes / 4)) == 1;
#else
  return false;
#endif
}

}  // namespace histd::server
