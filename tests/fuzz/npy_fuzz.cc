// Fuzz target: the .npy readers (client/io/npy.h: ParseNpyHeader, ReadNpyArray; and the npy
// path of client/io/sample_reader.h).
//
// Feeds: byte 0 (bits 0-1: the sample type asked of the sample reader, 0 = from the file;
// bits 2-7: its Read batch size - 1), then the bytes of the file, read from a memfd.
// Asserts: no crash, no allocation beyond the file's size; ReadNpyArray accepts only a file
// whose header ParseNpyHeader accepts and whose size is the header plus exactly the bytes
// the shape needs, returns the data as stored (C order) or transposed (Fortran order),
// and its array survives WriteNpyArray + ReadNpyArray unchanged; an opened sample reader
// knows its sample count, header + count x the file's sample size is the file size (no
// overflow), and reading hands out the file's values converted to the wire types (indices
// in [0, 2^32) as uint32, float64 coordinates rounded to float32), or an error.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "client/dtype.h"
#include "client/io/npy.h"
#include "client/io/sample_reader.h"
#include "client/sample_batcher.h"
#include "tests/fuzz/memfd_file.h"

namespace histd::fuzz {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "npy_fuzz: %s\n", what.c_str());
  std::abort();
}

}  // namespace
}  // namespace histd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace histd;
  namespace io = client::io;
  static fuzz::MemFile* const file = new fuzz::MemFile("npy-fuzz");
  static fuzz::MemFile* const copy = new fuzz::MemFile("npy-fuzz-copy");
  if (size < 1) return -1;
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  file->Write(bytes.data(), bytes.size());

  const absl::StatusOr<io::NpyHeader> header = io::ParseNpyHeader(bytes);
  const absl::StatusOr<io::ArrayData> array = io::ReadNpyArray(file->path());
  if (array.ok()) {
    if (!header.ok()) fuzz::Fail("ReadNpyArray accepted a header ParseNpyHeader refuses");
    const size_t element = client::DTypeSize(array->dtype);
    const unsigned __int128 want = static_cast<unsigned __int128>(array->rows) * array->cols * element;
    if (array->dtype != header->dtype || want != array->bytes.size() ||
        header->data_offset + static_cast<unsigned __int128>(want) != bytes.size()) {
      fuzz::Fail("array size disagrees with the header or the file");
    }
    const std::string stored = bytes.substr(header->data_offset);
    if (!(header->fortran_order && array->rows > 1 && array->cols > 1) && stored != array->bytes) {
      fuzz::Fail("C-order data not returned as stored");
    }
    if (absl::Status s = io::WriteNpyArray(copy->path(), *array); !s.ok()) {
      fuzz::Fail("cannot write back what was read: " + s.ToString());
    }
    const absl::StatusOr<io::ArrayData> again = io::ReadNpyArray(copy->path());
    if (!again.ok() || again->dtype != array->dtype || again->rows != array->rows ||
        again->cols != array->cols || again->one_dimensional != array->one_dimensional ||
        again->bytes != array->bytes) {
      fuzz::Fail("WriteNpyArray + ReadNpyArray changed the array: " + again.status().ToString());
    }
  }

  io::SampleReaderOptions options;
  options.format = io::FileFormat::kNpy;
  options.type = static_cast<v1::SampleType>(data[0] & 3);
  absl::StatusOr<std::unique_ptr<io::SampleReader>> reader = io::OpenSampleReader(file->path(), options);
  if (!reader.ok()) return 0;
  if (!header.ok()) fuzz::Fail("the sample reader accepted a header ParseNpyHeader refuses");
  const bool xy = (*reader)->type() == v1::SAMPLE_TYPE_XY_F32;
  const size_t element = client::DTypeSize(header->dtype);
  const size_t file_sample = (xy ? 2 : 1) * element;
  if (element == 0 || !(*reader)->total_samples().has_value() ||
      header->data_offset + static_cast<unsigned __int128>(*(*reader)->total_samples()) * file_sample !=
          bytes.size()) {
    fuzz::Fail("the sample reader's count disagrees with the file size");
  }
  std::string out;
  const size_t batch = 1 + (data[0] >> 2);
  while (true) {
    const absl::StatusOr<size_t> n = (*reader)->Read(batch, &out);
    if (!n.ok()) return 0;
    if (*n == 0) break;
    if (*n > batch) fuzz::Fail("Read returned more samples than asked for");
  }
  // The reference: each value of the file converted to the wire type on its own.
  const std::string stored = bytes.substr(header->data_offset);
  std::string want;
  for (size_t i = 0; i + element <= stored.size(); i += element) {
    const char* p = stored.data() + i;
    if (xy) {
      float f;
      if (header->dtype == v1::DTYPE_F32) {
        std::memcpy(&f, p, 4);
      } else {
        double d;
        std::memcpy(&d, p, 8);
        f = static_cast<float>(d);  // to nearest; beyond float32's range: +-inf
      }
      want.append(reinterpret_cast<const char*>(&f), 4);
      continue;
    }
    uint64_t u = 0;
    bool fits = true;
    switch (header->dtype) {
      case v1::DTYPE_U8: u = static_cast<uint8_t>(*p); break;
      case v1::DTYPE_U32: { uint32_t v; std::memcpy(&v, p, 4); u = v; break; }
      case v1::DTYPE_U64: std::memcpy(&u, p, 8); break;
      case v1::DTYPE_I32: { int32_t v; std::memcpy(&v, p, 4); fits = v >= 0; u = static_cast<uint64_t>(v); break; }
      case v1::DTYPE_I64: { int64_t v; std::memcpy(&v, p, 8); fits = v >= 0; u = static_cast<uint64_t>(v); break; }
      default: fits = false;
    }
    if (!fits || u > UINT32_MAX) fuzz::Fail("an index out of range was handed out");
    const uint32_t index = static_cast<uint32_t>(u);
    want.append(reinterpret_cast<const char*>(&index), 4);
  }
  if (out != want) fuzz::Fail("the samples read are not the file's values converted");
  return 0;
}
