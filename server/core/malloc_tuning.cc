#include "server/core/malloc_tuning.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

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

}  // namespace histd::server
