// histd_e2e_tool: generates sample files and the histograms they must produce, and compares
// .npy files, for tests/e2e/e2e_test.sh. Independent of the client library on purpose: it
// has its own tiny .npy reader/writer and its own reference loop, so that a bug in histctl's
// file code or in the server cannot cancel out.
//
//   gen-indices ROWS COLS CAP N SEED OUT(.u32|.csv|.npy) EXPECTED.npy
//       N flattened indices, ~70% in a small hot block (saturates), the rest uniform, plus
//       the first and last bin; EXPECTED is rows x cols u8 of min(cap, hits).
//   gen-xy ROWS COLS CAP N SEED XLO XHI YLO YHI OUT.f32 EXPECTED.npy COUNTS.txt
//       N float32 (x, y) pairs, some outside the axes; COUNTS gets "name value" lines for
//       x_underflow x_overflow y_underflow y_overflow samples_outside samples_binned.
//   derive IN.npy ROW_BEGIN ROW_END COL_BEGIN COL_END ROW_FACTOR COL_FACTOR TRANSPOSE OUT.npy
//       The query result histd must give for that region/rebin/transpose of IN (u8 when
//       both factors are 1, else u32 block sums).
//   project IN.npy rows|cols OUT.npy     uint64 sums collapsing rows (per column) or cols.
//   sum IN.npy                           prints the sum of all elements.
//   compare A.npy B.npy                  exit 0 when dtype, shape and data are equal.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/histogram_types.h"

namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "histd_e2e_tool: %s\n", message.c_str());
  std::exit(2);
}

uint64_t ToU64(const char* s) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || *end != '\0') Die(std::string("not a number: ") + s);
  return v;
}

float ToF32(const char* s) {
  char* end = nullptr;
  const float v = std::strtof(s, &end);
  if (end == s || *end != '\0') Die(std::string("not a number: ") + s);
  return v;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) Die("cannot write " + path);
  if (std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) Die("short write " + path);
  std::fclose(f);
}

std::string ReadBytes(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) Die("cannot read " + path);
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

// A minimal .npy: version 1.0, C order, 1 or 2 dimensions.
struct Npy {
  std::string descr;  // "|u1", "<u4", "<u8", ...
  std::vector<uint64_t> shape;
  std::string data;
};

void WriteNpy(const std::string& path, const Npy& a) {
  std::string dict = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i) {
    dict += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : i + 1 < a.shape.size() ? ", " : "");
  }
  dict += "), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(dict.size() & 0xff));
  out.push_back(static_cast<char>(dict.size() >> 8));
  WriteBytes(path, out + dict + a.data);
}

Npy ReadNpy(const std::string& path) {
  const std::string bytes = ReadBytes(path);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) Die(path + ": not npy");
  if (bytes[6] != 1) Die(path + ": expected npy version 1.0");
  const size_t len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  if ((10 + len) % 64 != 0) Die(path + ": header not padded to 64 bytes");
  const std::string dict = bytes.substr(10, len);
  if (dict.back() != '\n') Die(path + ": header does not end in newline");
  if (dict.find("'fortran_order': False") == std::string::npos) Die(path + ": not C order");
  Npy a;
  const size_t d = dict.find("'descr': '");
  if (d == std::string::npos) Die(path + ": no descr");
  a.descr = dict.substr(d + 10, dict.find('\'', d + 10) - d - 10);
  const size_t s = dict.find("'shape': (");
  if (s == std::string::npos) Die(path + ": no shape");
  const std::string shape = dict.substr(s + 10, dict.find(')', s) - s - 10);
  size_t pos = 0;
  while (pos < shape.size()) {
    while (pos < shape.size() && (shape[pos] == ' ' || shape[pos] == ',')) ++pos;
    if (pos >= shape.size()) break;
    a.shape.push_back(std::strtoull(shape.c_str() + pos, nullptr, 10));
    while (pos < shape.size() && shape[pos] != ',') ++pos;
  }
  a.data = bytes.substr(10 + len);
  uint64_t elements = 1;
  for (uint64_t v : a.shape) elements *= v;
  const uint64_t size = std::strtoull(a.descr.c_str() + 2, nullptr, 10);
  if (elements * size != a.data.size()) Die(path + ": data length does not match shape");
  return a;
}

uint64_t Element(const Npy& a, uint64_t i) {
  if (a.descr == "|u1") return static_cast<unsigned char>(a.data[i]);
  if (a.descr == "<u4") {
    uint32_t v;
    std::memcpy(&v, &a.data[4 * i], 4);
    return v;
  }
  if (a.descr == "<u8") {
    uint64_t v;
    std::memcpy(&v, &a.data[8 * i], 8);
    return v;
  }
  Die("unsupported descr " + a.descr);
}

Npy Bins(uint64_t rows, uint64_t cols, uint32_t cap, const std::vector<uint64_t>& hits) {
  Npy e{"|u1", {rows, cols}, std::string(rows * cols, '\0')};
  for (uint64_t i = 0; i < hits.size(); ++i) {
    e.data[i] = static_cast<char>(std::min<uint64_t>(cap, hits[i]));
  }
  return e;
}

