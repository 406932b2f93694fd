#include "client/io/array_file.h"

#include "absl/strings/str_cat.h"
#include "client/dtype.h"
#include "client/io/csv.h"
#include "client/io/file_util.h"
#include "client/io/npy.h"

namespace histd::client::io {
namespace {

absl::StatusOr<ArrayData> ReadRawArray(const std::string& path, const ReadArrayOptions& options) {
  histd::v1::DType dtype = options.dtype;
  if (dtype == histd::v1::DTYPE_UNSPECIFIED) dtype = DTypeFromExtension(path);
  if (dtype == histd::v1::DTYPE_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "' is a raw file: give its element type (--dtype) or use an extension such as .f32"));
  }
  absl::StatusOr<std::string> bytes = ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  const size_t size = DTypeSize(dtype);
  if (bytes->size() % size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' has ", bytes->size(),
                                                   " bytes, not a multiple of the ",
                                                   DTypeShortName(dtype), " size ", size));
  }
  const uint64_t n = bytes->size() / size;
  ArrayData array;
  array.dtype = dtype;
  if (options.cols == 0 && options.rows == 0) {
    array.rows = 1;
    array.cols = n;
    array.one_dimensional = true;
  } else if (options.cols == 0) {
    array.rows = options.rows;
    array.cols = n / options.rows;
  } else {
    array.cols = options.cols;
    array.rows = options.rows != 0 ? options.rows : n / options.cols;
  }
  if (array.rows * array.cols != n) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' holds ", n,
                                                   " elements, which is not ", options.rows,
                                                   " x ", options.cols));
  }
  array.bytes = std::move(*bytes);
  return array;
}

}  // namespace

absl::StatusOr<ArrayData> ReadArrayFile(const std::string& path, const ReadArrayOptions& options) {
  switch (ResolveFormat(options.format, path)) {
    case FileFormat::kNpy: {
      absl::StatusOr<ArrayData> array = ReadNpyArray(path);
      if (!array.ok() || options.dtype == histd::v1::DTYPE_UNSPECIFIED) return array;
      return ConvertArray(*array, options.dtype);
    }
    case FileFormat::kCsv:
      return ReadCsvArray(path, options.dtype);
    default:
      return ReadRawArray(path, options);
  }
}

absl::Status WriteArrayFile(const std::string& path, const ArrayData& array, FileFormat format) {
  absl::Status valid = CheckArray(array);
  if (!valid.ok()) return valid;
  format = ResolveFormat(format, path);
  switch (format) {
    case FileFormat::kNpy:
      return WriteNpyArray(path, array);
    case FileFormat::kCsv:
      return WriteCsvArray(path, array);
    default: {
      absl::StatusOr<FilePtr> file = OpenFile(path, "wb");
      if (!file.ok()) return file.status();
      absl::Status status = WriteAll(file->get(), array.bytes, path);
      absl::Status closed = CloseFile(std::move(*file), path);
      return status.ok() ? closed : status;
    }
  }
}

}  // namespace histd::client::io
