#include "client/io/file_format.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace histd::client::io {

absl::StatusOr<FileFormat> ParseFileFormat(absl::string_view name) {
  const std::string n = absl::AsciiStrToLower(name);
  if (n == "auto" || n.empty()) return FileFormat::kAuto;
  if (n == "npy") return FileFormat::kNpy;
  if (n == "csv" || n == "txt") return FileFormat::kCsv;
  if (n == "raw" || n == "bin") return FileFormat::kRaw;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown file format '", name, "' (want auto, npy, csv or raw)"));
}

const char* FileFormatName(FileFormat format) {
  switch (format) {
    case FileFormat::kNpy: return "npy";
    case FileFormat::kCsv: return "csv";
    case FileFormat::kRaw: return "raw";
    default: return "auto";
  }
}

std::string Extension(absl::string_view path) {
  const size_t slash = path.find_last_of('/');
  const absl::string_view base = slash == absl::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  if (dot == absl::string_view::npos || dot == 0) return "";
  return absl::AsciiStrToLower(base.substr(dot));
}

FileFormat ResolveFormat(FileFormat format, absl::string_view path) {
  if (format != FileFormat::kAuto) return format;
  const std::string ext = Extension(path);
  if (ext == ".npy") return FileFormat::kNpy;
  if (ext == ".csv" || ext == ".txt") return FileFormat::kCsv;
  return FileFormat::kRaw;
}

histd::v1::DType DTypeFromExtension(absl::string_view path) {
  const std::string ext = Extension(path);
  if (ext == ".u8") return histd::v1::DTYPE_U8;
  if (ext == ".i32") return histd::v1::DTYPE_I32;
  if (ext == ".i64") return histd::v1::DTYPE_I64;
  if (ext == ".u32") return histd::v1::DTYPE_U32;
  if (ext == ".u64") return histd::v1::DTYPE_U64;
  if (ext == ".f32") return histd::v1::DTYPE_F32;
  if (ext == ".f64") return histd::v1::DTYPE_F64;
  return histd::v1::DTYPE_UNSPECIFIED;
}

}  // namespace histd::client::io
