#include "client/io/sample_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/dtype.h"
#include "client/io/csv.h"
#include "client/io/file_util.h"
#include "client/io/npy.h"
#include "client/sample_batcher.h"

namespace histd::client::io {
namespace {

using histd::v1::SampleType;

// The element type samples of `type` have on the wire: uint32 indices, float32 coordinates.
histd::v1::DType WireDType(SampleType type) {
  return type == histd::v1::SAMPLE_TYPE_XY_F32 ? histd::v1::DTYPE_F32 : histd::v1::DTYPE_U32;
}

// The sample type a file of `dtype` elements holds, when it converts (see the header).
SampleType SampleTypeOf(histd::v1::DType dtype) {
  switch (dtype) {
    case histd::v1::DTYPE_U8:
    case histd::v1::DTYPE_I32:
    case histd::v1::DTYPE_I64:
    case histd::v1::DTYPE_U32:
    case histd::v1::DTYPE_U64: return histd::v1::SAMPLE_TYPE_BIN_INDEX_U32;
    case histd::v1::DTYPE_F32:
    case histd::v1::DTYPE_F64: return histd::v1::SAMPLE_TYPE_XY_F32;
    default: return histd::v1::SAMPLE_TYPE_UNSPECIFIED;
  }
}

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Element i of `src` (of `dtype`) as a uint32 bin index, or INVALID_ARGUMENT naming the
// element's position and value when it is outside [0, 2^32).
absl::Status ConvertIndex(const std::string& path, histd::v1::DType dtype, const char* src,
                          uint64_t position, char* out) {
  uint64_t u = 0;
  bool fits = true;
  std::string text;
  switch (dtype) {
    case histd::v1::DTYPE_U8: u = Load<uint8_t>(src); break;
    case histd::v1::DTYPE_U32: u = Load<uint32_t>(src); break;
    case histd::v1::DTYPE_U64: u = Load<uint64_t>(src); text = absl::StrCat(u); break;
    case histd::v1::DTYPE_I32:
    case histd::v1::DTYPE_I64: {
      const int64_t v = dtype == histd::v1::DTYPE_I32 ? Load<int32_t>(src) : Load<int64_t>(src);
      fits = v >= 0;
      u = static_cast<uint64_t>(v);
      text = absl::StrCat(v);
      break;
    }
    default: fits = false; break;
  }
  if (!fits || u > UINT32_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "': sample ", position, " is ", text,
                     ", which is not a bin index (indices are integers in [0, 2^32))"));
  }
  const uint32_t index = static_cast<uint32_t>(u);
  std::memcpy(out, &index, 4);
  return absl::OkStatus();
}

// Fixed-size samples from the file (raw files and npy data sections): straight through
// when the file holds the wire type, else converted element by element (indices checked to
// fit uint32; float64 coordinates rounded to the nearest float32).
class PackedSampleReader : public SampleReader {
 public:
  PackedSampleReader(FilePtr file, std::string path, SampleType type, histd::v1::DType dtype,
                     uint64_t header_bytes, std::optional<uint64_t> samples, int64_t file_bytes)
      : file_(std::move(file)), path_(std::move(path)), dtype_(dtype), consumed_(header_bytes) {
    type_ = type;
    total_samples_ = samples;
    file_bytes_ = file_bytes;
    if (dtype != WireDType(type)) {
      conversion_ = type == histd::v1::SAMPLE_TYPE_XY_F32
                        ? absl::StrCat(DTypeShortName(dtype),
                                       " coordinates rounded to the nearest float32")
                        : absl::StrCat(DTypeShortName(dtype), " indices converted to uint32");
    }
  }

  uint64_t bytes_consumed() const override { return consumed_; }

