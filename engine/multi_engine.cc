#include "engine/multi_engine.h"

#include <atomic>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"

namespace histd {
namespace {

// A member's histogram, tagged with the member; gives its bytes back to the placement
// count when destroyed.
class MemberHistogram final : public HistogramStorage {
 public:
  MemberHistogram(std::unique_ptr<HistogramStorage> inner, int member,
                  std::function<void()> release)
      : HistogramStorage(inner->shape()),
        inner_(std::move(inner)),
        member_(member),
        release_(std::move(release)) {}
  ~MemberHistogram() override { release_(); }
  uint64_t bytes_used() const override { return inner_->bytes_used(); }
  HistogramStorage& inner() const { return *inner_; }
  int member() const { return member_; }

 private:
  std::unique_ptr<HistogramStorage> inner_;
  int member_;
  std::function<void()> release_;
};

const MemberHistogram& Unwrap(const HistogramStorage& h) {
  return static_cast<const MemberHistogram&>(h);
}

// Collects the results of the per-member parts of one Apply and calls done after the last.
struct ApplyJoin {
  std::atomic<int> pending{0};
  absl::Mutex mu;
  absl::Status status ABSL_GUARDED_BY(mu);
  std::vector<IngestItemResult> results ABSL_GUARDED_BY(mu);
  Engine::ApplyDone done;
};

class MultiEngine final : public Engine {
 public:
  explicit MultiEngine(std::vector<std::unique_ptr<Engine>> members)
      : members_(std::move(members)), bytes_(members_.size(), 0) {}

  std::vector<const Engine*> members() const {
    std::vector<const Engine*> out;
    for (const auto& m : members_) out.push_back(m.get());
    return out;
  }

  std::string name() const override {
    std::vector<std::string> names;
    for (const auto& m : members_) names.push_back(m->name());
    return absl::StrJoin(names, " + ");
  }
  std::string device() const override {
    std::vector<std::string> devices;
    for (const auto& m : members_) devices.push_back(m->device());
    return absl::StrJoin(devices, ",");
  }
  // One budget per member (each member is one device), in member order.
  void SetDeviceMemoryBudgets(std::vector<DeviceMemoryBudget*> budgets) override {
    budgets.resize(members_.size(), nullptr);
    budgets_ = budgets;
    for (size_t i = 0; i < members_.size(); ++i) members_[i]->SetDeviceMemoryBudgets({budgets[i]});
  }
  std::vector<uint64_t> device_memory_bytes() const override {
    std::vector<uint64_t> bytes;
    for (const auto& m : members_) {
      for (uint64_t b : m->device_memory_bytes()) bytes.push_back(b);
    }
    return bytes;
  }
  EngineStats stats() const override {
    EngineStats total;
    for (const auto& m : members_) {
      const EngineStats s = m->stats();
      total.batches += s.batches;
      total.items += s.items;
      total.samples += s.samples;
      total.bytes += s.bytes;
      total.in_flight += s.in_flight;
      total.copy_seconds += s.copy_seconds;
      total.kernel_seconds += s.kernel_seconds;
    }
    return total;
  }

  absl::StatusOr<std::unique_ptr<HistogramStorage>> CreateHistogram(
      const HistogramShape& shape) override {
    int member = -1;
    {
      absl::MutexLock lock(&mu_);
      // The member with the fewest bytes among those whose budget has room for the bins;
      // when none has, the one with the fewest bytes, whose budget then refuses.
      int fewest = 0;
      for (int i = 0; i < static_cast<int>(members_.size()); ++i) {
        if (bytes_[i] < bytes_[fewest]) fewest = i;
        const bool room = budgets_.empty() || budgets_[i] == nullptr ||
                          budgets_[i]->available() >= shape.storage_bytes();
        if (room && (member < 0 || bytes_[i] < bytes_[member])) member = i;
      }
      if (member < 0) member = fewest;
      bytes_[member] += shape.bins();  // reserve, so concurrent creates spread out
    }
    auto inner = members_[member]->CreateHistogram(shape);
    if (!inner.ok()) {
      Release(member, shape.bins());
      return inner.status();
    }
    return std::unique_ptr<HistogramStorage>(new MemberHistogram(
        std::move(*inner), member, [this, member, bins = shape.bins()] { Release(member, bins); }));
  }

