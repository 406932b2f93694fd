// Small stdio helpers with absl::Status errors that name the file and the errno text.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace histd::client::io {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// fopen; "-" opens stdin (mode "r...") or stdout (mode "w...") without owning them.
// NOT_FOUND, PERMISSION_DENIED or INVALID_ARGUMENT (a directory, ...) otherwise.
absl::StatusOr<FilePtr> OpenFile(const std::string& path, const char* mode);

// Size in bytes of a regular file, or -1 when it has none (a pipe, a terminal).
int64_t FileSizeOrMinusOne(std::FILE* file);

absl::Status WriteAll(std::FILE* file, absl::string_view bytes, const std::string& path);
// Reads exactly n bytes; INVALID_ARGUMENT "truncated" when the file ends first.
absl::Status ReadExact(std::FILE* file, char* out, size_t n, const std::string& path);
// Flushes and closes, reporting a write error (disk full) that fclose would swallow.
absl::Status CloseFile(FilePtr file, const std::string& path);

// Reads a whole file into memory.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace histd::client::io
