// The multi-device engine over two CPU engines: placement on the member with the fewest
// bytes, a batch split across members with results in item order, reads and compute routed
// to the owning member, and merges across members.
#include "engine/multi_engine.h"

#include <gtest/gtest.h>

#include "engine/cpu/cpu_engine.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/reference.h"
#include "tests/server/core/forwarding_engine.h"

namespace histd {
namespace {

using testing::ApplyAndWait;
using testing::FillHistogram;
using testing::NewHistogram;
using testing::RandomBins;
using testing::ReadAll;

std::unique_ptr<Engine> TwoCpuMembers() {
  std::vector<std::unique_ptr<Engine>> members;
  for (int i = 0; i < 2; ++i) members.push_back(std::move(*MakeCpuEngine(2)));
  return std::move(*MakeMultiEngine(std::move(members)));
}

TEST(MultiEngineTest, RejectsNoMembers) {
  EXPECT_EQ(MakeMultiEngine({}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MultiEngineTest, PlacesEachHistogramOnTheMemberWithFewestBytes) {
  auto engine = TwoCpuMembers();
  auto big = NewHistogram(*engine, 100, 100);     // member 0 (both empty)
  auto small = NewHistogram(*engine, 10, 10);     // member 1 (0 bytes < 10000)
  auto small2 = NewHistogram(*engine, 10, 10);    // member 1 (100 < 10000)
  EXPECT_EQ(MemberOf(*big), 0);
  EXPECT_EQ(MemberOf(*small), 1);
  EXPECT_EQ(MemberOf(*small2), 1);
  big.reset();                                    // member 0 back to 0 bytes
  auto next = NewHistogram(*engine, 10, 10);
  EXPECT_EQ(MemberOf(*next), 0);
}

// A device budget with a set number of free bytes (CPU members reserve nothing themselves).
class RoomOf final : public DeviceMemoryBudget {
 public:
  explicit RoomOf(uint64_t bytes) : bytes(bytes) {}
  absl::Status Reserve(uint64_t, std::string_view) override { return absl::OkStatus(); }
  void Unreserve(uint64_t) override {}
  uint64_t available() const override { return bytes; }
  uint64_t bytes;
};

TEST(MultiEngineTest, PlacesEachHistogramOnAMemberWhoseBudgetHasRoom) {
  auto engine = TwoCpuMembers();
  RoomOf first(0), second(1 << 20);
  engine->SetDeviceMemoryBudgets({&first, &second});
  auto a = NewHistogram(*engine, 10, 10);  // member 1: member 0's budget has no room
  auto b = NewHistogram(*engine, 10, 10);  // member 1 again, though it holds more bytes
  EXPECT_EQ(MemberOf(*a), 1);
  EXPECT_EQ(MemberOf(*b), 1);
  // 10 x 10 bins take 112 bytes (whole 16-byte chunks): they fit only on member 0.
  first.bytes = 112;
  second.bytes = 111;
  auto c = NewHistogram(*engine, 10, 10);
  EXPECT_EQ(MemberOf(*c), 0);
  // Room nowhere: the member with the fewest bytes (0: 100 against 200), whose budget refuses.
  first.bytes = second.bytes = 0;
  auto d = NewHistogram(*engine, 10, 10);
  EXPECT_EQ(MemberOf(*d), 0);
}

// A malformed item on one member fails the whole batch: the other member's good item is not
// applied either, and a null histogram is an error, not a crash.
TEST(MultiEngineTest, ABadItemOnOneMemberFailsTheWholeBatch) {
  auto engine = TwoCpuMembers();
  auto on_first = NewHistogram(*engine, 4, 4);
  auto on_second = NewHistogram(*engine, 4, 4);
  ASSERT_NE(MemberOf(*on_first), MemberOf(*on_second));
  std::vector<uint32_t> indices(16, 5);
  auto staging = testing::Stage(*engine, indices.data(), indices.size() * 4);
  IngestItem good;
  good.histogram = on_first.get();
  good.count = 4;
  IngestItem past_end = good;  // on the other member: 4 samples at byte 56 end past 64
  past_end.histogram = on_second.get();
  past_end.byte_offset = 56;
  IngestItem no_histogram = good;
  no_histogram.histogram = nullptr;
  for (const IngestItem& bad : {past_end, no_histogram}) {
    auto outcome = ApplyAndWait(*engine, *staging, {good, bad});
    EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument) << outcome.status;
    EXPECT_NE(std::string(outcome.status.message()).find("item 1"), std::string::npos)
        << outcome.status;
    EXPECT_EQ(outcome.done_calls, 1);
    EXPECT_EQ(outcome.results.size(), 2u);
  }
  EXPECT_EQ(ReadAll(*engine, *on_first), std::vector<uint8_t>(16, 0));
  EXPECT_EQ(ReadAll(*engine, *on_second), std::vector<uint8_t>(16, 0));
}

// A member that answers OK with no results (an engine bug) fails the batch INTERNAL rather
// than leaving its items' results empty.
class NoResultsEngine final : public server::testing::ForwardingEngine {
 public:
  NoResultsEngine() : ForwardingEngine(1) {}
  void Apply(const StagingBuffer&, std::vector<IngestItem>, ApplyDone done) override {
    done(absl::OkStatus(), {});
  }
};

TEST(MultiEngineTest, AMemberReturningTooFewResultsFailsTheBatch) {
  std::vector<std::unique_ptr<Engine>> members;
  members.push_back(std::make_unique<NoResultsEngine>());
  members.push_back(std::move(*MakeCpuEngine(1)));
  auto engine = std::move(*MakeMultiEngine(std::move(members)));
  auto h = NewHistogram(*engine, 4, 4);
  ASSERT_EQ(MemberOf(*h), 0);
  std::vector<uint32_t> indices(4, 1);
  auto staging = testing::Stage(*engine, indices.data(), indices.size() * 4);
  IngestItem item;
  item.histogram = h.get();
  item.count = 4;
  auto outcome = ApplyAndWait(*engine, *staging, {item});
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInternal) << outcome.status;
  EXPECT_EQ(outcome.done_calls, 1);
}

TEST(MultiEngineTest, SplitsOneBatchAcrossMembersExactly) {
  HISTD_SEEDED_RNG(rng);
  auto engine = TwoCpuMembers();
  const HistogramShape shape{37, 53, 3};
  std::vector<std::unique_ptr<HistogramStorage>> hists;
  for (int i = 0; i < 4; ++i) hists.push_back(NewHistogram(*engine, shape.rows, shape.cols, shape.cap));
  ASSERT_NE(MemberOf(*hists[0]), MemberOf(*hists[1]));

  // Items alternate between histograms, so each member gets a non-contiguous part.
  const int kItems = 12;
  std::vector<std::vector<uint32_t>> samples(kItems);
  std::vector<uint32_t> flat;
  std::vector<IngestItem> items;
  for (int i = 0; i < kItems; ++i) {
    samples[i].resize(1 + rng() % 500);
    for (uint32_t& s : samples[i]) s = static_cast<uint32_t>(rng() % shape.bins());
    IngestItem item;
    item.histogram = hists[i % 4].get();
    item.byte_offset = flat.size() * 4;
    item.count = samples[i].size();
    items.push_back(item);
    flat.insert(flat.end(), samples[i].begin(), samples[i].end());
  }
  auto staging = testing::Stage(*engine, flat.data(), flat.size() * 4);
  auto outcome = ApplyAndWait(*engine, *staging, items);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.done_calls, 1);
  ASSERT_EQ(outcome.results.size(), static_cast<size_t>(kItems));
  for (int i = 0; i < kItems; ++i) EXPECT_EQ(outcome.results[i].binned, samples[i].size()) << i;

