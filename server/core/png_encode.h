// PNG encoding of a palette image (server/core/heatmap.h) with libpng: 8-bit palette
// (kPalette), no interlace, and what is fastest for the image's structure:
//   - cells spanning several pixels (Image::cells_repeat, zoomed in): every row filtered
//     "up" (its difference to the row above: repeated rows become zeros) and zlib's
//     run-length strategy (matches at distance 1 only: runs of one colour and of zeros);
//   - a cell per pixel: rows unfiltered and zlib's Huffman-only strategy (no matches: such
//     a heatmap has few runs, and looking for them costs more than they save).
// Speed first: a render is interactive. Both take a third to a half of the time of zlib
// level 1 on the same rows, with files about as small (bench/results/render.md).
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