  absl::StatusOr<size_t> Read(size_t max_samples, std::string* out) override {
    const size_t wire_bytes = SampleTypeBytes(type_);
    const size_t values = type_ == histd::v1::SAMPLE_TYPE_XY_F32 ? 2 : 1;  // per sample
    const size_t sample_bytes = values * DTypeSize(dtype_);                // in the file
    if (total_samples_.has_value()) max_samples = std::min<uint64_t>(max_samples, *total_samples_ - read_);
    const bool convert = dtype_ != WireDType(type_);
    std::string& buffer = convert ? scratch_ : *out;
    const size_t old = convert ? 0 : out->size();
    buffer.resize(old + max_samples * sample_bytes);
    size_t got = 0;
    while (got < max_samples * sample_bytes) {
      const size_t n = std::fread(buffer.data() + old + got, 1, max_samples * sample_bytes - got, file_.get());
      if (n == 0) break;
      got += n;
    }
    if (std::ferror(file_.get())) {
      buffer.resize(old);
      return absl::UnknownError(absl::StrCat("cannot read '", path_, "'"));
    }
    consumed_ += got;
    if (got % sample_bytes != 0) {
      buffer.resize(old);
      return absl::InvalidArgumentError(absl::StrCat("'", path_, "' ends inside a sample (",
                                                     consumed_, " bytes)"));
    }
    buffer.resize(old + got);
    const size_t samples = got / sample_bytes;
    if (convert) {
      const size_t out_old = out->size();
      out->resize(out_old + samples * wire_bytes);
      char* dst = out->data() + out_old;
      for (size_t i = 0; i < samples; ++i) {
        if (type_ == histd::v1::SAMPLE_TYPE_XY_F32) {
          // float64 -> float32 to nearest: NaN and +-inf stay, finite values beyond float32's
          // range become +-inf (outside every axis either way).
          for (size_t v = 0; v < 2; ++v) {
            const float f = static_cast<float>(Load<double>(scratch_.data() + (2 * i + v) * 8));
            std::memcpy(dst + (2 * i + v) * 4, &f, 4);
          }
        } else {
          absl::Status converted =
              ConvertIndex(path_, dtype_, scratch_.data() + i * sample_bytes, read_ + i, dst + 4 * i);
          if (!converted.ok()) {
            out->resize(out_old);
            return converted;
          }
        }
      }
    }
    read_ += samples;
    if (total_samples_.has_value() && got == 0 && read_ < *total_samples_) {
      return absl::InvalidArgumentError(absl::StrCat("'", path_, "' is truncated: ", read_, " of ",
                                                     *total_samples_, " samples"));
    }
    return samples;
  }

 private:
  FilePtr file_;
  std::string path_;
  histd::v1::DType dtype_;  // of the file's values
  std::string scratch_;     // file bytes before conversion
  uint64_t consumed_;
  uint64_t read_ = 0;
};

// A CSV bin index: an integer in [0, 2^32), also written as a float with an integral value
// ("3.000000000000000000e+00", numpy.savetxt's default format).
absl::Status ParseCsvIndex(absl::string_view text, char* out) {
  uint32_t index;
  double d;
  if (absl::SimpleAtoi(text, &index)) {
    // exact
  } else if (absl::SimpleAtod(text, &d) && d >= 0 && d < 4294967296.0 && d == std::floor(d)) {
    index = static_cast<uint32_t>(d);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is not a bin index (indices are integers in [0, 2^32))"));
  }
  std::memcpy(out, &index, 4);
  return absl::OkStatus();
}

// Text lines: one index, or x and y, per line.
class CsvSampleReader : public SampleReader {
 public:
  CsvSampleReader(FilePtr file, std::string path, SampleType type, int64_t file_bytes)
      : file_(std::move(file)), path_(std::move(path)) {
    type_ = type;
    file_bytes_ = file_bytes;
  }

  uint64_t bytes_consumed() const override { return consumed_; }