int GenIndices(char** a) {
  const uint64_t rows = ToU64(a[0]), cols = ToU64(a[1]), cap = ToU64(a[2]), n = ToU64(a[3]);
  std::mt19937_64 rng(ToU64(a[4]));
  const std::string out = a[5];
  const uint64_t bins = rows * cols;
  std::vector<uint64_t> hits(bins, 0);
  std::vector<uint32_t> samples;
  samples.reserve(n);
  // Hot block: 8 rows x 16 cols around the middle (clipped to the shape).
  const uint64_t hot_r0 = rows / 2, hot_c0 = cols / 3;
  const uint64_t hot_rows = std::min<uint64_t>(8, rows - hot_r0), hot_cols = std::min<uint64_t>(16, cols - hot_c0);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t index;
    if (i == 0) {
      index = 0;
    } else if (i == 1) {
      index = bins - 1;
    } else if (rng() % 10 < 7) {
      index = (hot_r0 + rng() % hot_rows) * cols + hot_c0 + rng() % hot_cols;
    } else {
      index = rng() % bins;
    }
    samples.push_back(static_cast<uint32_t>(index));
    ++hits[index];
  }
  const auto ends_with = [&](const char* ext) {
    return out.size() > 4 && out.compare(out.size() - 4, 4, ext) == 0;
  };
  if (ends_with(".npy")) {
    WriteNpy(out, Npy{"<u4", {n}, std::string(reinterpret_cast<const char*>(samples.data()), 4 * n)});
  } else if (ends_with(".csv")) {
    std::string text = "index\n";
    for (uint32_t s : samples) text += std::to_string(s) + "\n";
    WriteBytes(out, text);
  } else {
    WriteBytes(out, std::string(reinterpret_cast<const char*>(samples.data()), 4 * samples.size()));
  }
  WriteNpy(a[6], Bins(rows, cols, static_cast<uint32_t>(cap), hits));
  return 0;
}

int GenXY(char** a) {
  const uint64_t rows = ToU64(a[0]), cols = ToU64(a[1]), cap = ToU64(a[2]), n = ToU64(a[3]);
  std::mt19937_64 rng(ToU64(a[4]));
  const float xlo = ToF32(a[5]), xhi = ToF32(a[6]), ylo = ToF32(a[7]), yhi = ToF32(a[8]);
  // As model/histogram_types.h prescribes: scale in float32.
  const float xscale = histd::AxisScale(xlo, xhi, static_cast<uint32_t>(cols));
  const float yscale = histd::AxisScale(ylo, yhi, static_cast<uint32_t>(rows));
  std::vector<uint64_t> hits(rows * cols, 0);
  std::vector<float> xy;
  uint64_t xu = 0, xo = 0, yu = 0, yo = 0, outside = 0, binned = 0;
  // Draw from a range 10% wider than the axes, so that some fall outside; include the edges.
  std::uniform_real_distribution<float> dx(xlo - 0.1f * (xhi - xlo), xhi + 0.1f * (xhi - xlo));
  std::uniform_real_distribution<float> dy(ylo - 0.1f * (yhi - ylo), yhi + 0.1f * (yhi - ylo));
  for (uint64_t i = 0; i < n; ++i) {
    float x = dx(rng), y = dy(rng);
    if (i == 0) x = xlo, y = ylo;
    if (i == 1) x = xhi, y = yhi;  // hi is outside: overflow
    if (i == 2) x = std::nextafter(xhi, xlo), y = std::nextafter(yhi, ylo);  // the last bin
    xy.push_back(x);
    xy.push_back(y);
    const int64_t bx = histd::AxisBin(x, xlo, xhi, xscale, static_cast<uint32_t>(cols));
    const int64_t by = histd::AxisBin(y, ylo, yhi, yscale, static_cast<uint32_t>(rows));
    if (bx == -1) ++xu;
    if (bx == -2) ++xo;
    if (by == -1) ++yu;
    if (by == -2) ++yo;
    if (bx < 0 || by < 0) {
      ++outside;
      continue;
    }
    ++binned;
    ++hits[static_cast<uint64_t>(by) * cols + static_cast<uint64_t>(bx)];
  }
  WriteBytes(a[9], std::string(reinterpret_cast<const char*>(xy.data()), 4 * xy.size()));
  WriteNpy(a[10], Bins(rows, cols, static_cast<uint32_t>(cap), hits));
  const std::string counts = "x_underflow " + std::to_string(xu) + "\nx_overflow " + std::to_string(xo) +
                             "\ny_underflow " + std::to_string(yu) + "\ny_overflow " + std::to_string(yo) +
                             "\nsamples_outside " + std::to_string(outside) + "\nsamples_binned " +
                             std::to_string(binned) + "\n";
  WriteBytes(a[11], counts);
  return 0;
}