  for (int h = 0; h < 4; ++h) {
    std::vector<uint32_t> all;
    for (int i = h; i < kItems; i += 4) all.insert(all.end(), samples[i].begin(), samples[i].end());
    EXPECT_EQ(ReadAll(*engine, *hists[h]), ref::BinIndices(all, shape.bins(), shape.cap)) << h;
  }
}

TEST(MultiEngineTest, MergesAcrossMembersSaturating) {
  HISTD_SEEDED_RNG(rng);
  auto engine = TwoCpuMembers();
  auto a = NewHistogram(*engine, 9, 31, 200);
  auto b = NewHistogram(*engine, 9, 31, 7);
  ASSERT_NE(MemberOf(*a), MemberOf(*b));
  const auto va = RandomBins(rng, a->shape().bins(), 200);
  const auto vb = RandomBins(rng, b->shape().bins(), 7);
  FillHistogram(*engine, *a, va, rng);
  FillHistogram(*engine, *b, vb, rng);
  ASSERT_TRUE(engine->Merge(*a, *b).ok());
  std::vector<uint8_t> expected(vb.size());
  for (size_t i = 0; i < vb.size(); ++i) expected[i] = static_cast<uint8_t>(std::min(7, va[i] + vb[i]));
  EXPECT_EQ(ReadAll(*engine, *b), expected);

  auto other_shape = NewHistogram(*engine, 31, 9);
  EXPECT_EQ(engine->Merge(*a, *other_shape).code(), absl::StatusCode::kInvalidArgument);
}

TEST(MultiEngineTest, RoutesComputeToTheOwningMember) {
  HISTD_SEEDED_RNG(rng);
  auto engine = TwoCpuMembers();
  auto a = NewHistogram(*engine, 5, 6);
  auto b = NewHistogram(*engine, 6, 4);
  ASSERT_NE(MemberOf(*a), MemberOf(*b));
  const auto va = RandomBins(rng, 30, 255);
  const auto vb = RandomBins(rng, 24, 255);
  FillHistogram(*engine, *a, va, rng);
  FillHistogram(*engine, *b, vb, rng);

  auto sum = engine->Reduce(testing::HistogramRef(*b), ReduceOp::kSum, Dim::kAll);
  ASSERT_TRUE(sum.ok()) << sum.status();
  uint64_t expected_sum = 0;
  for (uint8_t v : vb) expected_sum += v;
  EXPECT_EQ(sum->data<uint64_t>()[0], expected_sum);

  MatmulArgs args;
  args.a = testing::HistogramRef(*a);
  args.b = testing::HistogramRef(*b);
  auto product = engine->Matmul(args);
  ASSERT_TRUE(product.ok()) << product.status();
  ASSERT_EQ(product->rows, 5u);
  ASSERT_EQ(product->cols, 4u);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) {
      double acc = 0;
      for (int k = 0; k < 6; ++k) acc += static_cast<double>(va[i * 6 + k]) * vb[k * 4 + j];
      EXPECT_EQ(product->data<float>()[i * 4 + j], static_cast<float>(acc)) << i << "," << j;
    }
}

