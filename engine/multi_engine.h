// An engine over several engines (one per GPU): histograms are placed on the member with the
// fewest bytes in use among those whose device budget has room for them, and every operation
// on a histogram goes to the member that holds it; compute on inline arrays goes to the
// members in turn.
// Apply splits a batch by member, submits each part to its member's own pipeline, and calls
// `done` once, after every part is done, with results in the original item order.
//
// Staging buffers come from the first member: pinned memory from cudaMallocHost is portable
// across devices under unified addressing, and plain host memory for CPU members.
//
// Thread safety: as Engine. The placement counters are guarded by mu_.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"

namespace histd {

// members.size() >= 1; with one member the result behaves exactly like that member.
absl::StatusOr<std::unique_ptr<Engine>> MakeMultiEngine(std::vector<std::unique_ptr<Engine>> members);

// Which member holds `histogram` (created by a multi engine); for tests and stats.
int MemberOf(const HistogramStorage& histogram);

// The members of `engine` when it is a multi engine, in device order; otherwise empty.
std::vector<const Engine*> MultiEngineMembers(const Engine& engine);

}  // namespace histd