int Derive(char** a) {
  const Npy in = ReadNpy(a[0]);
  if (in.shape.size() != 2) Die("derive needs a 2D input");
  const uint64_t rows = in.shape[0], cols = in.shape[1];
  uint64_t r0 = ToU64(a[1]), r1 = ToU64(a[2]), c0 = ToU64(a[3]), c1 = ToU64(a[4]);
  const uint64_t rf = ToU64(a[5]), cf = ToU64(a[6]);
  const bool transpose = ToU64(a[7]) != 0;
  if (r0 == 0 && r1 == 0 && c0 == 0 && c1 == 0) r1 = rows, c1 = cols;
  const uint64_t out_rows = (r1 - r0 + rf - 1) / rf, out_cols = (c1 - c0 + cf - 1) / cf;
  std::vector<uint64_t> sums(out_rows * out_cols, 0);
  for (uint64_t r = r0; r < r1; ++r) {
    for (uint64_t c = c0; c < c1; ++c) sums[(r - r0) / rf * out_cols + (c - c0) / cf] += Element(in, r * cols + c);
  }
  const bool u8 = rf == 1 && cf == 1;
  Npy out{u8 ? "|u1" : "<u4", {}, ""};
  out.shape = transpose ? std::vector<uint64_t>{out_cols, out_rows} : std::vector<uint64_t>{out_rows, out_cols};
  for (uint64_t i = 0; i < out.shape[0]; ++i) {
    for (uint64_t j = 0; j < out.shape[1]; ++j) {
      const uint64_t v = transpose ? sums[j * out_cols + i] : sums[i * out_cols + j];
      if (u8) {
        out.data.push_back(static_cast<char>(v));
      } else {
        const uint32_t w = static_cast<uint32_t>(v);
        out.data.append(reinterpret_cast<const char*>(&w), 4);
      }
    }
  }
  WriteNpy(a[8], out);
  return 0;
}

int Project(char** a) {
  const Npy in = ReadNpy(a[0]);
  const uint64_t rows = in.shape[0], cols = in.shape[1];
  const bool collapse_rows = std::string(a[1]) == "rows";
  std::vector<uint64_t> sums(collapse_rows ? cols : rows, 0);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) sums[collapse_rows ? c : r] += Element(in, r * cols + c);
  }
  WriteNpy(a[2], Npy{"<u8", {sums.size()}, std::string(reinterpret_cast<const char*>(sums.data()), 8 * sums.size())});
  return 0;
}

int Sum(char** a) {
  const Npy in = ReadNpy(a[0]);
  uint64_t elements = 1, sum = 0;
  for (uint64_t v : in.shape) elements *= v;
  for (uint64_t i = 0; i < elements; ++i) sum += Element(in, i);
  std::printf("%llu\n", static_cast<unsigned long long>(sum));
  return 0;
}

int Compare(char** a) {
  const Npy x = ReadNpy(a[0]), y = ReadNpy(a[1]);
  if (x.descr != y.descr) {
    std::fprintf(stderr, "compare: dtype %s vs %s\n", x.descr.c_str(), y.descr.c_str());
    return 1;
  }
  if (x.shape != y.shape) {
    std::fprintf(stderr, "compare: shapes differ (%zu vs %zu dims)\n", x.shape.size(), y.shape.size());
    for (uint64_t v : x.shape) std::fprintf(stderr, " %llu", static_cast<unsigned long long>(v));
    std::fprintf(stderr, " vs");
    for (uint64_t v : y.shape) std::fprintf(stderr, " %llu", static_cast<unsigned long long>(v));
    std::fprintf(stderr, "\n");
    return 1;
  }
  const uint64_t size = std::strtoull(x.descr.c_str() + 2, nullptr, 10);
  uint64_t mismatches = 0;
  for (uint64_t i = 0; i * size < x.data.size(); ++i) {
    if (x.data.compare(i * size, size, y.data, i * size, size) != 0) {
      if (mismatches < 5) {
        std::fprintf(stderr, "compare: element %llu: %llu vs %llu\n", static_cast<unsigned long long>(i),
                     static_cast<unsigned long long>(Element(x, i)), static_cast<unsigned long long>(Element(y, i)));
      }
      ++mismatches;
    }
  }
  if (mismatches > 0) {
    std::fprintf(stderr, "compare: %llu elements differ\n", static_cast<unsigned long long>(mismatches));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  const int n = argc - 2;
  if (cmd == "gen-indices" && n == 7) return GenIndices(argv + 2);
  if (cmd == "gen-xy" && n == 12) return GenXY(argv + 2);
  if (cmd == "derive" && n == 9) return Derive(argv + 2);
  if (cmd == "project" && n == 3) return Project(argv + 2);
  if (cmd == "sum" && n == 1) return Sum(argv + 2);
  if (cmd == "compare" && n == 2) return Compare(argv + 2);
  Die("usage: see the comment at the top of tests/e2e/e2e_tool.cc");
}