  // The type from the first data line (when not given); leaves that line pending.
  absl::Status DetectType() {
    absl::StatusOr<bool> got = NextFields();
    if (!got.ok()) return got.status();
    if (!*got) {
      if (type_ == histd::v1::SAMPLE_TYPE_UNSPECIFIED) type_ = histd::v1::SAMPLE_TYPE_BIN_INDEX_U32;
      return absl::OkStatus();
    }
    have_pending_ = true;
    if (type_ != histd::v1::SAMPLE_TYPE_UNSPECIFIED) return absl::OkStatus();
    if (fields_.size() == 1) {
      type_ = histd::v1::SAMPLE_TYPE_BIN_INDEX_U32;
    } else if (fields_.size() == 2) {
      type_ = histd::v1::SAMPLE_TYPE_XY_F32;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("'", path_, "' line ", line_number_, ": ",
                                                     fields_.size(),
                                                     " fields; want 1 (bin index) or 2 (x,y)"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> Read(size_t max_samples, std::string* out) override {
    const bool xy = type_ == histd::v1::SAMPLE_TYPE_XY_F32;
    const size_t want_fields = xy ? 2 : 1;
    size_t n = 0;
    while (n < max_samples) {
      if (!have_pending_) {
        absl::StatusOr<bool> got = NextFields();
        if (!got.ok()) return got.status();
        if (!*got) break;
      }
      have_pending_ = false;
      if (fields_.size() != want_fields) {
        return absl::InvalidArgumentError(absl::StrCat("'", path_, "' line ", line_number_, ": ",
                                                       fields_.size(), " fields; want ", want_fields));
      }
      char packed[8];
      for (size_t f = 0; f < want_fields; ++f) {
        // Coordinates parse straight to the nearest float32 (no double rounding).
        absl::Status parsed = xy ? ParseElement(fields_[f], histd::v1::DTYPE_F32, packed + 4 * f)
                                 : ParseCsvIndex(fields_[f], packed);
        if (!parsed.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("'", path_, "' line ", line_number_, ": ", parsed.message()));
        }
      }
      out->append(packed, 4 * want_fields);
      ++n;
    }
    return n;
  }

 private:
  // Reads lines until one with fields; false at the end of the file. A first line with
  // non-numeric fields is a header and skipped.
  absl::StatusOr<bool> NextFields() {
    while (true) {
      line_.clear();
      int c;
      bool any = false;
      while ((c = getc_unlocked(file_.get())) != EOF) {
        any = true;
        ++consumed_;
        if (c == '\n') break;
        line_.push_back(static_cast<char>(c));
      }
      if (std::ferror(file_.get())) return absl::UnknownError(absl::StrCat("cannot read '", path_, "'"));
      if (!any) return false;
      ++line_number_;
      fields_ = SplitCsvFields(line_);
      if (fields_.empty()) continue;
      if (!seen_data_ && !AllNumeric(fields_)) {
        seen_data_ = true;  // only the first non-blank line may be a header
        continue;
      }
      seen_data_ = true;
      return true;
    }
  }

  FilePtr file_;
  std::string path_;
  std::string line_;
  std::vector<absl::string_view> fields_;  // views into line_
  bool have_pending_ = false;
  bool seen_data_ = false;
  uint64_t line_number_ = 0;
  uint64_t consumed_ = 0;
};

absl::Status TypeMismatch(const std::string& path, SampleType wanted, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("'", path, "' holds ", what, ", but samples of type ",
                                                 SampleTypeName(wanted), " were asked for"));
}

}  // namespace

absl::StatusOr<SampleType> ParseSampleType(absl::string_view name) {
  const std::string n = absl::AsciiStrToLower(name);
  if (n == "auto" || n.empty()) return histd::v1::SAMPLE_TYPE_UNSPECIFIED;
  if (n == "index" || n == "indices" || n == "u32") return histd::v1::SAMPLE_TYPE_BIN_INDEX_U32;
  if (n == "xy" || n == "f32") return histd::v1::SAMPLE_TYPE_XY_F32;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown sample type '", name, "' (want auto, index or xy)"));
}

const char* SampleTypeName(SampleType type) {
  switch (type) {
    case histd::v1::SAMPLE_TYPE_BIN_INDEX_U32: return "index";
    case histd::v1::SAMPLE_TYPE_XY_F32: return "xy";
    default: return "auto";
  }
}

