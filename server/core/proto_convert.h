// Translation between the histd.v1 API protos and the engine's types (the histogram
// descriptions shared with the snapshot format are in server/core/histogram_proto.h).
//
// Every *FromProto checks what the proto allows but the kernels do not (enums left
// UNSPECIFIED, caps above 255, array lengths that disagree with the shape) and returns
// INVALID_ARGUMENT naming the field. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "histd/v1/common.pb.h"
#include "histd/v1/compute.pb.h"
#include "histd/v1/histograms.pb.h"
#include "histd/v1/ingest.pb.h"
#include "histd/v1/query.pb.h"
#include "model/array.h"
#include "engine/engine.h"
#include "server/core/histogram_proto.h"
#include "server/core/histogram_store.h"
#include "server/core/render.h"

namespace histd::server {

absl::StatusOr<DType> DTypeFromProto(v1::DType dtype);
v1::DType DTypeToProto(DType dtype);

absl::StatusOr<SampleKind> SampleKindFromProto(v1::SampleType type);

// DIM_UNSPECIFIED -> kAll (reduce, scan); DIM_ROWS -> kRows; DIM_COLS -> kCols.
absl::StatusOr<Dim> DimFromProto(v1::Dim dim, const char* field);
absl::StatusOr<ReduceOp> ReduceOpFromProto(v1::ReduceOp op);

// A view of an inline array. Its bytes stay in `proto` unless misaligned for the element
// type, in which case they are copied to `aligned_copy` (which must outlive the result).
absl::StatusOr<ArrayRef> ArrayFromProto(const v1::Array& proto, const char* field,
                                        std::vector<uint64_t>* aligned_copy);
void ArrayToProto(HostArray array, v1::Array* proto);

// All-zero region = the whole histogram; factors 0 mean 1. The result is not yet checked
// against the shape (CheckReadSpec does that).
ReadSpec ReadSpecFromProto(const v1::QueryRequest& request, const HistogramShape& shape);

// POOL_UNSPECIFIED is POOL_SUM.
absl::StatusOr<PoolOp> PoolFromProto(v1::Pool pool);
// As given (all zero means the whole histogram: ResolveRegion in server/pooled_view.h).
Region RegionFromProto(const v1::Region& region);
void RegionToProto(const Region& region, v1::Region* proto);
// The render a RenderRequest asks for; width or height 0: the region's bins, at most 1024.
absl::StatusOr<RenderSpec> RenderSpecFromProto(const v1::RenderRequest& request,
                                               const HistogramShape& shape);

}  // namespace histd::server
