// Fuzz target: the CSV readers (client/io/csv.h ReadCsvArray; the csv path of
// client/io/sample_reader.h).
//
// Feeds: byte 0 (bits 0-2: the dtype asked of ReadCsvArray, 0 = inferred, 1-7 = DTYPE_U8..F64;
// bits 3-4: the sample type asked of the sample reader, 0 = from the first line; bits 5-7:
// its Read batch size - 1), then the text of the file, read from a memfd.
// Asserts: no crash; an array read has rows x cols x element size bytes and survives
// WriteCsvArray + ReadCsvArray unchanged (NaNs as NaNs); the sample reader and ReadCsvArray
// agree: with bin indices asked for, the reader succeeds exactly when ReadCsvArray as U32
// gives one column (or no rows), with the same bytes; with x/y, likewise for F32 and two
// columns.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "client/dtype.h"
#include "client/io/csv.h"
#include "client/io/sample_reader.h"
#include "tests/fuzz/memfd_file.h"

namespace histd::fuzz {
namespace {

namespace io = client::io;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "csv_fuzz: %s\n", what.c_str());
  std::abort();
}

// Equal element by element, any NaN equal to any NaN.
bool SameElements(const io::ArrayData& a, const io::ArrayData& b) {
  if (a.dtype != b.dtype || a.bytes.size() != b.bytes.size()) return false;
  if (a.dtype != v1::DTYPE_F32 && a.dtype != v1::DTYPE_F64) return a.bytes == b.bytes;
  const size_t size = client::DTypeSize(a.dtype);
  for (size_t i = 0; i < a.bytes.size(); i += size) {
    double x, y;
    if (size == 4) {
      float fx, fy;
      std::memcpy(&fx, &a.bytes[i], 4);
      std::memcpy(&fy, &b.bytes[i], 4);
      x = fx;
      y = fy;
    } else {
      std::memcpy(&x, &a.bytes[i], 8);
      std::memcpy(&y, &b.bytes[i], 8);
    }
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::memcmp(&a.bytes[i], &b.bytes[i], size) != 0) return false;
  }
  return true;
}

// Every sample the reader hands out, or its error.
absl::StatusOr<std::string> ReadSamples(const std::string& path, v1::SampleType type, size_t batch) {
  io::SampleReaderOptions options;
  options.format = io::FileFormat::kCsv;
  options.type = type;
  absl::StatusOr<std::unique_ptr<io::SampleReader>> reader = io::OpenSampleReader(path, options);
  if (!reader.ok()) return reader.status();
  if (type != v1::SAMPLE_TYPE_UNSPECIFIED && (*reader)->type() != type) Fail("the reader changed the type asked for");
  std::string out;
  while (true) {
    absl::StatusOr<size_t> n = (*reader)->Read(batch, &out);
    if (!n.ok()) return n.status();
    if (*n == 0) return out;
    if (*n > batch) Fail("Read returned more samples than asked for");
  }
}

}  // namespace
}  // namespace histd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace histd;
  namespace io = client::io;
  static fuzz::MemFile* const file = new fuzz::MemFile("csv-fuzz");
  static fuzz::MemFile* const copy = new fuzz::MemFile("csv-fuzz-copy");
  if (size < 1) return -1;
  file->Write(data + 1, size - 1);

  const auto dtype = static_cast<v1::DType>(data[0] & 7);
  const absl::StatusOr<io::ArrayData> array = io::ReadCsvArray(file->path(), dtype);
  if (array.ok()) {
    const unsigned __int128 want =
        static_cast<unsigned __int128>(array->rows) * array->cols * client::DTypeSize(array->dtype);
    if (want != array->bytes.size() || (dtype != v1::DTYPE_UNSPECIFIED && array->dtype != dtype)) {
      fuzz::Fail("array size or dtype disagrees with its shape");
    }
    if (absl::Status s = io::WriteCsvArray(copy->path(), *array); !s.ok()) {
      fuzz::Fail("cannot write back what was read: " + s.ToString());
    }
    const absl::StatusOr<io::ArrayData> again = io::ReadCsvArray(copy->path(), array->dtype);
    if (!again.ok() || again->rows != array->rows || again->cols != array->cols ||
        !fuzz::SameElements(*again, *array)) {
      fuzz::Fail("WriteCsvArray + ReadCsvArray changed the array: " + again.status().ToString());
    }
  }

  const auto type = static_cast<v1::SampleType>((data[0] >> 3) & 3);
  const size_t batch = 1 + (data[0] >> 5);
  const absl::StatusOr<std::string> samples = fuzz::ReadSamples(file->path(), type, batch);
  if (type == v1::SAMPLE_TYPE_BIN_INDEX_U32 || type == v1::SAMPLE_TYPE_XY_F32) {
    const bool xy = type == v1::SAMPLE_TYPE_XY_F32;
    const absl::StatusOr<io::ArrayData> as_array =
        io::ReadCsvArray(file->path(), xy ? v1::DTYPE_F32 : v1::DTYPE_U32);
    const bool array_ok = as_array.ok() && (as_array->rows == 0 || as_array->cols == (xy ? 2u : 1u));
    if (samples.ok() != array_ok) {
      fuzz::Fail("the sample reader (" + samples.status().ToString() + ") and ReadCsvArray (" +
                 as_array.status().ToString() + ") disagree");
    }
    if (samples.ok() && *samples != as_array->bytes) fuzz::Fail("the sample reader and ReadCsvArray read different values");
  }
  return 0;
}