  absl::Status Reset(HistogramStorage& h) override {
    const auto& m = Unwrap(h);
    return members_[m.member()]->Reset(m.inner());
  }
  absl::Status ReadAndReset(HistogramStorage& h, void* out) override {
    const auto& m = Unwrap(h);
    return members_[m.member()]->ReadAndReset(m.inner(), out);
  }
  absl::Status Merge(const HistogramStorage& source, HistogramStorage& target) override {
    const auto& s = Unwrap(source);
    const auto& t = Unwrap(target);
    if (s.member() == t.member()) return members_[t.member()]->Merge(s.inner(), t.inner());
    // Across devices: bring the source's bins through the host into a temporary histogram
    // on the target's member, then merge there.
    if (absl::Status st = CheckMerge(s.shape(), t.shape()); !st.ok()) return st;
    return MergeAcross(s, t);
  }
  absl::StatusOr<HistogramSummary> Summarize(const HistogramStorage& h) override {
    const auto& m = Unwrap(h);
    return members_[m.member()]->Summarize(m.inner());
  }
  absl::Status ReadBins(const HistogramStorage& h, const ReadSpec& spec, void* out) override {
    const auto& m = Unwrap(h);
    return members_[m.member()]->ReadBins(m.inner(), spec, out);
  }

  absl::StatusOr<std::unique_ptr<StagingBuffer>> CreateStagingBuffer(size_t bytes) override {
    return members_[0]->CreateStagingBuffer(bytes);
  }
  // Like staging, a region registered with the first member serves them all.
  absl::StatusOr<std::unique_ptr<HostRegion>> RegisterHostRegion(const uint8_t* data,
                                                                size_t bytes) override {
    return members_[0]->RegisterHostRegion(data, bytes);
  }

  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items,
             ApplyDone done) override {
    // A malformed item fails the whole batch before any member applies its part (and before
    // a null histogram is unwrapped).
    if (absl::Status s = CheckIngestItems(staging, items); !s.ok()) {
      done(std::move(s), std::vector<IngestItemResult>(items.size()));
      return;
    }
    std::vector<std::vector<IngestItem>> parts(members_.size());
    std::vector<std::vector<size_t>> positions(members_.size());
    for (size_t i = 0; i < items.size(); ++i) {
      const auto& m = Unwrap(*items[i].histogram);
      IngestItem item = items[i];
      item.histogram = &m.inner();
      parts[m.member()].push_back(item);
      positions[m.member()].push_back(i);
    }
    auto join = std::make_shared<ApplyJoin>();
    {
      absl::MutexLock lock(&join->mu);
      join->results.resize(items.size());
    }
    join->done = std::move(done);
    int nonempty = 0;
    for (const auto& p : parts) nonempty += !p.empty();
    if (nonempty == 0) {
      join->done(absl::OkStatus(), {});
      return;
    }
    join->pending = nonempty;
    for (size_t m = 0; m < members_.size(); ++m) {
      if (parts[m].empty()) continue;
      members_[m]->Apply(staging, std::move(parts[m]),
                         [join, pos = std::move(positions[m])](
                             absl::Status status, std::vector<IngestItemResult> results) {
                           {
                             absl::MutexLock lock(&join->mu);
                             if (status.ok() && results.size() != pos.size()) {
                               status = absl::InternalError(absl::StrFormat(
                                   "multi engine: a member returned %u results for %u items",
                                   results.size(), pos.size()));
                             }
                             if (!status.ok() && join->status.ok()) join->status = status;
                             for (size_t i = 0; i < results.size() && i < pos.size(); ++i)
                               join->results[pos[i]] = results[i];
                           }
                           if (join->pending.fetch_sub(1) == 1) {
                             absl::Status final_status;
                             std::vector<IngestItemResult> final_results;
                             {
                               absl::MutexLock lock(&join->mu);
                               final_status = join->status;
                               final_results = std::move(join->results);
                             }
                             join->done(std::move(final_status), std::move(final_results));
                           }
                         });
    }
  }

