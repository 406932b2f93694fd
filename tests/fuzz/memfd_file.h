// MemFile: an anonymous in-memory file (memfd) with a path, /proc/self/fd/N, that the
// file readers under test open like any other; rewritten per fuzz input, never on disk.
// Thread safety: none; one per target, used from libFuzzer's one thread.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace histd::fuzz {

class MemFile {
 public:
  explicit MemFile(const char* name) : fd_(memfd_create(name, 0)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  const std::string& path() const { return path_; }

  void Write(const void* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size)) {
      std::perror("writing the memfd");
      std::abort();
    }
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace histd::fuzz
