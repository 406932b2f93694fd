// Histograms.ReadAndResetHistogram through real gRPC: monitoring cycles under concurrent
// ingest lose no sample and count none twice, and each cycle's counters count exactly the
// samples in its bins; plus chunking, limits and errors.
#include <atomic>
#include <cmath>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/histd_client.h"
#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

class ReadAndResetTest : public ServiceTest {};
HISTD_INSTANTIATE_ENGINES(ReadAndResetTest);

// One reassembled ReadAndResetHistogram stream.
struct Cycle {
  grpc::Status status;
  v1::HistogramInfo info;
  uint64_t total_bytes = 0;
  std::string bins;
  size_t chunks = 0;
  size_t largest_chunk = 0;
  bool offsets_contiguous = true;
  bool info_only_in_first = true;
};

Cycle ReadAndReset(v1::Histograms::Stub& stub, const std::string& name, uint32_t chunk_bytes = 0) {
  v1::ReadAndResetHistogramRequest req;
  req.set_name(name);
  req.set_max_chunk_bytes(chunk_bytes);
  grpc::ClientContext ctx;
  auto reader = stub.ReadAndResetHistogram(&ctx, req);
  Cycle out;
  v1::ReadAndResetChunk chunk;
  while (reader->Read(&chunk)) {
    if (out.chunks == 0) {
      out.info = chunk.info();
      out.total_bytes = chunk.total_bytes();
    } else if (chunk.has_info() || chunk.total_bytes() != 0) {
      out.info_only_in_first = false;
    }
    if (chunk.offset() != out.bins.size()) out.offsets_contiguous = false;
    out.largest_chunk = std::max(out.largest_chunk, chunk.data().size());
    out.bins += chunk.data();
    ++out.chunks;
  }
  out.status = reader->Finish();
  return out;
}

v1::IngestRequest XYMessage(uint64_t sequence, const std::string& histogram,
                            const std::vector<std::pair<float, float>>& xy) {
  v1::IngestRequest r;
  r.set_sequence(sequence);
  r.set_histogram(histogram);
  r.set_type(v1::SAMPLE_TYPE_XY_F32);
  r.set_samples(PackXY(xy));
  return r;
}

// What producers had acknowledged OK, and what that should have done to the histogram.
struct Expected {
  std::mutex mu;
  std::vector<uint64_t> hits;  // per bin
  uint64_t messages = 0, binned = 0, outside = 0, x_under = 0, x_over = 0, y_under = 0,
           y_over = 0, x_nan = 0, y_nan = 0;
};

// A message in flight: its samples' effect, added to Expected once acknowledged OK.
struct SentMessage {
  std::vector<uint32_t> bins;  // the bin of every binned sample
  uint64_t outside = 0, x_under = 0, x_over = 0, y_under = 0, y_over = 0, x_nan = 0, y_nan = 0;
};