  absl::StatusOr<HostArray> Reduce(const ArrayRef& input, ReduceOp op, Dim collapse) override {
    auto [member, ref] = Route(input);
    return members_[member]->Reduce(ref, op, collapse);
  }
  absl::StatusOr<HostArray> Scan(const ArrayRef& input, bool inclusive, Dim along) override {
    auto [member, ref] = Route(input);
    return members_[member]->Scan(ref, inclusive, along);
  }
  absl::StatusOr<HostArray> Transpose(const ArrayRef& input) override {
    auto [member, ref] = Route(input);
    return members_[member]->Transpose(ref);
  }
  absl::StatusOr<HostArray> Matmul(const MatmulArgs& args) override {
    if (args.a.histogram == nullptr && args.b.histogram == nullptr) {
      return members_[NextInlineMember()]->Matmul(args);
    }
    MatmulArgs routed = args;
    auto [a_member, a_ref] = Route(args.a);
    auto [b_member, b_ref] = Route(args.b);
    routed.a = a_ref;
    routed.b = b_ref;
    if (args.a.histogram != nullptr && args.b.histogram != nullptr && a_member != b_member) {
      // Operands on two devices: read b's bins to the host as float32.
      const HistogramShape& shape = b_ref.histogram->shape();
      HostArray bins = HostArray::Make(DType::kU8, shape.rows, shape.cols);
      ReadSpec all;
      all.region = Region{0, shape.rows, 0, shape.cols};
      if (absl::Status s = members_[b_member]->ReadBins(*b_ref.histogram, all, bins.bytes.data());
          !s.ok())
        return s;
      HostArray widened = HostArray::Make(DType::kF32, shape.rows, shape.cols);
      for (uint64_t i = 0; i < bins.bytes.size(); ++i) widened.data<float>()[i] = bins.bytes[i];
      routed.b = widened.ref();
      return members_[a_member]->Matmul(routed);
    }
    const int member = args.a.histogram != nullptr ? a_member : b_member;
    return members_[member]->Matmul(routed);
  }

  void Release(int member, uint64_t bins) {
    absl::MutexLock lock(&mu_);
    bytes_[member] -= bins;
  }

 private:
  // A histogram operand goes to its member; an inline array to the members in turn, so
  // concurrent compute calls on arrays spread over the devices.
  std::pair<int, ArrayRef> Route(const ArrayRef& input) {
    if (input.histogram == nullptr) return {NextInlineMember(), input};
    const auto& m = Unwrap(*input.histogram);
    ArrayRef ref = input;
    ref.histogram = &m.inner();
    return {m.member(), ref};
  }

  absl::Status MergeAcross(const MemberHistogram& s, const MemberHistogram& t) {
    const HistogramShape& shape = s.shape();
    std::vector<uint8_t> bins(shape.bins());
    ReadSpec all;
    all.region = Region{0, shape.rows, 0, shape.cols};
    if (absl::Status st = members_[s.member()]->ReadBins(s.inner(), all, bins.data()); !st.ok())
      return st;
    return members_[t.member()]->MergeFromHost(bins.data(), t.inner());
  }
  absl::Status MergeFromHost(const uint8_t* bins, HistogramStorage& target) override {
    const auto& t = Unwrap(target);
    return members_[t.member()]->MergeFromHost(bins, t.inner());
  }

  int NextInlineMember() {
    return static_cast<int>(next_inline_.fetch_add(1, std::memory_order_relaxed) % members_.size());
  }

  std::vector<std::unique_ptr<Engine>> members_;
  std::vector<DeviceMemoryBudget*> budgets_;  // one per member, or empty; set before serving
  std::atomic<uint64_t> next_inline_{0};
  absl::Mutex mu_;
  std::vector<uint64_t> bytes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> MakeMultiEngine(std::vector<std::unique_ptr<Engine>> members) {
  if (members.empty()) return absl::InvalidArgumentError("multi engine: no member engines");
  return std::unique_ptr<Engine>(new MultiEngine(std::move(members)));
}

int MemberOf(const HistogramStorage& histogram) { return Unwrap(histogram).member(); }

std::vector<const Engine*> MultiEngineMembers(const Engine& engine) {
  const auto* multi = dynamic_cast<const MultiEngine*>(&engine);
  return multi != nullptr ? multi->members() : std::vector<const Engine*>();
}

}  // namespace histd
