#include "client/io/csv.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/dtype.h"
#include "client/io/file_util.h"

namespace histd::client::io {
namespace {

template <typename T>
absl::Status ParseInteger(absl::string_view text, char* out) {
  T value;
  // SimpleAtoi range-checks against T (including negative values for unsigned T).
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not an integer in range"));
  }
  std::memcpy(out, &value, sizeof(T));
  return absl::OkStatus();
}

absl::Status ParseU8(absl::string_view text, char* out) {
  uint32_t value;
  if (!absl::SimpleAtoi(text, &value) || value > 255) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not an integer in 0..255"));
  }
  *out = static_cast<char>(value);
  return absl::OkStatus();
}

void AppendElement(std::string* line, const char* p, histd::v1::DType dtype) {
  switch (dtype) {
    case histd::v1::DTYPE_U8: absl::StrAppend(line, static_cast<unsigned char>(*p)); break;
#define HISTD_CASE(D, T, FMT)           \
  case histd::v1::D: {                  \
    T v;                                \
    std::memcpy(&v, p, sizeof(T));      \
    absl::StrAppendFormat(line, FMT, v); \
    break;                              \
  }
      HISTD_CASE(DTYPE_I32, int32_t, "%d")
      HISTD_CASE(DTYPE_I64, int64_t, "%d")
      HISTD_CASE(DTYPE_U32, uint32_t, "%d")
      HISTD_CASE(DTYPE_U64, uint64_t, "%d")
      HISTD_CASE(DTYPE_F32, float, "%.9g")
      HISTD_CASE(DTYPE_F64, double, "%.17g")
#undef HISTD_CASE
    default: break;
  }
}

}  // namespace

std::vector<absl::string_view> SplitCsvFields(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  std::vector<absl::string_view> fields;
  if (line.empty() || line[0] == '#') return fields;
  const bool has_delimiter = line.find_first_of(",;") != absl::string_view::npos;
  if (has_delimiter) {
    for (absl::string_view f : absl::StrSplit(line, absl::ByAnyChar(",;"))) {
      fields.push_back(absl::StripAsciiWhitespace(f));
    }
  } else {
    for (absl::string_view f : absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      fields.push_back(f);
    }
  }
  return fields;
}

bool AllNumeric(const std::vector<absl::string_view>& fields) {
  for (absl::string_view f : fields) {
    double d;
    if (!absl::SimpleAtod(f, &d)) return false;
  }
  return true;
}

absl::Status ParseElement(absl::string_view text, histd::v1::DType dtype, char* out) {
  switch (dtype) {
    case histd::v1::DTYPE_U8: return ParseU8(text, out);
    case histd::v1::DTYPE_I32: return ParseInteger<int32_t>(text, out);
    case histd::v1::DTYPE_I64: return ParseInteger<int64_t>(text, out);
    case histd::v1::DTYPE_U32: return ParseInteger<uint32_t>(text, out);
    case histd::v1::DTYPE_U64: return ParseInteger<uint64_t>(text, out);
    case histd::v1::DTYPE_F32: {
      float v;
      if (!absl::SimpleAtof(text, &v)) {
        return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a number"));
      }
      std::memcpy(out, &v, sizeof(v));
      return absl::OkStatus();
    }
    case histd::v1::DTYPE_F64: {
      double v;
      if (!absl::SimpleAtod(text, &v)) {
        return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a number"));
      }
      std::memcpy(out, &v, sizeof(v));
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown dtype ", static_cast<int>(dtype)));
  }
}

absl::StatusOr<ArrayData> ReadCsvArray(const std::string& path, histd::v1::DType dtype) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  std::vector<std::vector<absl::string_view>> rows;
  std::vector<uint64_t> line_numbers;
  uint64_t line_number = 0;
  bool first = true;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_number;
    std::vector<absl::string_view> fields = SplitCsvFields(line);
    if (fields.empty()) continue;
    if (first && !AllNumeric(fields)) {  // a column header
      first = false;
      continue;
    }
    first = false;
    if (!rows.empty() && fields.size() != rows.front().size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", path, "' line ", line_number, ": ", fields.size(),
                       " fields, but earlier rows have ", rows.front().size()));
    }
    rows.push_back(std::move(fields));
    line_numbers.push_back(line_number);
  }
  if (dtype == histd::v1::DTYPE_UNSPECIFIED) {
    // Integers unless some field is not one.
    dtype = histd::v1::DTYPE_I64;
    for (const auto& row : rows) {
      for (absl::string_view f : row) {
        int64_t i;
        uint64_t u;
        if (absl::SimpleAtoi(f, &i)) continue;
        if (absl::SimpleAtoi(f, &u)) {
          if (dtype == histd::v1::DTYPE_I64) dtype = histd::v1::DTYPE_U64;
          continue;
        }
        dtype = histd::v1::DTYPE_F64;
        break;
      }
      if (dtype == histd::v1::DTYPE_F64) break;
    }
  }
  ArrayData array;
  array.dtype = dtype;
  array.rows = rows.size();
  array.cols = rows.empty() ? 0 : rows.front().size();
  const size_t size = DTypeSize(dtype);
  if (size == 0) return absl::InvalidArgumentError("unknown dtype for CSV");
  array.bytes.resize(array.rows * array.cols * size);
  for (uint64_t r = 0; r < array.rows; ++r) {
    for (uint64_t c = 0; c < array.cols; ++c) {
      absl::Status parsed =
          ParseElement(rows[r][c], dtype, &array.bytes[(r * array.cols + c) * size]);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("'", path, "' line ", line_numbers[r],
                                                       " field ", c + 1, ": ", parsed.message(),
                                                       " (as ", DTypeShortName(dtype), ")"));
      }
    }
  }
  return array;
}

absl::Status WriteCsv(std::FILE* file, const ArrayData& array, const std::string& path) {
  absl::Status valid = CheckArray(array);
  if (!valid.ok()) return valid;
  const size_t size = DTypeSize(array.dtype);
  const uint64_t per_line = array.one_dimensional ? 1 : array.cols;
  const uint64_t lines = per_line == 0 ? 0 : array.elements() / per_line;
  std::string buffer;
  for (uint64_t l = 0; l < lines; ++l) {
    for (uint64_t c = 0; c < per_line; ++c) {
      if (c > 0) buffer.push_back(',');
      AppendElement(&buffer, &array.bytes[(l * per_line + c) * size], array.dtype);
    }
    buffer.push_back('\n');
    if (buffer.size() >= (1 << 16)) {
      absl::Status written = WriteAll(file, buffer, path);
      if (!written.ok()) return written;
      buffer.clear();
    }
  }
  return WriteAll(file, buffer, path);
}

absl::Status WriteCsvArray(const std::string& path, const ArrayData& array) {
  absl::StatusOr<FilePtr> file = OpenFile(path, "w");
  if (!file.ok()) return file.status();
  absl::Status status = WriteCsv(file->get(), array, path);
  absl::Status closed = CloseFile(std::move(*file), path);
  return status.ok() ? closed : status;
}

}  // namespace histd::client::io