// 4 producers ingest random samples for ~2 s (bin indices, and from one producer also
// coordinates at bin centres, outside the axes and NaN; some messages larger than a staging
// buffer, so applied in parts) while a harvester reads and resets every ~20 ms. No bin
// reaches the cap within a cycle, so the bins are exact hit counts: each cycle's
// samples_applied must equal the sum of its bins (the counters count exactly the samples
// returned), and the cycles plus a final read-and-reset must add up, bin for bin and
// counter for counter, to every message acknowledged.
TEST_P(ReadAndResetTest, CyclesUnderConcurrentIngestLoseAndDoubleNothing) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "HISTD_TEST_SEED=" << seed);
  Options options = DefaultOptions();
  options.pipeline.staging_buffer_bytes = 256 << 10;  // a 400 KB message is applied in parts
  options.pipeline.staging_buffers = 8;
  StartServer(options);
  const uint32_t rows = 512, cols = 4096;
  v1::HistogramSpec spec;
  spec.set_name("dqm");
  spec.set_rows(rows);
  spec.set_cols(cols);
  spec.set_cap(255);
  spec.mutable_x_axis()->set_lo(0);
  spec.mutable_x_axis()->set_hi(static_cast<float>(cols));
  spec.mutable_y_axis()->set_lo(0);
  spec.mutable_y_axis()->set_hi(static_cast<float>(rows));
  ASSERT_TRUE(CreateSpec(spec).ok());
  const uint64_t bins = uint64_t{rows} * cols;

  Expected expected;
  expected.hits.assign(bins, 0);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> rejected{0};
  auto producer = [&](int id) {
    std::mt19937_64 rng(seed + id);
    grpc::ClientContext ctx;
    auto stream = ingest_->Ingest(&ctx);
    std::mutex mu;
    std::map<uint64_t, SentMessage> in_flight;
    std::thread reader([&] {
      v1::IngestResponse r;
      while (stream->Read(&r)) {
        SentMessage m;
        {
          std::lock_guard<std::mutex> lock(mu);
          auto it = in_flight.find(r.sequence());
          if (it == in_flight.end()) continue;
          m = std::move(it->second);
          in_flight.erase(it);
        }
        if (r.code() != 0) {
          rejected.fetch_add(1);
          continue;
        }
        std::lock_guard<std::mutex> lock(expected.mu);
        expected.messages += 1;
        expected.binned += m.bins.size();
        for (uint32_t b : m.bins) expected.hits[b] += 1;
        expected.outside += m.outside;
        expected.x_under += m.x_under;
        expected.x_over += m.x_over;
        expected.y_under += m.y_under;
        expected.y_over += m.y_over;
        expected.x_nan += m.x_nan;
        expected.y_nan += m.y_nan;
      }
    });
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (uint64_t seq = 1; !stop.load(); ++seq) {
      SentMessage m;
      v1::IngestRequest request;
      const bool large = seq % 25 == 0;  // 100k samples: several staging buffers
      const size_t n = large ? 100000 : 500 + rng() % 3000;
      if (id == 3 && seq % 2 == 0) {
        std::vector<std::pair<float, float>> xy(n);
        for (auto& p : xy) {
          const uint32_t r = rng() % rows, c = rng() % cols;
          switch (rng() % 16) {
            case 0: p = {-3.0f, r + 0.5f}; ++m.x_under; ++m.outside; break;
            case 1: p = {c + 0.5f, float(rows) + 7}; ++m.y_over; ++m.outside; break;
            case 2: p = {nan, r + 0.5f}; ++m.x_nan; ++m.outside; break;
            case 3: p = {-std::numeric_limits<float>::infinity(), nan};
                    ++m.x_under; ++m.y_nan; ++m.outside; break;
            default: p = {c + 0.5f, r + 0.5f}; m.bins.push_back(r * cols + c); break;
          }
        }
        request = XYMessage(seq, "dqm", xy);
      } else {
        std::vector<uint32_t> idx(n);
        for (uint32_t& i : idx) i = static_cast<uint32_t>(rng() % bins);
        m.bins = idx;
        request = IndexMessage(seq, "dqm", idx);
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        in_flight.emplace(seq, std::move(m));
      }
      if (!stream->Write(request)) break;
      absl::SleepFor(absl::Microseconds(large ? 2000 : 300));  // low rate: no bin saturates
    }
    stream->WritesDone();
    reader.join();
    EXPECT_TRUE(stream->Finish().ok());
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(in_flight.empty()) << in_flight.size() << " messages never acknowledged";
  };
  std::vector<std::thread> producers;
  for (int id = 0; id < 4; ++id) producers.emplace_back(producer, id);

  std::vector<uint64_t> harvested(bins, 0);
  IngestCounters sum;
  int cycles = 0, non_empty_cycles = 0;
  auto harvest = [&](const Cycle& c) {
    ASSERT_TRUE(c.status.ok()) << c.status.error_message();
    ASSERT_EQ(c.bins.size(), bins);
    uint64_t total = 0;
    for (uint64_t i = 0; i < bins; ++i) {
      const uint8_t v = static_cast<uint8_t>(c.bins[i]);
      ASSERT_LT(v, 255) << "bin " << i << " saturated within one cycle: lower the rate";
      harvested[i] += v;
      total += v;
    }
    EXPECT_EQ(c.info.total_count(), total);
    // The guarantee, per cycle: the counters count exactly the samples in the bins.
    EXPECT_EQ(c.info.samples_applied(), total) << "cycle " << cycles;
    sum.samples_applied += c.info.samples_applied();
    sum.messages_applied += c.info.messages_applied();
    sum.samples_outside += c.info.samples_outside();
    sum.x_underflow += c.info.x_underflow();
    sum.x_overflow += c.info.x_overflow();
    sum.y_underflow += c.info.y_underflow();
    sum.y_overflow += c.info.y_overflow();
    sum.x_nan += c.info.x_nan();
    sum.y_nan += c.info.y_nan();
    sum.messages_rejected += c.info.messages_rejected();
    non_empty_cycles += total != 0;
    ++cycles;
  };
  // At least 2 s and 10 cycles that held samples (slow builds, e.g. ASan, need longer),
  // at most 30 s.
  const absl::Time begin = absl::Now();
  while ((absl::Now() < begin + absl::Seconds(2) || non_empty_cycles < 10) &&
         absl::Now() < begin + absl::Seconds(30)) {
    absl::SleepFor(absl::Milliseconds(20));
    harvest(ReadAndReset(*histograms_, "dqm"));
    if (::testing::Test::HasFatalFailure()) break;
  }
  stop.store(true);
  for (auto& t : producers) t.join();
  harvest(ReadAndReset(*histograms_, "dqm"));  // everything acknowledged is applied by now

  EXPECT_EQ(rejected.load(), 0u);
  EXPECT_GE(non_empty_cycles, 10) << cycles << " cycles";
  EXPECT_GT(expected.messages, 100u);
  EXPECT_TRUE(harvested == expected.hits) << "the cycles' bins do not add up to the acknowledged samples";
  EXPECT_EQ(sum.samples_applied, expected.binned);
  EXPECT_EQ(sum.messages_applied, expected.messages);
  EXPECT_EQ(sum.samples_outside, expected.outside);
  EXPECT_EQ(sum.x_underflow, expected.x_under);
  EXPECT_EQ(sum.x_overflow, expected.x_over);
  EXPECT_EQ(sum.y_underflow, expected.y_under);
  EXPECT_EQ(sum.y_overflow, expected.y_over);
  EXPECT_EQ(sum.x_nan, expected.x_nan);
  EXPECT_EQ(sum.y_nan, expected.y_nan);
  EXPECT_EQ(sum.messages_rejected, 0u);
  // Nothing is left behind.
  const v1::HistogramInfo after = Info("dqm");
  EXPECT_EQ(after.total_count(), 0u);
  EXPECT_EQ(after.samples_applied(), 0u);
  EXPECT_EQ(after.messages_applied(), 0u);
}

