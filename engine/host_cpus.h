// How many CPUs this process may run on: the default thread and buffer counts scale with it.
//
// Contract: the CPUs in this process's affinity mask (sched_getaffinity: what `taskset`,
// cpusets and container CPU pinning leave it), at least 1; where the mask cannot be read,
// std::thread::hardware_concurrency() (at least 1). Unlike hardware_concurrency alone, a
// daemon started under `taskset -c 0-15` on a 32-core host sizes itself for 16.
// Thread safety: thread-safe (reads the mask on every call).
#pragma once

namespace histd {

int AvailableCpus();

}  // namespace histd
