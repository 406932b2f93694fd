#include "client/io/file_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace histd::client::io {
namespace {

absl::Status ErrnoStatus(int err, const std::string& what) {
  const std::string message = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT: return absl::NotFoundError(message);
    case EACCES:
    case EPERM: return absl::PermissionDeniedError(message);
    case ENOSPC: return absl::ResourceExhaustedError(message);
    case EISDIR:
    case ENOTDIR: return absl::InvalidArgumentError(message);
    default: return absl::UnknownError(message);
  }
}

}  // namespace

absl::StatusOr<FilePtr> OpenFile(const std::string& path, const char* mode) {
  if (path == "-") {
    // Borrowed: dup the descriptor so that closing our FILE leaves stdin/stdout usable.
    const bool writing = mode[0] == 'w' || mode[0] == 'a';
    if (writing) std::fflush(stdout);
    const int fd = dup(writing ? fileno(stdout) : fileno(stdin));
    if (fd < 0) return ErrnoStatus(errno, "dup of standard stream");
    std::FILE* f = fdopen(fd, mode);
    if (f == nullptr) return ErrnoStatus(errno, "fdopen of standard stream");
    return FilePtr(f);
  }
  std::FILE* f = std::fopen(path.c_str(), mode);
  if (f == nullptr) return ErrnoStatus(errno, absl::StrCat("cannot open '", path, "'"));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fclose(f);
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory"));
  }
  return FilePtr(f);
}

int64_t FileSizeOrMinusOne(std::FILE* file) {
  struct stat st;
  if (fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return static_cast<int64_t>(st.st_size);
}

absl::Status WriteAll(std::FILE* file, absl::string_view bytes, const std::string& path) {
  if (bytes.empty()) return absl::OkStatus();
  if (std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size()) {
    return ErrnoStatus(errno, absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

absl::Status ReadExact(std::FILE* file, char* out, size_t n, const std::string& path) {
  const size_t got = n == 0 ? 0 : std::fread(out, 1, n, file);
  if (got == n) return absl::OkStatus();
  if (std::ferror(file)) return ErrnoStatus(errno, absl::StrCat("cannot read '", path, "'"));
  return absl::InvalidArgumentError(
      absl::StrCat("'", path, "' is truncated: wanted ", n, " more bytes, got ", got));
}

absl::Status CloseFile(FilePtr file, const std::string& path) {
  std::FILE* f = file.release();
  if (f == nullptr) return absl::OkStatus();
  const bool flush_failed = std::fflush(f) != 0;
  const int flush_errno = errno;
  const bool close_failed = std::fclose(f) != 0;
  if (flush_failed) return ErrnoStatus(flush_errno, absl::StrCat("cannot write '", path, "'"));
  if (close_failed) return ErrnoStatus(errno, absl::StrCat("cannot close '", path, "'"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  absl::StatusOr<FilePtr> file = OpenFile(path, "rb");
  if (!file.ok()) return file.status();
  std::string out;
  char buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file->get())) > 0) out.append(buffer, got);
  if (std::ferror(file->get())) return ErrnoStatus(errno, absl::StrCat("cannot read '", path, "'"));
  return out;
}

}  // namespace histd::client::io