TEST_P(ReadAndResetTest, ReturnsBinsAndCountersThenZeroesBoth) {
  ASSERT_TRUE(Create("h", 7, 300, 3).ok());
  ReferenceHistogram ref(7, 300, 3);
  std::vector<uint32_t> idx;
  for (uint32_t i = 0; i < 2100; i += 7) idx.insert(idx.end(), {i, i, i, i, 2099});
  ASSERT_EQ(IngestOne(IndexMessage(1, "h", idx)).code(), 0);
  ASSERT_EQ(IngestOne(IndexMessage(2, "h", {0, 2100})).code(),
            static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));  // rejected, nothing applied
  ref.Add(idx);
  // Small chunks: the info comes once, the data in order.
  const Cycle c = ReadAndReset(*histograms_, "h", 1000);
  ASSERT_TRUE(c.status.ok()) << c.status.error_message();
  EXPECT_EQ(c.bins, ref.Bytes());
  EXPECT_EQ(c.total_bytes, 2100u);
  EXPECT_EQ(c.chunks, 3u);
  EXPECT_EQ(c.largest_chunk, 1000u);
  EXPECT_TRUE(c.offsets_contiguous);
  EXPECT_TRUE(c.info_only_in_first);
  EXPECT_EQ(c.info.spec().name(), "h");
  EXPECT_EQ(c.info.spec().cap(), 3u);
  EXPECT_EQ(c.info.samples_applied(), idx.size());
  EXPECT_EQ(c.info.messages_applied(), 1u);
  EXPECT_EQ(c.info.messages_rejected(), 1u);
  EXPECT_EQ(c.info.samples_rejected(), 2u);
  EXPECT_EQ(c.info.total_count(), ref.Total());
  EXPECT_EQ(c.info.saturated_bins(), 301u);  // every 7th bin (4 hits) and bin 2099
  EXPECT_FALSE(c.info.device().empty());
  // Both zeroed; the spec stays; the next cycle starts from nothing.
  const v1::HistogramInfo after = Info("h");
  EXPECT_EQ(after.total_count(), 0u);
  EXPECT_EQ(after.samples_applied(), 0u);
  EXPECT_EQ(after.messages_rejected(), 0u);
  EXPECT_EQ(after.spec().cap(), 3u);
  ASSERT_EQ(IngestOne(IndexMessage(3, "h", {5, 5})).code(), 0);
  const Cycle next = ReadAndReset(*histograms_, "h");
  ASSERT_TRUE(next.status.ok());
  EXPECT_EQ(next.chunks, 1u);
  EXPECT_EQ(next.info.samples_applied(), 2u);
  EXPECT_EQ(next.info.total_count(), 2u);
  EXPECT_EQ(static_cast<uint8_t>(next.bins[5]), 2);
}

