// Streaming readers of ingest samples: bin indices (packed uint32) or x/y float32 pairs,
// from files of any size in bounded memory.
//
//   raw   .u32: uint32 indices; .f32: float32 x,y pairs; any other name needs the type.
//         The length must be a multiple of the sample size (checked when opened).
//   npy   uint32 of shape (n,) or (n, 1): indices; float32 of shape (n, 2), C order: x/y.
//   csv   one index per line, or x,y per line (see csv.h for separators, comments, header);
//         the first data line decides unless the type is given. Indices must fit uint32.
//
// Read() hands out samples in file order, packed little-endian, ready for an
// IngestRequest. Contents are not validated against any histogram: that is the server's job
// (an index beyond the histogram or a NaN coordinate is rejected there, by message).
//
// Thread safety: none; one reader per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "client/io/file_format.h"
#include "histd/v1/ingest.pb.h"

namespace histd::client::io {

class SampleReader {
 public:
  virtual ~SampleReader() = default;

  histd::v1::SampleType type() const { return type_; }
  // Number of samples in the file when known before reading (raw, npy), else nullopt.
  std::optional<uint64_t> total_samples() const { return total_samples_; }
  // File size in bytes (-1 when unknown, e.g. a pipe) and bytes consumed so far.
  int64_t file_bytes() const { return file_bytes_; }
  virtual uint64_t bytes_consumed() const = 0;

  // Appends up to max_samples packed samples to *out; returns how many. 0 means the end of
  // the input. Errors name the file and, for CSV, the line.
  virtual absl::StatusOr<size_t> Read(size_t max_samples, std::string* out) = 0;

 protected:
  histd::v1::SampleType type_ = histd::v1::SAMPLE_TYPE_UNSPECIFIED;
  std::optional<uint64_t> total_samples_;
  int64_t file_bytes_ = -1;
};

struct SampleReaderOptions {
  FileFormat format = FileFormat::kAuto;
  // UNSPECIFIED: decided by the file (extension, npy dtype, CSV field count).
  histd::v1::SampleType type = histd::v1::SAMPLE_TYPE_UNSPECIFIED;
};

// "-" reads standard input (raw or CSV; give the format and, for raw, the type).
absl::StatusOr<std::unique_ptr<SampleReader>> OpenSampleReader(const std::string& path,
                                                               const SampleReaderOptions& options = {});

// "index" / "indices" / "u32" and "xy" / "f32"; "auto" gives UNSPECIFIED.
absl::StatusOr<histd::v1::SampleType> ParseSampleType(absl::string_view name);
const char* SampleTypeName(histd::v1::SampleType type);

}  // namespace histd::client::io
