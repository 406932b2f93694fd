#include "client/io/sample_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/io/csv.h"
#include "client/io/file_util.h"
#include "client/io/npy.h"
#include "client/sample_batcher.h"

namespace histd::client::io {
namespace {

using histd::v1::SampleType;

// Fixed-size samples straight from the file (raw files and npy data sections).
class PackedSampleReader : public SampleReader {
 public:
  PackedSampleReader(FilePtr file, std::string path, SampleType type, uint64_t header_bytes,
                     std::optional<uint64_t> samples, int64_t file_bytes)
      : file_(std::move(file)), path_(std::move(path)), consumed_(header_bytes) {
    type_ = type;
    total_samples_ = samples;
    file_bytes_ = file_bytes;
  }

  uint64_t bytes_consumed() const override { return consumed_; }

  absl::StatusOr<size_t> Read(size_t max_samples, std::string* out) override {
    const size_t sample_bytes = SampleTypeBytes(type_);
    if (total_samples_.has_value()) max_samples = std::min<uint64_t>(max_samples, *total_samples_ - read_);
    const size_t old = out->size();
    out->resize(old + max_samples * sample_bytes);
    size_t got = 0;
    while (got < max_samples * sample_bytes) {
      const size_t n = std::fread(out->data() + old + got, 1, max_samples * sample_bytes - got, file_.get());
      if (n == 0) break;
      got += n;
    }
    if (std::ferror(file_.get())) {
      out->resize(old);
      return absl::UnknownError(absl::StrCat("cannot read '", path_, "'"));
    }
    consumed_ += got;
    if (got % sample_bytes != 0) {
      out->resize(old);
      return absl::InvalidArgumentError(absl::StrCat("'", path_, "' ends inside a sample (",
                                                     consumed_, " bytes)"));
    }
    out->resize(old + got);
    read_ += got / sample_bytes;
    if (total_samples_.has_value() && got == 0 && read_ < *total_samples_) {
      return absl::InvalidArgumentError(absl::StrCat("'", path_, "' is truncated: ", read_, " of ",
                                                     *total_samples_, " samples"));
    }
    return got / sample_bytes;
  }

 private:
  FilePtr file_;
  std::string path_;
  uint64_t consumed_;
  uint64_t read_ = 0;
};

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
        absl::Status parsed = ParseElement(fields_[f], xy ? histd::v1::DTYPE_F32 : histd::v1::DTYPE_U32,
                                           packed + 4 * f);
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
    SampleType type;
    uint64_t samples;
    if (header->dtype == histd::v1::DTYPE_U32 &&
        (shape.size() == 1 || (shape.size() == 2 && shape[1] == 1))) {
      type = histd::v1::SAMPLE_TYPE_BIN_INDEX_U32;
      samples = shape[0];
    } else if (header->dtype == histd::v1::DTYPE_F32 && shape.size() == 2 && shape[1] == 2 &&
               !(header->fortran_order && shape[0] > 1)) {
      type = histd::v1::SAMPLE_TYPE_XY_F32;
      samples = shape[0];
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", path, "' is not a sample array: want uint32 of shape (n,) for bin indices or "
          "float32 of shape (n, 2) in C order for x/y pairs"));
    }
    if (options.type != histd::v1::SAMPLE_TYPE_UNSPECIFIED && options.type != type) {
      return TypeMismatch(path, options.type, SampleTypeName(type) + std::string(" samples"));
    }
    const uint64_t data_bytes = samples * SampleTypeBytes(type);
    if (file_bytes >= 0 && static_cast<uint64_t>(file_bytes) != header->data_offset + data_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", path, "' holds ", file_bytes - static_cast<int64_t>(header->data_offset),
                       " data bytes but its shape needs ", data_bytes));
    }
    return std::unique_ptr<SampleReader>(std::make_unique<PackedSampleReader>(
        std::move(*file), path, type, header->data_offset, samples, file_bytes));
  }

  // Raw.
  SampleType type = options.type;
  const histd::v1::DType ext = DTypeFromExtension(path);
  const SampleType from_ext = ext == histd::v1::DTYPE_U32   ? histd::v1::SAMPLE_TYPE_BIN_INDEX_U32
                              : ext == histd::v1::DTYPE_F32 ? histd::v1::SAMPLE_TYPE_XY_F32
                                                            : histd::v1::SAMPLE_TYPE_UNSPECIFIED;
  if (type == histd::v1::SAMPLE_TYPE_UNSPECIFIED) type = from_ext;
  if (type == histd::v1::SAMPLE_TYPE_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "': cannot tell the sample type; name it .u32 (bin indices) or .f32 (x,y "
        "pairs), or give the type"));
  }
  const size_t sample_bytes = SampleTypeBytes(type);
  std::optional<uint64_t> samples;
  if (file_bytes >= 0) {
    if (file_bytes % sample_bytes != 0) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' has ", file_bytes,
                                                     " bytes, not a multiple of the ", sample_bytes,
                                                     "-byte ", SampleTypeName(type), " sample"));
    }
    samples = file_bytes / sample_bytes;
  }
  return std::unique_ptr<SampleReader>(
      std::make_unique<PackedSampleReader>(std::move(*file), path, type, 0, samples, file_bytes));
}

}  // namespace histd::client::io
