// PNG encoding of a palette image (server/core/heatmap.h) with libpng: 8-bit palette
// (kPalette), no interlace, every row filtered by "up" (its difference to the
// row above: a zoomed heatmap's repeated rows become zeros), zlib's run-length strategy
// (matches only at distance 1: runs of one colour and of zeros). Speed first: a render is
// interactive, and this takes about a third of the time of zlib level 1 on the same rows
// with smaller files (bench/results/render.md).
//
// Thread safety: EncodePng may run on any number of threads at once.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/core/heatmap.h"

namespace histd::server {

// The PNG file's bytes; INTERNAL naming libpng's message if it fails.
absl::StatusOr<std::string> EncodePng(const Image& image);

// At most the bytes of EncodePng's output for a width x height image, for budgets.
uint64_t PngBytesBound(uint32_t width, uint32_t height);

}  // namespace histd::server
