// Helpers shared by the client tests: a temporary directory and whole-file read/write.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/io/file_util.h"
#include "gtest/gtest.h"

namespace histd::client::test {

// A fresh temporary directory per test, removed with its files at the end.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/histd_client_io_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    for (const std::string& f : files_) std::remove(f.c_str());
    rmdir(dir_.c_str());
  }
  std::string Path(const std::string& name) {
    files_.push_back(dir_ + "/" + name);
    return files_.back();
  }

 private:
  std::string dir_;
  std::vector<std::string> files_;
};

inline void WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

inline std::string ReadFile(const std::string& path) {
  absl::StatusOr<std::string> s = io::ReadWholeFile(path);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
}

// A fresh seed per run; tests print it with SCOPED_TRACE.
inline uint64_t Seed() { return std::random_device{}(); }

}  // namespace histd::client::test
