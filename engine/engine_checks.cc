// The checks every engine runs before an operation (its can_implement), and the output
// shape of ReadBins. Declared at the bottom of engine/engine.h. Pure functions: no engine
// state, safe from any thread. Every failure is INVALID_ARGUMENT with a message that names
// the field and the values that are wrong.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "model/checked_size.h"
#include "engine/engine.h"

namespace histd {
namespace {

// a * b, or false when the product does not fit in 64 bits.
bool MulFits(uint64_t a, uint64_t b, uint64_t* product) {
  return !__builtin_mul_overflow(a, b, product);
}

bool KnownDType(DType dtype) { return DTypeSize(dtype) != 0; }

// begin == end is an empty range (numpy's a[c:c]): a read of it gives an empty array.
absl::Status CheckRange(const char* what, uint32_t begin, uint32_t end, uint32_t size) {
  if (begin > end) {
    return absl::InvalidArgumentError(
        absl::StrFormat("region %s [%u, %u) end before they begin", what, begin, end));
  }
  if (end > size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "region %s [%u, %u) exceed the histogram's %u %s", what, begin, end, size, what));
  }
  return absl::OkStatus();
}

// A pooled view's size along one dimension: 0 (cut by factor), or 1..extent with factor 1.
absl::Status CheckOutSize(const char* what, uint32_t out, uint32_t factor, uint32_t extent) {
  if (out == 0) return absl::OkStatus();
  if (factor != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "out_%s %u and a %s factor of %u both given; a read is cut one way", what, out, what,
        factor));
  }
  if (out > extent) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "out_%s %u exceeds the region's %u %s (a pooled view has at most one block per bin)",
        what, out, extent, what));
  }
  return absl::OkStatus();
}

// The extent a reduction collapses into each output element.
uint64_t ReducedExtent(const ArrayRef& a, Dim collapse) {
  switch (collapse) {
    case Dim::kAll: return a.rows * a.cols;
    case Dim::kRows: return a.rows;
    case Dim::kCols: return a.cols;
  }
  return 0;
}

absl::Status CheckMatmulOperand(const char* name, const ArrayRef& a) {
  if (absl::Status s = CheckArray(a); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("matmul %s: %s", name, s.message()));
  }
  if (a.histogram == nullptr && a.dtype != DType::kF32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "matmul %s must be f32 or a histogram, got %s", name, DTypeName(a.dtype)));
  }
  return absl::OkStatus();
}

absl::Status CheckAxis(size_t item, char name, const AxisRange& axis) {
  // Any finite lo < hi bins exactly (model/axis_binning.h), however wide: the width is
  // taken in float64, where float32 bounds never overflow.
  if (!std::isfinite(axis.lo) || !std::isfinite(axis.hi) || !(axis.lo < axis.hi)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ingest item %u: coordinates need a finite %c axis with lo < hi, got [%g, %g)", item,
        name, axis.lo, axis.hi));
  }
  return absl::OkStatus();
}

}  // namespace

BlockAxis ReadRowBlocks(const ReadSpec& spec) {
  return BlockAxis{spec.region.rows(), spec.row_factor, spec.out_rows};
}

BlockAxis ReadColBlocks(const ReadSpec& spec) {
  return BlockAxis{spec.region.cols(), spec.col_factor, spec.out_cols};
}

uint64_t ReadBinsRows(const ReadSpec& spec) {
  return (spec.transpose ? ReadColBlocks(spec) : ReadRowBlocks(spec)).count();
}

uint64_t ReadBinsCols(const ReadSpec& spec) {
  return (spec.transpose ? ReadRowBlocks(spec) : ReadColBlocks(spec)).count();
}

bool ReadBinsAsStored(const ReadSpec& spec) {
  return ReadBinsType(spec) == DType::kU8 && ReadRowBlocks(spec).largest_block() <= 1 &&
         ReadColBlocks(spec).largest_block() <= 1;
}

DType ReadBinsType(const ReadSpec& spec) {
  const bool as_stored = spec.row_factor == 1 && spec.col_factor == 1 && spec.out_rows == 0 &&
                         spec.out_cols == 0;
  return spec.pool == PoolOp::kMax || as_stored ? DType::kU8 : DType::kU32;
}

uint64_t ReadBinsBytes(const ReadSpec& spec) {
  // At most 2^32 x 2^32 one-byte bins, or fewer 4-byte sums: always fits in 64 bits.
  return ReadBinsRows(spec) * ReadBinsCols(spec) * DTypeSize(ReadBinsType(spec));
}

