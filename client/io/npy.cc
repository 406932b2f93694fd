#include "client/io/npy.h"

#include <cctype>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/dtype.h"
#include "client/io/file_util.h"

namespace histd::client::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

const char* Descr(histd::v1::DType dtype) {
  switch (dtype) {
    case histd::v1::DTYPE_U8: return "|u1";
    case histd::v1::DTYPE_I32: return "<i4";
    case histd::v1::DTYPE_I64: return "<i8";
    case histd::v1::DTYPE_U32: return "<u4";
    case histd::v1::DTYPE_U64: return "<u8";
    case histd::v1::DTYPE_F32: return "<f4";
    case histd::v1::DTYPE_F64: return "<f8";
    default: return nullptr;
  }
}

absl::StatusOr<histd::v1::DType> DTypeFromDescr(absl::string_view descr) {
  if (descr.size() < 3) return absl::InvalidArgumentError(absl::StrCat("npy descr '", descr, "'"));
  const char order = descr[0];
  const absl::string_view kind = descr.substr(1);
  if (kind == "u1" || kind == "B") return histd::v1::DTYPE_U8;  // byte order irrelevant
  if (order == '>') {
    return absl::InvalidArgumentError(
        absl::StrCat("npy descr '", descr, "' is big-endian; only little-endian is supported"));
  }
  if (order == '<' || order == '|' || order == '=') {
    if (kind == "i4") return histd::v1::DTYPE_I32;
    if (kind == "i8") return histd::v1::DTYPE_I64;
    if (kind == "u4") return histd::v1::DTYPE_U32;
    if (kind == "u8") return histd::v1::DTYPE_U64;
    if (kind == "f4") return histd::v1::DTYPE_F32;
    if (kind == "f8") return histd::v1::DTYPE_F64;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "npy descr '", descr, "' is not supported (want u1, i4, i8, u4, u8, f4 or f8)"));
}

// Finds key ('key' or "key") in the dict text and returns the text after its ':'.
absl::StatusOr<absl::string_view> ValueOf(absl::string_view dict, absl::string_view key) {
  for (const char quote : {'\'', '"'}) {
    const std::string quoted = absl::StrCat(std::string(1, quote), key, std::string(1, quote));
    size_t at = dict.find(quoted);
    if (at == absl::string_view::npos) continue;
    at = dict.find(':', at + quoted.size());
    if (at == absl::string_view::npos) break;
    absl::string_view rest = dict.substr(at + 1);
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) {
      rest.remove_prefix(1);
    }
    return rest;
  }
  return absl::InvalidArgumentError(absl::StrCat("npy header has no '", key, "': ", dict));
}

}  // namespace

absl::StatusOr<uint64_t> NpyHeader::Elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) {
      return absl::InvalidArgumentError("npy shape overflows 64 bits");
    }
  }
  return n;
}

std::string EncodeNpyHeader(histd::v1::DType dtype, const std::vector<uint64_t>& shape) {
  std::string shape_text = absl::StrJoin(shape, ", ");
  if (shape.size() == 1) shape_text += ",";
  std::string dict = absl::StrCat("{'descr': '", Descr(dtype) ? Descr(dtype) : "?",
                                  "', 'fortran_order': False, 'shape': (", shape_text, "), }");
  // magic(6) + version(2) + length(2 or 4) + dict + padding + '\n' = multiple of 64.
  size_t prefix = kMagicLen + 2 + 2;
  bool v2 = false;
  if (dict.size() + 1 + 64 > 65535) {
    prefix = kMagicLen + 2 + 4;
    v2 = true;
  }
  const size_t unpadded = prefix + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  const uint32_t len = static_cast<uint32_t>(dict.size());
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>((len >> 8) & 0xff));
  if (v2) {
    out.push_back(static_cast<char>((len >> 16) & 0xff));
    out.push_back(static_cast<char>((len >> 24) & 0xff));
  }
  return out + dict;
}

absl::StatusOr<NpyHeader> ParseNpyHeader(absl::string_view bytes) {
  if (bytes.size() < kMagicLen + 4 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
    return absl::InvalidArgumentError("not an npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t prefix, dict_len;
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])); };
  if (major == 1) {
    prefix = 10;
    dict_len = byte(8) | byte(9) << 8;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return absl::InvalidArgumentError("npy header truncated");
    prefix = 12;
    dict_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("npy format version ", major, " not supported"));
  }
  if (bytes.size() < prefix + dict_len) return absl::InvalidArgumentError("npy header truncated");
  const absl::string_view dict = bytes.substr(prefix, dict_len);
  NpyHeader header;
  header.data_offset = prefix + dict_len;

  absl::StatusOr<absl::string_view> descr = ValueOf(dict, "descr");
  if (!descr.ok()) return descr.status();
  if (descr->empty() || ((*descr)[0] != '\'' && (*descr)[0] != '"')) {
    return absl::InvalidArgumentError(
        absl::StrCat("npy descr is not a simple type (structured arrays are not supported): ", dict));
  }
  const size_t close = descr->find((*descr)[0], 1);
  if (close == absl::string_view::npos) return absl::InvalidArgumentError("npy descr unterminated");
  absl::StatusOr<histd::v1::DType> dtype = DTypeFromDescr(descr->substr(1, close - 1));
  if (!dtype.ok()) return dtype.status();
  header.dtype = *dtype;

  absl::StatusOr<absl::string_view> fortran = ValueOf(dict, "fortran_order");
  if (!fortran.ok()) return fortran.status();
  if (absl::StartsWith(*fortran, "True")) {
    header.fortran_order = true;
  } else if (!absl::StartsWith(*fortran, "False")) {
    return absl::InvalidArgumentError(absl::StrCat("npy fortran_order unreadable: ", dict));
  }

  absl::StatusOr<absl::string_view> shape = ValueOf(dict, "shape");
  if (!shape.ok()) return shape.status();
  if (shape->empty() || (*shape)[0] != '(') {
    return absl::InvalidArgumentError(absl::StrCat("npy shape unreadable: ", dict));
  }
  const size_t end = shape->find(')');
  if (end == absl::string_view::npos) return absl::InvalidArgumentError("npy shape unterminated");
  for (absl::string_view part : absl::StrSplit(shape->substr(1, end - 1), ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;  // trailing comma of a 1-tuple
    if (!part.empty() && part.back() == 'L') part.remove_suffix(1);  // Python 2 longs
    uint64_t d;
    if (!absl::SimpleAtoi(part, &d)) {
      return absl::InvalidArgumentError(absl::StrCat("npy shape entry '", part, "' unreadable"));
    }
    header.shape.push_back(d);
  }
  return header;
}

