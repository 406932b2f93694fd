// Names the calling thread for operators' tools (top -H, ps -L, perf, gdb): histd's threads
// show as "histd-stage", "histd-gpu-done", ... instead of all as "histd".
//
// Contract: Linux keeps at most 15 bytes of a name; longer names are cut there. Where the
// platform cannot name threads this does nothing. Never fails.
#pragma once

#include "absl/strings/string_view.h"

namespace histd {

void NameCurrentThread(absl::string_view name);

}  // namespace histd