absl::Status CheckHistogramShape(const HistogramShape& shape) {
  if (shape.rows < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("histogram rows must be >= 1, got %u", shape.rows));
  }
  if (shape.cols < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("histogram cols must be >= 1, got %u", shape.cols));
  }
  if (shape.cap < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("histogram cap must be in 1..255, got %u", shape.cap));
  }
  // rows * cols <= (2^32 - 1)^2: shape.bins() computes it in 64 bits without overflow.
  if (shape.bins() > kMaxHistogramBins) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "histogram %u x %u = %u bins exceeds the largest histogram, %u bins", shape.rows, shape.cols,
        shape.bins(), kMaxHistogramBins));
  }
  return absl::OkStatus();
}

absl::Status CheckReadSpec(const HistogramShape& shape, const ReadSpec& spec) {
  if (spec.row_factor < 1 || spec.col_factor < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rebin factors must be >= 1, got row_factor %u and col_factor %u",
                        spec.row_factor, spec.col_factor));
  }
  if (absl::Status s = CheckRange("rows", spec.region.row_begin, spec.region.row_end, shape.rows);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckRange("cols", spec.region.col_begin, spec.region.col_end, shape.cols);
      !s.ok()) {
    return s;
  }
  if (spec.pool != PoolOp::kSum && spec.pool != PoolOp::kMax) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown pool op %d", static_cast<int>(spec.pool)));
  }
  if (absl::Status s = CheckOutSize("rows", spec.out_rows, spec.row_factor, spec.region.rows());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckOutSize("cols", spec.out_cols, spec.col_factor, spec.region.cols());
      !s.ok()) {
    return s;
  }
  // Each output element of a summed read is a uint32 sum of one block: refuse blocks whose
  // sum could exceed it instead of wrapping.
  const uint64_t block_rows = ReadRowBlocks(spec).largest_block();
  const uint64_t block_cols = ReadColBlocks(spec).largest_block();
  const uint64_t block_max = block_rows * block_cols * shape.cap;  // < 2^32 * 2^32 / 2^8 * 2^8
  if (ReadBinsType(spec) == DType::kU32 && block_max > UINT32_MAX) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rebin blocks of %u x %u bins at cap %u may sum to %u, more than a uint32 holds",
        block_rows, block_cols, shape.cap, block_max));
  }
  return absl::OkStatus();
}

absl::Status CheckArray(const ArrayRef& a) {
  if (!KnownDType(a.dtype)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown array dtype %d", static_cast<int>(a.dtype)));
  }
  if (a.host != nullptr && a.histogram != nullptr) {
    return absl::InvalidArgumentError(
        "array has both host data and a histogram; exactly one source must be set");
  }
  if (a.histogram != nullptr) {
    const HistogramShape& shape = a.histogram->shape();
    if (a.dtype != DType::kU8) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a histogram array must have dtype u8, got %s", DTypeName(a.dtype)));
    }
    if (a.rows != shape.rows || a.cols != shape.cols) {
      return absl::InvalidArgumentError(
          absl::StrFormat("array shape %u x %u does not match its histogram's %u x %u", a.rows,
                          a.cols, shape.rows, shape.cols));
    }
    return absl::OkStatus();
  }
  uint64_t elements = 0, bytes = 0;
  if (!MulFits(a.rows, a.cols, &elements) || !MulFits(elements, DTypeSize(a.dtype), &bytes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "array shape %u x %u of %s overflows a 64-bit byte size", a.rows, a.cols,
        DTypeName(a.dtype)));
  }
  // An empty host array may come from an empty vector whose data() is null.
  if (a.host == nullptr && elements != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "array of %u x %u has no data: neither host memory nor a histogram is set", a.rows,
        a.cols));
  }
  return absl::OkStatus();
}

absl::Status CheckReduce(const ArrayRef& input, ReduceOp op, Dim collapse) {
  if (absl::Status s = CheckArray(input); !s.ok()) return s;
  if (op != ReduceOp::kSum && op != ReduceOp::kMin &&
      op != ReduceOp::kMax) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown reduce op %d", static_cast<int>(op)));
  }
  if (collapse != Dim::kAll && collapse != Dim::kRows && collapse != Dim::kCols) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown reduce dimension %d", static_cast<int>(collapse)));
  }
  if (op != ReduceOp::kSum && ReducedExtent(input, collapse) == 0) {
    const char* what = collapse == Dim::kAll    ? "all elements"
                       : collapse == Dim::kRows ? "the rows"
                                                : "the columns";
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s over %s of a %u x %u array: the extent is empty, so there is no %s",
        op == ReduceOp::kMin ? "min" : "max", what, input.rows, input.cols,
        op == ReduceOp::kMin ? "minimum" : "maximum"));
  }
  return absl::OkStatus();
}

