// CSV text for arrays and samples.
//
// Reading: one array row (or one sample) per line; fields separated by commas, semicolons,
// tabs or blanks; blank lines and lines starting with '#' are skipped; a first line with a
// non-numeric field is taken as a column header and skipped. Every row needs the same number
// of fields. Values parse as the requested dtype with range checks; with no dtype, all
// integers give i64 (u64 when one exceeds int64), anything else f64.
// Writing: one row per line (one value per line for a 1D array), integers in decimal, f32
// with 9 and f64 with 17 significant digits (both round-trip exactly).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/io/array_data.h"
#include "histd/v1/common.pb.h"

namespace histd::client::io {

// The fields of one line, whitespace-trimmed; empty for a blank or comment line.
std::vector<absl::string_view> SplitCsvFields(absl::string_view line);

// True when every field parses as a number (integer or float, including nan and inf).
bool AllNumeric(const std::vector<absl::string_view>& fields);

// Parses text as one element of dtype into out (DTypeSize(dtype) bytes); INVALID_ARGUMENT
// naming the text when it is not a number or does not fit.
absl::Status ParseElement(absl::string_view text, histd::v1::DType dtype, char* out);

absl::StatusOr<ArrayData> ReadCsvArray(const std::string& path,
                                       histd::v1::DType dtype = histd::v1::DTYPE_UNSPECIFIED);

absl::Status WriteCsv(std::FILE* file, const ArrayData& array, const std::string& path);
// path "-" writes to standard output.
absl::Status WriteCsvArray(const std::string& path, const ArrayData& array);

}  // namespace histd::client::io
