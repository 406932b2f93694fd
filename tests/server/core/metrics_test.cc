// The metrics registry (server/metrics.h): exact counts under concurrent updates, histogram
// bucket edges, and the text format 0.0.4 rendered byte for byte.
#include "server/core/metrics.h"

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace histd::server::metrics {
namespace {

TEST(MetricsCounterTest, SumsEveryAddOfManyThreads) {
  Counter counter;
  constexpr int kThreads = 16, kAdds = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&counter, t] {
      for (int i = 0; i < kAdds; ++i) counter.Add(1 + (t % 3));
    });
  }
  for (auto& t : threads) t.join();
  uint64_t want = 0;
  for (int t = 0; t < kThreads; ++t) want += uint64_t{kAdds} * (1 + (t % 3));
  EXPECT_EQ(counter.Value(), want);
}

TEST(MetricsHistogramTest, ValuesOnABoundCountInThatBucket) {
  Histogram h({0.001, 0.01, 1}, 1e-9);  // nanoseconds counted, seconds rendered
  h.Observe(0);           // <= 0.001
  h.Observe(1000000);     // == 0.001 s: le="0.001"
  h.Observe(1000001);     // just above: le="0.01"
  h.Observe(10000000);    // == 0.01
  h.Observe(1000000000);  // == 1
  h.Observe(1000000001);  // +Inf
  h.Observe(-5);          // counts as 0
  const Histogram::Snapshot s = h.Read();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{3, 5, 6, 7}));
  EXPECT_EQ(s.sum_units, 0u + 1000000 + 1000001 + 10000000 + 1000000000 + 1000000001);
}

TEST(MetricsHistogramTest, ConcurrentObservationsAllCount) {
  Histogram h({1, 4, 16}, 1);
  constexpr int kThreads = 12, kObservations = 10000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&h] {
      for (int i = 0; i < kObservations; ++i) h.Observe(i % 20);
    });
  }
  for (auto& t : threads) t.join();
  const Histogram::Snapshot s = h.Read();
  // Per thread, of 0..19 repeated: <=1: 2, <=4: 5, <=16: 17, all 20 (500 rounds each).
  const uint64_t rounds = uint64_t{kThreads} * kObservations / 20;
  EXPECT_EQ(s.cumulative,
            (std::vector<uint64_t>{2 * rounds, 5 * rounds, 17 * rounds, 20 * rounds}));
  EXPECT_EQ(s.sum_units, rounds * 190);  // 0 + 1 + ... + 19
}

TEST(MetricsFormatTest, ValuesAsPrometheusParsesThem) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(1), "1");
  EXPECT_EQ(FormatValue(2.5), "2.5");
  EXPECT_EQ(FormatValue(0.0001), "0.0001");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(123456789012.0), "1.23456789012e+11");  // as Go's client writes it
  EXPECT_EQ(FormatValue(-3.25), "-3.25");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
  // Round trip: the shortest text that reads back as the same double.
  EXPECT_EQ(std::stod(FormatValue(1.0 / 3)), 1.0 / 3);
}

TEST(MetricsFormatTest, LabelValuesAndHelpAreEscaped) {
  EXPECT_EQ(FormatLabels({}), "");
  EXPECT_EQ(FormatLabels({{"a", "x"}, {"b", "q\"uo\\te\nline"}}),
            "{a=\"x\",b=\"q\\\"uo\\\\te\\nline\"}");
  EXPECT_EQ(EscapeHelp("back\\slash\nnew \"quotes\" stay"), "back\\\\slash\\nnew \"quotes\" stay");
}

TEST(MetricsRegistryTest, RendersEveryKindOfChildInTextFormat) {
  Registry r;
  Counter& c = r.AddCounter({"t_requests_total", "Requests.", Type::kCounter}, {{"code", "OK"}});
  r.AddCounterFn({"t_requests_total", "Requests.", Type::kCounter}, {{"code", "NotFound"}},
                 [] { return uint64_t{18446744073709551615u}; });  // exact beyond 2^53
  r.AddGaugeFn({"t_ratio", "A ratio\nover two lines.", Type::kGauge}, {}, [] { return 0.25; });
  Histogram& h = r.AddHistogram({"t_seconds", "Latency.", Type::kHistogram}, {{"method", "Get"}},
                                {0.5, 1}, 0.25);
  r.AddCollector({"t_devices", "Per device.", Type::kGauge}, [](Emitter& out) {
    out.EmitInteger({{"device", "cuda:0"}}, 7);
    out.Emit({{"device", "cuda:1"}}, 1.5);
  });
  c.Add(3);
  h.Observe(2);  // 0.5 s
  h.Observe(3);  // 0.75 s
  h.Observe(9);  // 2.25 s
  EXPECT_EQ(r.Render(),
            "# HELP t_requests_total Requests.\n"
            "# TYPE t_requests_total counter\n"
            "t_requests_total{code=\"OK\"} 3\n"
            "t_requests_total{code=\"NotFound\"} 18446744073709551615\n"
            "# HELP t_ratio A ratio\\nover two lines.\n"
            "# TYPE t_ratio gauge\n"
            "t_ratio 0.25\n"
            "# HELP t_seconds Latency.\n"
            "# TYPE t_seconds histogram\n"
            "t_seconds_bucket{method=\"Get\",le=\"0.5\"} 1\n"
            "t_seconds_bucket{method=\"Get\",le=\"1\"} 2\n"
            "t_seconds_bucket{method=\"Get\",le=\"+Inf\"} 3\n"
            "t_seconds_sum{method=\"Get\"} 3.5\n"
            "t_seconds_count{method=\"Get\"} 3\n"
            "# HELP t_devices Per device.\n"
            "# TYPE t_devices gauge\n"
            "t_devices{device=\"cuda:0\"} 7\n"
            "t_devices{device=\"cuda:1\"} 1.5\n");
}

TEST(MetricsRegistryTest, AFamilyWithoutLabelsHasPlainBucketLabels) {
  Registry r;
  Histogram& h = r.AddHistogram({"t_batch", "Samples.", Type::kHistogram}, {}, {1, 4}, 1);
  h.Observe(4);
  const std::string text = r.Render();
  EXPECT_NE(text.find("t_batch_bucket{le=\"4\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("t_batch_sum 4\nt_batch_count 1\n"), std::string::npos) << text;
}

TEST(MetricsRegistryDeathTest, ConflictingFamilyDefinitionsAbort) {
  Registry r;
  r.AddCounter({"t_x_total", "One help.", Type::kCounter}, {});
  EXPECT_DEATH(r.AddGaugeFn({"t_x_total", "One help.", Type::kGauge}, {}, [] { return 1.0; }),
               "metrics_family_conflict");
}

}  // namespace
}  // namespace histd::server::metrics
