// Prometheus instruments and the registry that renders them in the text exposition format
// 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/).
//
//   metrics::Registry registry;
//   metrics::Counter& sent = registry.AddCounter({"histd_x_total", "What it counts."}, {});
//   sent.Add(n);                                        // hot path: one relaxed atomic add
//   registry.AddCounterFn({"histd_y_total", "..."}, {{"kind", "host"}}, [&] { return y; });
//   std::string text = registry.Render();               // /metrics
//
// A family (one metric name) has a type, a help text and children, one per set of label
// values. A child is an instrument the registry owns (Counter, Histogram), a function read
// at render time (counters and gauges whose numbers are counted elsewhere), or a collector
// that emits children whose label values change (one per device, one per histogram).
// Children are added at setup, never on the hot path: updating an instrument takes no lock
// and allocates nothing. Counter and Histogram keep one cache line per shard, a thread
// always updates the same shard, and Render sums the shards, so concurrent producers do not
// contend on one line. Histograms count integer values in a unit (nanoseconds, samples) and
// render bounds and sums multiplied by that unit (seconds): no floating-point atomics.
//
// Thread safety: instruments may be updated from any thread; Add* and Render take the
// registry's lock. Functions and collectors run under it, on the rendering thread, and must
// not call the registry. Instruments live as long as the registry.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace histd::server::metrics {

inline constexpr int kShards = 8;

// This thread's shard in [0, kShards): threads are dealt shards round robin on first use.
int ThisThreadShard();

class Counter {
 public:
  void Add(uint64_t n = 1) {
    cells_[ThisThreadShard()].value.fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t Value() const;

 private:
  struct alignas(64) Cell {
    std::atomic<uint64_t> value{0};
  };
  Cell cells_[kShards];
};

class Histogram {
 public:
  // `bounds`: increasing bucket upper bounds in the rendered unit, each a whole multiple of
  // `unit` (the rendered value of one counted unit, e.g. 1e-9 for nanoseconds counted and
  // seconds rendered). The +Inf bucket is implicit.
  Histogram(std::vector<double> bounds, double unit);

  // Counts one value, in units; negative values count as 0.
  void Observe(int64_t units) {
    const uint64_t v = units < 0 ? 0 : static_cast<uint64_t>(units);
    size_t bucket = 0;
    while (bucket < bounds_units_.size() && v > bounds_units_[bucket]) ++bucket;
    const size_t shard = static_cast<size_t>(ThisThreadShard());
    Slot(shard, bucket).fetch_add(1, std::memory_order_relaxed);
    Slot(shard, bounds_units_.size() + 1).fetch_add(v, std::memory_order_relaxed);  // the sum
  }

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per bound, then +Inf (== count)
    uint64_t sum_units = 0;
  };
  Snapshot Read() const;
  const std::vector<double>& bounds() const { return bounds_; }
  double unit() const { return unit_; }

 private:
  struct alignas(64) Line {
    std::atomic<uint64_t> slots[8];
  };
  // Slots of one shard: the buckets (+Inf last), then the sum; shards start on a new line.
  std::atomic<uint64_t>& Slot(size_t shard, size_t slot) const {
    return lines_[shard * lines_per_shard_ + slot / 8].slots[slot % 8];
  }

  const std::vector<double> bounds_;
  const double unit_;
  std::vector<uint64_t> bounds_units_;
  size_t lines_per_shard_ = 0;
  std::unique_ptr<Line[]> lines_;
};

enum class Type { kCounter, kGauge, kHistogram };

struct FamilyInfo {
  std::string name;  // [a-zA-Z_:][a-zA-Z0-9_:]*
  std::string help;
  Type type = Type::kCounter;
};

using Labels = std::vector<std::pair<std::string, std::string>>;  // name, value; in order

// What a collector emits: one child per call, of a counter or gauge family.
class Emitter {
 public:
  virtual ~Emitter() = default;
  virtual void Emit(const Labels& labels, double value) = 0;
  virtual void EmitInteger(const Labels& labels, uint64_t value) = 0;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The first Add* of a name creates its family; later ones must repeat its type and help.
  Counter& AddCounter(const FamilyInfo& family, const Labels& labels);
  Histogram& AddHistogram(const FamilyInfo& family, const Labels& labels,
                          std::vector<double> bounds, double unit);
  void AddCounterFn(const FamilyInfo& family, const Labels& labels, std::function<uint64_t()> fn);
  void AddGaugeFn(const FamilyInfo& family, const Labels& labels, std::function<double()> fn);
  void AddCollector(const FamilyInfo& family, std::function<void(Emitter&)> collect);

  // Every family in the order of its first Add, as text format 0.0.4.
  std::string Render() const;

 private:
  struct Child {
    std::string labels;  // rendered: {a="b",c="d"}, or empty
    Counter* counter = nullptr;
    Histogram* histogram = nullptr;
    std::function<uint64_t()> integer_fn;
    std::function<double()> double_fn;
    std::function<void(Emitter&)> collect;
  };
  struct Family {
    FamilyInfo info;
    std::vector<Child> children;
  };
  Family& FamilyLocked(const FamilyInfo& info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::deque<Family> families_ ABSL_GUARDED_BY(mu_);
  std::deque<Counter> counters_ ABSL_GUARDED_BY(mu_);      // stable addresses
  std::deque<Histogram> histograms_ ABSL_GUARDED_BY(mu_);  // stable addresses
};

// Text-format pieces, exposed for tests: a sample value ("+Inf", "NaN", shortest
// round-trip decimal otherwise), a label set ({a="b"} with \ " and newline escaped), a
// HELP text (\ and newline escaped).
std::string FormatValue(double value);
std::string FormatLabels(const Labels& labels);
std::string EscapeHelp(absl::string_view help);

// The content type of Render's output.
inline constexpr char kTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace histd::server::metrics
