// The CPU engine's whole-histogram operations on raw bins: ReadBins (region, rebin or
// pooled view, transpose), Summarize, Merge, Reset, ReadAndReset. The caller (CpuEngine)
// checks the arguments and holds the histograms' locks exclusive; these functions only
// loop, spread over the pool.
#pragma once

#include <cstdint>

#include "engine/cpu/thread_pool.h"
#include "engine/engine.h"

namespace histd {

// Writes ReadBinsBytes(spec) bytes to out: one element per block of the region (see
// ReadSpec): the bin itself for one-bin blocks, the block's max (kU8) or sum (kU32),
// row-major, transposed when spec.transpose. spec must pass CheckReadSpec(shape, spec).
void CpuReadBins(const uint8_t* bins, const HistogramShape& shape, const ReadSpec& spec,
                 void* out, ThreadPool& pool);

// Bins equal to cap, and the sum of all bins.
HistogramSummary CpuSummarize(const uint8_t* bins, const HistogramShape& shape,
                              ThreadPool& pool);

// target[i] = min(cap, target[i] + source[i]) for i < n. source may equal target.
void CpuMerge(const uint8_t* source, uint8_t* target, uint64_t n, uint8_t cap,
              ThreadPool& pool);

// Zeroes n bins.
void CpuReset(uint8_t* bins, uint64_t n, ThreadPool& pool);

// Copies n bins to out, then zeroes them (each task copies its range before zeroing it).
void CpuReadAndReset(uint8_t* bins, uint64_t n, void* out, ThreadPool& pool);

}  // namespace histd