absl::StatusOr<NpyHeader> ReadNpyHeader(std::FILE* file, const std::string& path) {
  std::string prefix(12, '\0');
  const size_t got = std::fread(prefix.data(), 1, prefix.size(), file);
  prefix.resize(got);
  if (got < 10 || std::memcmp(prefix.data(), kMagic, kMagicLen) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not an npy file (bad magic)"));
  }
  const int major = static_cast<unsigned char>(prefix[6]);
  const size_t prefix_len = major == 1 ? 10 : 12;
  if (got < prefix_len) return absl::InvalidArgumentError(absl::StrCat("'", path, "': npy header truncated"));
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(prefix[i])); };
  const size_t dict_len = major == 1 ? (byte(8) | byte(9) << 8)
                                     : (byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24);
  if (dict_len > (64u << 20)) return absl::InvalidArgumentError(absl::StrCat("'", path, "': npy header too long"));
  std::string header_bytes = prefix;
  header_bytes.resize(prefix_len + dict_len);
  if (got > header_bytes.size()) {
    // A tiny dict ended inside the 12 bytes we read (never happens for valid files).
    return absl::InvalidArgumentError(absl::StrCat("'", path, "': npy header truncated"));
  }
  absl::Status read = ReadExact(file, header_bytes.data() + got, header_bytes.size() - got, path);
  if (!read.ok()) return read;
  absl::StatusOr<NpyHeader> header = ParseNpyHeader(header_bytes);
  if (!header.ok()) {
    return absl::Status(header.status().code(), absl::StrCat("'", path, "': ", header.status().message()));
  }
  return header;
}

absl::StatusOr<ArrayData> ReadNpyArray(const std::string& path) {
  absl::StatusOr<FilePtr> file = OpenFile(path, "rb");
  if (!file.ok()) return file.status();
  absl::StatusOr<NpyHeader> header = ReadNpyHeader(file->get(), path);
  if (!header.ok()) return header.status();
  if (header->shape.size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' has ", header->shape.size(),
                                                   " dimensions; at most 2 are supported"));
  }
  ArrayData array;
  array.dtype = header->dtype;
  array.one_dimensional = header->shape.size() == 1;
  array.rows = header->shape.size() == 2 ? header->shape[0] : 1;
  array.cols = header->shape.empty() ? 1 : header->shape.back();
  absl::StatusOr<uint64_t> bytes = ArrayByteLength(array.dtype, array.rows, array.cols);
  if (!bytes.ok()) return bytes.status();
  const int64_t file_size = FileSizeOrMinusOne(file->get());
  if (file_size >= 0 && static_cast<uint64_t>(file_size) != header->data_offset + *bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "' holds ", file_size - static_cast<int64_t>(header->data_offset),
        " data bytes but its shape needs ", *bytes));
  }
  array.bytes.resize(*bytes);
  absl::Status read = ReadExact(file->get(), array.bytes.data(), *bytes, path);
  if (!read.ok()) return read;
  if (header->fortran_order && array.rows > 1 && array.cols > 1) {
    // Column-major on disk: element (r, c) is at c * rows + r.
    const size_t size = DTypeSize(array.dtype);
    std::string row_major(array.bytes.size(), '\0');
    for (uint64_t r = 0; r < array.rows; ++r) {
      for (uint64_t c = 0; c < array.cols; ++c) {
        std::memcpy(&row_major[(r * array.cols + c) * size],
                    &array.bytes[(c * array.rows + r) * size], size);
      }
    }
    array.bytes = std::move(row_major);
  }
  return array;
}

absl::Status WriteNpyArray(const std::string& path, const ArrayData& array) {
  absl::Status valid = CheckArray(array);
  if (!valid.ok()) return valid;
  std::vector<uint64_t> shape;
  if (array.one_dimensional) {
    shape = {array.rows * array.cols};
  } else {
    shape = {array.rows, array.cols};
  }
  absl::StatusOr<FilePtr> file = OpenFile(path, "wb");
  if (!file.ok()) return file.status();
  absl::Status status = WriteAll(file->get(), EncodeNpyHeader(array.dtype, shape), path);
  if (status.ok()) status = WriteAll(file->get(), array.bytes, path);
  absl::Status closed = CloseFile(std::move(*file), path);
  return status.ok() ? closed : status;
}

}  // namespace histd::client::io
