// The current device's multiprocessor count: what grids, tile sizes and workspaces are
// sized by. Cached per device after the first query, so a launch pays one cudaGetDevice.
#pragma once

#include "absl/status/statusor.h"

namespace histd::cuda {

// Multiprocessors of the current device; the CUDA error's name on failure.
absl::StatusOr<int> CurrentDeviceSmCount();

// The same, or `fallback` (by default an H100 SXM's 132) when the runtime cannot tell; the
// error is cleared (it is not sticky).
int CurrentDeviceSmCountOr(int fallback = 132);

}  // namespace histd::cuda
