// File formats histctl reads and writes, chosen by extension unless overridden:
//   .npy            NumPy array (format versions 1.0-3.0, little-endian)
//   .csv .txt       comma (or blank) separated text, one array row or one sample per line
//   anything else   raw packed little-endian bytes; the element type comes from the
//                   extension (.u8 .i32 .i64 .u32 .u64 .f32 .f64) or must be given
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "histd/v1/common.pb.h"

namespace histd::client::io {

enum class FileFormat { kAuto, kNpy, kCsv, kRaw };

// "auto", "npy", "csv", "raw" (also "bin").
absl::StatusOr<FileFormat> ParseFileFormat(absl::string_view name);
const char* FileFormatName(FileFormat format);

// format itself unless it is kAuto; then the format the path's extension names.
FileFormat ResolveFormat(FileFormat format, absl::string_view path);

// The element type a raw file's extension names (".u32" -> DTYPE_U32), else UNSPECIFIED.
histd::v1::DType DTypeFromExtension(absl::string_view path);

// The lower-cased extension with its dot (".npy"), or "" when there is none.
std::string Extension(absl::string_view path);

}  // namespace histd::client::io
