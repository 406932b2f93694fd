// Whole arrays from and to files, in the format the extension names (file_format.h) unless
// one is given: inputs of compute requests, results of queries and computations.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "client/io/array_data.h"
#include "client/io/file_format.h"
#include "histd/v1/common.pb.h"

namespace histd::client::io {

struct ReadArrayOptions {
  FileFormat format = FileFormat::kAuto;
  // npy: convert to this dtype when set. CSV: parse as it (else inferred). Raw: the element
  // type (else from the extension; required otherwise).
  histd::v1::DType dtype = histd::v1::DTYPE_UNSPECIFIED;
  // Raw files only: the shape. cols = 0 means one row of all elements; rows = 0 with cols
  // set means as many rows as the data holds (the length must divide evenly).
  uint64_t rows = 0;
  uint64_t cols = 0;
};

absl::StatusOr<ArrayData> ReadArrayFile(const std::string& path, const ReadArrayOptions& options = {});

// Writes array to path ("-" is standard output, CSV or raw only) in format (kAuto: from
// the extension).
absl::Status WriteArrayFile(const std::string& path, const ArrayData& array,
                            FileFormat format = FileFormat::kAuto);

}  // namespace histd::client::io
