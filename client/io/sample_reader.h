// Streaming readers of ingest samples: bin indices (packed uint32) or x/y float32 pairs,
// from files of any size in bounded memory.
//
//   raw   .u32 (also .u8 .i32 .i64 .u64): indices; .f32 (also .f64): x,y pairs; any other
//         name needs the type (and is read as uint32 / float32). The length must be a
//         multiple of the sample size (checked when opened).
//   npy   integers (uint8, int32, int64, uint32, uint64; numpy.save's default int64
//         included) of shape (n,) or (n, 1): indices; float32 or float64 of shape (n, 2),
//         C order: x/y.
//   csv   one index per line, or x,y per line (see csv.h for separators, comments, header);
//         the first data line decides unless the type is given.
//
// Conversions to the wire types: an index must be an integer in [0, 2^32) (in CSV also
// written as an integral float, "3.000000000000000000e+00" as numpy.savetxt writes it);
// otherwise Read fails with INVALID_ARGUMENT naming the sample's position (CSV: the line)
// and value, and nothing from that read on is handed out. float64 coordinates round to the
// nearest float32, which can move a value lying within half a float32 step of a bin edge
// across it; NaN and +-inf stay as they are, finite values beyond float32's range become
// +-inf (outside every axis either way). CSV coordinates parse straight to the nearest
// float32.
//
// Read() hands out samples in file order, packed little-endian, ready for an
// IngestRequest. Contents are not validated against any histogram: that is the server's job
// (an index beyond the histogram is rejected there, by message).
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
  // What is converted on the way, e.g. "i64 indices converted to uint32"; empty for none.
  const std::string& conversion() const { return conversion_; }

  // Appends up to max_samples packed samples to *out; returns how many. 0 means the end of
  // the input. Errors name the file and, for CSV, the line.
  virtual absl::StatusOr<size_t> Read(size_t max_samples, std::string* out) = 0;

 protected:
  histd::v1::SampleType type_ = histd::v1::SAMPLE_TYPE_UNSPECIFIED;
  std::optional<uint64_t> total_samples_;
  int64_t file_bytes_ = -1;
  std::string conversion_;
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