absl::Status CheckMatmul(const MatmulArgs& args) {
  if (absl::Status s = CheckMatmulOperand("a", args.a); !s.ok()) return s;
  if (absl::Status s = CheckMatmulOperand("b", args.b); !s.ok()) return s;
  if (args.a.cols != args.b.rows) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "matmul inner dimensions disagree: a is %u x %u, b is %u x %u (a cols %u != b rows %u)",
        args.a.rows, args.a.cols, args.b.rows, args.b.cols, args.a.cols, args.b.rows));
  }
  uint64_t elements = 0, bytes = 0;
  if (!MulFits(args.a.rows, args.b.cols, &elements) || !MulFits(elements, 4, &bytes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "matmul result %u x %u overflows a 64-bit byte size", args.a.rows, args.b.cols));
  }
  if (args.beta != 0.0f && args.c == nullptr && elements != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("matmul c (%u x %u) is required when beta != 0 (beta = %g)",
                        args.a.rows, args.b.cols, args.beta));
  }
  return absl::OkStatus();
}

absl::Status CheckIngestItems(const StagingBuffer& staging, const std::vector<IngestItem>& items) {
  for (size_t i = 0; i < items.size(); ++i) {
    const IngestItem& item = items[i];
    if (item.histogram == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat("ingest item %u: no histogram", i));
    }
    if (item.kind != SampleKind::kBinIndex && item.kind != SampleKind::kCoordXY) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ingest item %u: unknown sample kind %d", i, static_cast<int>(item.kind)));
    }
    const size_t sample_bytes = SampleBytes(item.kind);
    size_t bytes = 0, end = 0;
    if (__builtin_mul_overflow(item.count, sample_bytes, &bytes) ||
        __builtin_add_overflow(item.byte_offset, bytes, &end) || end > staging.capacity()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ingest item %u: %u samples of %u bytes at offset %u exceed the staging buffer's "
          "%u bytes",
          i, item.count, sample_bytes, item.byte_offset, staging.capacity()));
    }
    if (item.byte_offset % sample_bytes != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ingest item %u: offset %u is not a multiple of the sample size %u", i,
          item.byte_offset, sample_bytes));
    }
    if (item.kind == SampleKind::kCoordXY) {
      if (absl::Status s = CheckAxis(i, 'x', item.x); !s.ok()) return s;
      if (absl::Status s = CheckAxis(i, 'y', item.y); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

static absl::StatusOr<ResultShape> MakeResultShape(DType dtype, uint64_t rows, uint64_t cols,
                                            const char* what) {
  absl::StatusOr<uint64_t> bytes = CheckedArrayBytes(rows, cols, DTypeSize(dtype), what);
  if (!bytes.ok()) return bytes.status();
  return ResultShape{dtype, rows, cols, *bytes};
}

absl::StatusOr<ResultShape> ReduceResultShape(const ArrayRef& input, ReduceOp op,
                                              Dim collapse) {
  if (absl::Status s = CheckReduce(input, op, collapse); !s.ok()) return s;
  const DType dtype = op == ReduceOp::kSum ? SumType(input.dtype) : input.dtype;
  const uint64_t rows = collapse == Dim::kCols ? input.rows : 1;
  const uint64_t cols = collapse == Dim::kRows ? input.cols : 1;
  return MakeResultShape(dtype, rows, cols, "reduce result");
}

absl::StatusOr<ResultShape> ScanResultShape(const ArrayRef& input, Dim along) {
  if (absl::Status s = CheckArray(input); !s.ok()) return s;
  if (along != Dim::kAll && along != Dim::kRows && along != Dim::kCols) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown scan dimension %d", static_cast<int>(along)));
  }
  return MakeResultShape(SumType(input.dtype), input.rows, input.cols, "scan result");
}

absl::StatusOr<ResultShape> TransposeResultShape(const ArrayRef& input) {
  if (absl::Status s = CheckArray(input); !s.ok()) return s;
  return MakeResultShape(input.dtype, input.cols, input.rows, "transpose result");
}

absl::StatusOr<ResultShape> MatmulResultShape(const MatmulArgs& args) {
  if (absl::Status s = CheckMatmul(args); !s.ok()) return s;
  return MakeResultShape(DType::kF32, args.a.rows, args.b.cols, "matmul result");
}

uint64_t MatmulWorkingBytes(const MatmulArgs& args) {
  // Histogram operands have at most kMaxHistogramBins bins: 4 * 2^31 * 2 fits.
  uint64_t bytes = 0;
  if (args.a.histogram != nullptr) bytes += 4 * args.a.histogram->shape().bins();
  if (args.b.histogram != nullptr) bytes += 4 * args.b.histogram->shape().bins();
  return bytes;
}

absl::Status CheckMerge(const HistogramShape& source, const HistogramShape& target) {
  if (source.rows != target.rows || source.cols != target.cols) {
    return absl::InvalidArgumentError(
        absl::StrFormat("merge needs equal shapes: source is %u x %u, target is %u x %u",
                        source.rows, source.cols, target.rows, target.cols));
  }
  return absl::OkStatus();
}

}  // namespace histd