absl::StatusOr<std::unique_ptr<SampleReader>> OpenSampleReader(const std::string& path,
                                                               const SampleReaderOptions& options) {
  const FileFormat format = ResolveFormat(options.format, path);
  absl::StatusOr<FilePtr> file = OpenFile(path, "rb");
  if (!file.ok()) return file.status();
  const int64_t file_bytes = FileSizeOrMinusOne(file->get());

  if (format == FileFormat::kCsv) {
    auto reader = std::make_unique<CsvSampleReader>(std::move(*file), path, options.type, file_bytes);
    absl::Status detected = reader->DetectType();
    if (!detected.ok()) return detected;
    return std::unique_ptr<SampleReader>(std::move(reader));
  }

  if (format == FileFormat::kNpy) {
    absl::StatusOr<NpyHeader> header = ReadNpyHeader(file->get(), path);
    if (!header.ok()) return header.status();
    const std::vector<uint64_t>& shape = header->shape;
    const SampleType type = SampleTypeOf(header->dtype);
    const uint64_t samples = shape.empty() ? 0 : shape[0];
    const bool fits =
        type == histd::v1::SAMPLE_TYPE_BIN_INDEX_U32
            ? (shape.size() == 1 || (shape.size() == 2 && shape[1] == 1))
            : type == histd::v1::SAMPLE_TYPE_XY_F32 && shape.size() == 2 && shape[1] == 2 &&
                  !(header->fortran_order && shape[0] > 1);
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", path, "' is not a sample array: want integers (uint8, int32, int64, uint32, "
          "uint64) of shape (n,) for bin indices or floats (float32, float64) of shape (n, 2) "
          "in C order for x/y pairs"));
    }
    if (options.type != histd::v1::SAMPLE_TYPE_UNSPECIFIED && options.type != type) {
      return TypeMismatch(path, options.type, SampleTypeName(type) + std::string(" samples"));
    }
    const uint64_t values = type == histd::v1::SAMPLE_TYPE_XY_F32 ? 2 : 1;
    // Overflow-checked: a shape of 2^61 + 1 uint64 samples must not pass for 8 bytes.
    const absl::StatusOr<uint64_t> data_bytes = ArrayByteLength(header->dtype, samples, values);
    uint64_t file_needs = 0;
    if (!data_bytes.ok() || __builtin_add_overflow(header->data_offset, *data_bytes, &file_needs)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", path, "': npy shape (", samples, ", ...) overflows 64-bit sizes"));
    }
    if (file_bytes >= 0 && static_cast<uint64_t>(file_bytes) != file_needs) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", path, "' holds ", file_bytes - static_cast<int64_t>(header->data_offset),
                       " data bytes but its shape needs ", *data_bytes));
    }
    return std::unique_ptr<SampleReader>(std::make_unique<PackedSampleReader>(
        std::move(*file), path, type, header->dtype, header->data_offset, samples, file_bytes));
  }

  // Raw.
  SampleType type = options.type;
  histd::v1::DType dtype = DTypeFromExtension(path);
  const SampleType from_ext = SampleTypeOf(dtype);
  if (type == histd::v1::SAMPLE_TYPE_UNSPECIFIED) type = from_ext;
  if (type == histd::v1::SAMPLE_TYPE_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "': cannot tell the sample type; name it .u32 (bin indices) or .f32 (x,y "
        "pairs), or give the type"));
  }
  if (from_ext != type) dtype = WireDType(type);  // the given type overrides the name
  const size_t sample_bytes =
      (type == histd::v1::SAMPLE_TYPE_XY_F32 ? 2 : 1) * DTypeSize(dtype);
  std::optional<uint64_t> samples;
  if (file_bytes >= 0) {
    if (file_bytes % sample_bytes != 0) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' has ", file_bytes,
                                                     " bytes, not a multiple of the ", sample_bytes,
                                                     "-byte ", SampleTypeName(type), " sample"));
    }
    samples = file_bytes / sample_bytes;
  }
  return std::unique_ptr<SampleReader>(std::make_unique<PackedSampleReader>(
      std::move(*file), path, type, dtype, 0, samples, file_bytes));
}

}  // namespace histd::client::io
