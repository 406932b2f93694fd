// Fuzz target: the CSV readers (client/io/csv.h ReadCsvArray; the csv path of
// client/io/sample_reader.h).
//
// Feeds: byte 0 (bits 0-2: the dtype asked of ReadCsvArray, 0 = inferred, 1-7 = DTYPE_U8..F64;
// bits 3-4: the sample type asked of the sample reader, 0 = from the first line; bits 5-7:
// its Read batch size - 1), then the text of the file, read from a memfd.
// Asserts: no crash; an array read has rows x cols x element size bytes and survives
// WriteCsvArray + ReadCsvArray unchanged (NaNs as NaNs); the sample reader and ReadCsvArray
// agree: with x/y asked for, the reader succeeds exactly when ReadCsvArray as F32 gives two
// columns (or no rows), with the same bytes; with bin indices, a file ReadCsvArray reads as
// one U32 column gives the same indices, and what the reader accepts is one F64 column of
// integral values in [0, 2^32), each the index read.
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
  if (type == v1::SAMPLE_TYPE_XY_F32) {
    const absl::StatusOr<io::ArrayData> as_array = io::ReadCsvArray(file->path(), v1::DTYPE_F32);
    const bool array_ok = as_array.ok() && (as_array->rows == 0 || as_array->cols == 2u);
    if (samples.ok() != array_ok) {
      fuzz::Fail("the sample reader (" + samples.status().ToString() + ") and ReadCsvArray (" +
                 as_array.status().ToString() + ") disagree");
    }
    if (samples.ok() && *samples != as_array->bytes) fuzz::Fail("the sample reader and ReadCsvArray read different values");
  }
  if (type == v1::SAMPLE_TYPE_BIN_INDEX_U32) {
    // Indices: integers in [0, 2^32), also written as integral floats. Every file that
    // ReadCsvArray reads as one u32 column gives the same indices; and whatever the reader
    // accepts, ReadCsvArray reads as one f64 column of those integral values.
    const absl::StatusOr<io::ArrayData> as_u32 = io::ReadCsvArray(file->path(), v1::DTYPE_U32);
    if (as_u32.ok() && (as_u32->rows == 0 || as_u32->cols == 1) &&
        (!samples.ok() || *samples != as_u32->bytes)) {
      fuzz::Fail("the sample reader (" + samples.status().ToString() + ") misreads a u32 column");
    }
    if (samples.ok()) {
      const absl::StatusOr<io::ArrayData> as_f64 = io::ReadCsvArray(file->path(), v1::DTYPE_F64);
      if (!as_f64.ok() || (as_f64->rows != 0 && as_f64->cols != 1) ||
          as_f64->bytes.size() != 2 * samples->size()) {
        fuzz::Fail("the sample reader accepted what ReadCsvArray refuses as one f64 column: " +
                   as_f64.status().ToString());
      }
      for (size_t i = 0; i < samples->size() / 4; ++i) {
        uint32_t index;
        double d;
        std::memcpy(&index, samples->data() + 4 * i, 4);
        std::memcpy(&d, as_f64->bytes.data() + 8 * i, 8);
        if (!(d >= 0 && d < 4294967296.0 && d == std::floor(d)) || static_cast<uint32_t>(d) != index) {
          fuzz::Fail("index " + std::to_string(i) + " read as " + std::to_string(index) +
                     ", its value is " + std::to_string(d));
        }
      }
    }
  }
  return 0;
}