// The C++ client library reassembles the chunks and keeps the cycle's info.
TEST_P(ReadAndResetTest, ClientLibraryReturnsOneCycle) {
  ASSERT_TRUE(Create("c", 3, 1000, 9).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "c", {0, 2999, 2999})).code(), 0);
  client::Client client(server_->address());
  v1::ReadAndResetHistogramRequest req;
  req.set_name("c");
  req.set_max_chunk_bytes(512);
  absl::StatusOr<client::ReadAndResetResult> r = client.ReadAndResetHistogram(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->bins.size(), 3000u);
  EXPECT_EQ(r->bins[0], 1);
  EXPECT_EQ(r->bins[2999], 2);
  EXPECT_EQ(r->info.samples_applied(), 3u);
  EXPECT_EQ(r->info.total_count(), 3u);
  EXPECT_EQ(r->info.spec().cap(), 9u);
  r = client.ReadAndResetHistogram(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->bins, std::string(3000, '\0'));
  EXPECT_EQ(r->info.samples_applied(), 0u);
  req.set_name("missing");
  EXPECT_EQ(client.ReadAndResetHistogram(req).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(ReadAndResetTest, ErrorsGetExactCodesAndResetNothing) {
  EXPECT_EQ(ReadAndReset(*histograms_, "nope").status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ReadAndReset(*histograms_, "bad name").status.error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  // A host budget too small for the copy: RESOURCE_EXHAUSTED, and the bins stay.
  // The CPU engine's histogram is charged to the same budget; the CUDA engine's is not.
  Options o = DefaultOptions();
  o.limits.max_memory_bytes = (GetParam() == "cuda" ? 100 : 200) << 20;
  o.pipeline.staging_buffers = 2;
  o.pipeline.staging_buffer_bytes = 1 << 20;
  StartServer(o);
  ASSERT_TRUE(Create("big", 8192, 16384).ok());  // 128 MiB of bins, and a copy of as many
  ASSERT_EQ(IngestOne(IndexMessage(1, "big", {3, 3})).code(), 0);
  const Cycle refused = ReadAndReset(*histograms_, "big");
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.status.error_message();
  EXPECT_EQ(Info("big").total_count(), 2u);
  EXPECT_EQ(Info("big").samples_applied(), 2u);
}

}  // namespace
}  // namespace histd::server::testing
