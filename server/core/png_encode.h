// PNG encoding of an RGB image (server/core/heatmap.h) with libpng: 8-bit RGB, no interlace,
// no row filter, zlib level 1 (speed first: a render is interactive).
//
// Thread safety: EncodePng may run on any number of threads at once.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "server/core/heatmap.h"

namespace histd::server {

// The PNG file's bytes; INTERNAL naming libpng's message if it fails.
absl::StatusOr<std::string> EncodePng(const Image& image);

}  // namespace histd::server
