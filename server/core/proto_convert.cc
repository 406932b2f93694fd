#include "server/core/proto_convert.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_format.h"
#include "server/core/pooled_view.h"

namespace histd::server {

absl::StatusOr<DType> DTypeFromProto(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_U8: return DType::kU8;
    case v1::DTYPE_I32: return DType::kI32;
    case v1::DTYPE_I64: return DType::kI64;
    case v1::DTYPE_U32: return DType::kU32;
    case v1::DTYPE_U64: return DType::kU64;
    case v1::DTYPE_F32: return DType::kF32;
    case v1::DTYPE_F64: return DType::kF64;
    default: break;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "dtype %s is not an element type", v1::DType_Name(dtype).empty()
                                             ? absl::StrFormat("%d", static_cast<int>(dtype))
                                             : v1::DType_Name(dtype)));
}

v1::DType DTypeToProto(DType dtype) {
  switch (dtype) {
    case DType::kU8: return v1::DTYPE_U8;
    case DType::kI32: return v1::DTYPE_I32;
    case DType::kI64: return v1::DTYPE_I64;
    case DType::kU32: return v1::DTYPE_U32;
    case DType::kU64: return v1::DTYPE_U64;
    case DType::kF32: return v1::DTYPE_F32;
    case DType::kF64: return v1::DTYPE_F64;
  }
  return v1::DTYPE_UNSPECIFIED;
}

absl::StatusOr<SampleKind> SampleKindFromProto(v1::SampleType type) {
  switch (type) {
    case v1::SAMPLE_TYPE_BIN_INDEX_U32: return SampleKind::kBinIndex;
    case v1::SAMPLE_TYPE_XY_F32: return SampleKind::kCoordXY;
    default: break;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "type must be SAMPLE_TYPE_BIN_INDEX_U32 or SAMPLE_TYPE_XY_F32, got %d; nothing of this "
      "message was applied",
      static_cast<int>(type)));
}

absl::StatusOr<Dim> DimFromProto(v1::Dim dim, const char* field) {
  switch (dim) {
    case v1::DIM_UNSPECIFIED: return Dim::kAll;
    case v1::DIM_ROWS: return Dim::kRows;
    case v1::DIM_COLS: return Dim::kCols;
    default: break;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: unknown Dim value %d", field, static_cast<int>(dim)));
}

absl::StatusOr<ReduceOp> ReduceOpFromProto(v1::ReduceOp op) {
  switch (op) {
    case v1::REDUCE_OP_SUM: return ReduceOp::kSum;
    case v1::REDUCE_OP_MIN: return ReduceOp::kMin;
    case v1::REDUCE_OP_MAX: return ReduceOp::kMax;
    default: break;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "op must be REDUCE_OP_SUM, REDUCE_OP_MIN or REDUCE_OP_MAX, got %d", static_cast<int>(op)));
}

absl::StatusOr<ArrayRef> ArrayFromProto(const v1::Array& proto, const char* field,
                                        std::vector<uint64_t>* aligned_copy) {
  absl::StatusOr<DType> dtype = DTypeFromProto(proto.dtype());
  if (!dtype.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s", field, dtype.status().message()));
  }
  const uint64_t element = DTypeSize(*dtype);
  const uint64_t rows = proto.rows(), cols = proto.cols();
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  // rows * cols * element without overflow: compare against data length by division.
  const bool overflows = (cols != 0 && rows > max / cols) ||
                         (rows * cols != 0 && rows * cols > max / element);
  if (overflows || rows * cols * element != proto.data().size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d x %d %s needs %s bytes of data, got %d", field, rows, cols,
        v1::DType_Name(proto.dtype()),
        overflows ? "more than 2^64" : absl::StrFormat("%d", rows * cols * element),
        proto.data().size()));
  }
  ArrayRef ref;
  ref.dtype = *dtype;
  ref.rows = rows;
  ref.cols = cols;
  ref.host = proto.data().data();
  if (reinterpret_cast<uintptr_t>(ref.host) % element != 0) {
    aligned_copy->resize((proto.data().size() + 7) / 8);
    std::memcpy(aligned_copy->data(), proto.data().data(), proto.data().size());
    ref.host = aligned_copy->data();
  }
  return ref;
}

void ArrayToProto(HostArray array, v1::Array* proto) {
  proto->set_dtype(DTypeToProto(array.dtype));
  proto->set_rows(array.rows);
  proto->set_cols(array.cols);
  proto->set_data(array.bytes.data(), array.bytes.size());
}

ReadSpec ReadSpecFromProto(const v1::QueryRequest& request, const HistogramShape& shape) {
  ReadSpec spec;
  const v1::Region& r = request.region();
  if (r.row_begin() == 0 && r.row_end() == 0 && r.col_begin() == 0 && r.col_end() == 0) {
    spec.region = Region{0, shape.rows, 0, shape.cols};
  } else {
    spec.region = Region{r.row_begin(), r.row_end(), r.col_begin(), r.col_end()};
  }
  spec.row_factor = request.row_factor() == 0 ? 1 : request.row_factor();
  spec.col_factor = request.col_factor() == 0 ? 1 : request.col_factor();
  spec.transpose = request.transpose();
  return spec;
}

absl::StatusOr<PoolOp> PoolFromProto(v1::Pool pool) {
  switch (pool) {
    case v1::POOL_UNSPECIFIED:
    case v1::POOL_SUM: return PoolOp::kSum;
    case v1::POOL_MAX: return PoolOp::kMax;
    default: break;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("pool must be POOL_SUM or POOL_MAX, got %d", static_cast<int>(pool)));
}

Region RegionFromProto(const v1::Region& r) {
  return Region{r.row_begin(), r.row_end(), r.col_begin(), r.col_end()};
}

void RegionToProto(const Region& region, v1::Region* proto) {
  proto->set_row_begin(region.row_begin);
  proto->set_row_end(region.row_end);
  proto->set_col_begin(region.col_begin);
  proto->set_col_end(region.col_end);
}

absl::StatusOr<RenderSpec> RenderSpecFromProto(const v1::RenderRequest& request,
                                               const HistogramShape& shape) {
  RenderSpec spec;
  spec.name = request.name();
  spec.region = RegionFromProto(request.region());
  absl::StatusOr<PoolOp> pool = PoolFromProto(request.pool());
  if (!pool.ok()) return pool.status();
  spec.pool = *pool;
  switch (request.scale()) {
    case v1::SCALE_UNSPECIFIED:
    case v1::SCALE_LINEAR: spec.heatmap.scale = ColorScale::kLinear; break;
    case v1::SCALE_LOG: spec.heatmap.scale = ColorScale::kLog; break;
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "scale must be SCALE_LINEAR or SCALE_LOG, got %d", static_cast<int>(request.scale())));
  }
  const Region region = ResolveRegion(spec.region, shape);
  spec.heatmap.width = request.width() != 0 ? request.width() : std::clamp(region.cols(), 1u, 1024u);
  spec.heatmap.height = request.height() != 0 ? request.height() : std::clamp(region.rows(), 1u, 1024u);
  if (request.has_zmin()) spec.heatmap.zmin = request.zmin();
  if (request.has_zmax()) spec.heatmap.zmax = request.zmax();
  spec.heatmap.frame = !request.bare();
  return spec;
}

}  // namespace histd::server
