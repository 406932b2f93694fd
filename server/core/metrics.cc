#include "server/core/metrics.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "server/core/log.h"

namespace histd::server::metrics {
namespace {

const char* TypeName(Type type) {
  switch (type) {
    case Type::kCounter: return "counter";
    case Type::kGauge: return "gauge";
    case Type::kHistogram: return "histogram";
  }
  return "untyped";
}

// Appends `{labels}` with one more label (le) at the end, for histogram buckets.
std::string WithLabel(const std::string& labels, const char* name, const std::string& value) {
  const std::string extra = absl::StrCat(name, "=\"", value, "\"");
  if (labels.empty()) return absl::StrCat("{", extra, "}");
  return absl::StrCat(labels.substr(0, labels.size() - 1), ",", extra, "}");
}

// Renders the children a collector emits, straight into the output.
class TextEmitter final : public Emitter {
 public:
  TextEmitter(const std::string& name, std::string* out) : name_(name), out_(*out) {}
  void Emit(const Labels& labels, double value) override {
    absl::StrAppend(&out_, name_, FormatLabels(labels), " ", FormatValue(value), "\n");
  }
  void EmitInteger(const Labels& labels, uint64_t value) override {
    absl::StrAppend(&out_, name_, FormatLabels(labels), " ", value, "\n");
  }

 private:
  const std::string& name_;
  std::string& out_;
};

}  // namespace

int ThisThreadShard() {
  static std::atomic<int> next{0};
  thread_local const int shard = next.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shard;
}

uint64_t Counter::Value() const {
  uint64_t total = 0;
  for (const Cell& cell : cells_) total += cell.value.load(std::memory_order_relaxed);
  return total;
}

Histogram::Histogram(std::vector<double> bounds, double unit)
    : bounds_(std::move(bounds)), unit_(unit) {
  for (double bound : bounds_) {
    bounds_units_.push_back(static_cast<uint64_t>(std::llround(bound / unit_)));
  }
  lines_per_shard_ = (bounds_units_.size() + 2 + 7) / 8;  // buckets, +Inf, the sum
  lines_ = std::make_unique<Line[]>(lines_per_shard_ * kShards);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  const size_t buckets = bounds_units_.size() + 1;
  s.cumulative.assign(buckets, 0);
  for (size_t shard = 0; shard < kShards; ++shard) {
    for (size_t b = 0; b < buckets; ++b) {
      s.cumulative[b] += Slot(shard, b).load(std::memory_order_relaxed);
    }
    s.sum_units += Slot(shard, buckets).load(std::memory_order_relaxed);
  }
  for (size_t b = 1; b < buckets; ++b) s.cumulative[b] += s.cumulative[b - 1];
  return s;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  // Shortest round trip, exponent from 1e21 and below 1e-4: what Go's client writes.
  const std::to_chars_result r =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general);
  return std::string(buffer, r.ptr);
}

std::string FormatLabels(const Labels& labels) {
  if (labels.empty()) return std::string();
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ',';
    absl::StrAppend(&out, labels[i].first, "=\"");
    for (char c : labels[i].second) {
      if (c == '\\') out += "\\\\";
      else if (c == '"') out += "\\\"";
      else if (c == '\n') out += "\\n";
      else out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string EscapeHelp(absl::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

Registry::Family& Registry::FamilyLocked(const FamilyInfo& info) {
  for (Family& family : families_) {
    if (family.info.name != info.name) continue;
    if (family.info.type != info.type || family.info.help != info.help) {
      // A programming error: two definitions of one family would render invalid text.
      LogError("metrics_family_conflict",
               {{"family", info.name}, {"problem", "registered twice with different type or help"}});
      std::abort();
    }
    return family;
  }
  families_.push_back(Family{info, {}});
  return families_.back();
}

Counter& Registry::AddCounter(const FamilyInfo& family, const Labels& labels) {
  absl::MutexLock lock(&mu_);
  Counter& counter = counters_.emplace_back();
  Child child;
  child.labels = FormatLabels(labels);
  child.counter = &counter;
  FamilyLocked(family).children.push_back(std::move(child));
  return counter;
}

Histogram& Registry::AddHistogram(const FamilyInfo& family, const Labels& labels,
                                  std::vector<double> bounds, double unit) {
  absl::MutexLock lock(&mu_);
  Histogram& histogram = histograms_.emplace_back(std::move(bounds), unit);
  Child child;
  child.labels = FormatLabels(labels);
  child.histogram = &histogram;
  FamilyLocked(family).children.push_back(std::move(child));
  return histogram;
}

void Registry::AddCounterFn(const FamilyInfo& family, const Labels& labels,
                            std::function<uint64_t()> fn) {
  absl::MutexLock lock(&mu_);
  Child child;
  child.labels = FormatLabels(labels);
  child.integer_fn = std::move(fn);
  FamilyLocked(family).children.push_back(std::move(child));
}

void Registry::AddGaugeFn(const FamilyInfo& family, const Labels& labels,
                          std::function<double()> fn) {
  absl::MutexLock lock(&mu_);
  Child child;
  child.labels = FormatLabels(labels);
  child.double_fn = std::move(fn);
  FamilyLocked(family).children.push_back(std::move(child));
}

void Registry::AddCollector(const FamilyInfo& family, std::function<void(Emitter&)> collect) {
  absl::MutexLock lock(&mu_);
  Child child;
  child.collect = std::move(collect);
  FamilyLocked(family).children.push_back(std::move(child));
}

std::string Registry::Render() const {
  absl::MutexLock lock(&mu_);
  std::string out;
  for (const Family& family : families_) {
    const std::string& name = family.info.name;
    absl::StrAppend(&out, "# HELP ", name, " ", EscapeHelp(family.info.help), "\n", "# TYPE ",
                    name, " ", TypeName(family.info.type), "\n");
    for (const Child& child : family.children) {
      if (child.counter != nullptr) {
        absl::StrAppend(&out, name, child.labels, " ", child.counter->Value(), "\n");
      } else if (child.integer_fn) {
        absl::StrAppend(&out, name, child.labels, " ", child.integer_fn(), "\n");
      } else if (child.double_fn) {
        absl::StrAppend(&out, name, child.labels, " ", FormatValue(child.double_fn()), "\n");
      } else if (child.collect) {
        TextEmitter emitter(name, &out);
        child.collect(emitter);
      } else if (child.histogram != nullptr) {
        const Histogram::Snapshot s = child.histogram->Read();
        const std::vector<double>& bounds = child.histogram->bounds();
        for (size_t b = 0; b < s.cumulative.size(); ++b) {
          const std::string le = b < bounds.size() ? FormatValue(bounds[b]) : "+Inf";
          absl::StrAppend(&out, name, "_bucket", WithLabel(child.labels, "le", le), " ",
                          s.cumulative[b], "\n");
        }
        absl::StrAppend(&out, name, "_sum", child.labels, " ",
                        FormatValue(static_cast<double>(s.sum_units) * child.histogram->unit()),
                        "\n", name, "_count", child.labels, " ", s.cumulative.back(), "\n");
      }
    }
  }
  return out;
}

}  // namespace histd::server::metrics
