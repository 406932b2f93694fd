#include "engine/thread_name.h"

#include <string>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace histd {

void NameCurrentThread(absl::string_view name) {
#if defined(__linux__)
  constexpr size_t kMaxNameBytes = 15;  // TASK_COMM_LEN - 1
  const std::string cut(name.substr(0, kMaxNameBytes));
  pthread_setname_np(pthread_self(), cut.c_str());
#else
  (void)name;
#endif
}

}  // namespace histd