// Counts the compute calls that reach it.
class ComputeCountingEngine final : public server::testing::ForwardingEngine {
 public:
  ComputeCountingEngine() : ForwardingEngine(1) {}
  absl::StatusOr<HostArray> Reduce(const ArrayRef& a, ReduceOp op, Dim d) override {
    ++calls;
    return ForwardingEngine::Reduce(a, op, d);
  }
  absl::StatusOr<HostArray> Matmul(const MatmulArgs& args) override {
    ++calls;
    return ForwardingEngine::Matmul(args);
  }
  int calls = 0;
};

TEST(MultiEngineTest, SpreadsComputeOnInlineArraysOverTheMembers) {
  HISTD_SEEDED_RNG(rng);
  std::vector<std::unique_ptr<Engine>> members;
  std::vector<ComputeCountingEngine*> counted;
  for (int i = 0; i < 2; ++i) {
    auto m = std::make_unique<ComputeCountingEngine>();
    counted.push_back(m.get());
    members.push_back(std::move(m));
  }
  auto engine = std::move(*MakeMultiEngine(std::move(members)));
  HostArray input = HostArray::Make(DType::kU32, 3, 5);
  uint64_t expected = 0;
  for (uint64_t i = 0; i < input.rows * input.cols; ++i) {
    input.data<uint32_t>()[i] = static_cast<uint32_t>(rng() % 1000);
    expected += input.data<uint32_t>()[i];
  }
  for (int call = 0; call < 4; ++call) {
    auto sum = engine->Reduce(input.ref(), ReduceOp::kSum, Dim::kAll);
    ASSERT_TRUE(sum.ok()) << sum.status();
    EXPECT_EQ(sum->data<uint64_t>()[0], expected) << call;
  }
  EXPECT_EQ(counted[0]->calls, 2);
  EXPECT_EQ(counted[1]->calls, 2);
  HostArray a = HostArray::Make(DType::kF32, 2, 3), b = HostArray::Make(DType::kF32, 3, 1);
  for (int i = 0; i < 6; ++i) a.data<float>()[i] = static_cast<float>(i);  // rows 0 1 2, 3 4 5
  for (int i = 0; i < 3; ++i) b.data<float>()[i] = 1;
  MatmulArgs args;
  args.a = a.ref();
  args.b = b.ref();
  for (int call = 0; call < 2; ++call) {
    auto product = engine->Matmul(args);
    ASSERT_TRUE(product.ok()) << product.status();
    EXPECT_EQ(product->data<float>()[0], 3.0f);
    EXPECT_EQ(product->data<float>()[1], 12.0f);
  }
  EXPECT_EQ(counted[0]->calls, 3);
  EXPECT_EQ(counted[1]->calls, 3);
}

}  // namespace
}  // namespace histd
