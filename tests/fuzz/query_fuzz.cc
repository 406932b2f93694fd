// Fuzz target: the Query calls (region, rebinned and transposed reads cut into chunks,
// projections, CDFs, quantiles, rendered heatmaps), with create and ingest to set histograms
// up, through the API's validation into the core with the CPU engine (server/core/api_query.h
// and query_reader.h: what the gRPC service runs).
//
// Feeds: one serialized histd.fuzz.QueryProgram (histd_fuzz.proto), mutated field by field
// (proto_mutator.h); its calls run in order against the process's core (fuzz_core.h: 4 KiB
// default chunks, 16 KiB messages, renders of at most 64 pixels a side).
// Asserts: every call is answered; an OK query is whole (each chunk's offset is the bytes
// before it, no chunk is larger than the message limit, they add up to total_bytes = rows x
// cols x the element size of the first chunk's dtype); an OK CDF ends at its total and never
// falls; an OK render is a PNG (a bare one exactly the heatmap, within the render limit);
// the core keeps serving. INTERNAL or UNKNOWN codes are findings (printed, counted; see fuzz_core.h).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "histd_fuzz.pb.h"
#include "server/core/api_query.h"
#include "server/core/query_reader.h"
#include "tests/fuzz/fuzz_core.h"

namespace histd::fuzz {
namespace {

namespace api = server::api;

// Reads a query as the gRPC reactor does: a band when the reader needs one, then a chunk.
void RunQuery(FuzzCore& d, const v1::QueryRequest& request) {
  absl::StatusOr<std::unique_ptr<server::QueryReader>> reader =
      server::QueryReader::Open(d.ctx(), request);
  absl::Status status = reader.status();
  v1::QueryChunk chunk, first;
  uint64_t bytes = 0, chunks = 0;
  std::string broken;
  const uint64_t limit = static_cast<uint64_t>(d.ctx().options->limits.max_message_bytes);
  while (status.ok() && !(*reader)->done()) {
    if ((*reader)->needs_read()) {
      status = (*reader)->ReadBand();
      if (!status.ok()) break;
    }
    (*reader)->NextChunk(&chunk);
    if (chunks == 0) first = chunk;
    if (chunk.offset() != bytes && broken.empty()) {
      broken = "chunk " + std::to_string(chunks) + " at offset " + std::to_string(chunk.offset()) +
               " after " + std::to_string(bytes) + " bytes";
    }
    if (chunk.ByteSizeLong() > limit && broken.empty()) {
      broken = "chunk " + std::to_string(chunks) + " of " + std::to_string(chunk.ByteSizeLong()) +
               " bytes";
    }
    bytes += chunk.data().size();
    ++chunks;
  }
  d.Check("Query", status, request);
  if (!status.ok()) return;
  const uint64_t element = first.dtype() == v1::DTYPE_U8 ? 1 : first.dtype() == v1::DTYPE_U32 ? 4 : 0;
  const unsigned __int128 want = static_cast<unsigned __int128>(first.rows()) * first.cols() * element;
  if (broken.empty() && (element == 0 || want != first.total_bytes() || bytes != first.total_bytes())) {
    broken = "dtype " + std::to_string(first.dtype()) + ", " + std::to_string(first.rows()) + " x " +
             std::to_string(first.cols()) + ", total_bytes " + std::to_string(first.total_bytes()) +
             ", " + std::to_string(bytes) + " bytes in " + std::to_string(chunks) + " chunks";
  }
  if (!broken.empty()) d.Finding("Query", "broken stream: " + broken, request);
}

void CheckCdf(FuzzCore& d, const v1::CdfResponse& cdf, const v1::CdfRequest& request) {
  const int n = cdf.cumulative_size();
  bool ok = cdf.fraction_size() == n && (n == 0 ? cdf.total() == 0 : cdf.cumulative(n - 1) == cdf.total());
  for (int i = 1; ok && i < n; ++i) ok = cdf.cumulative(i - 1) <= cdf.cumulative(i);
  if (!ok) d.Finding("Cdf", "not a CDF: total " + std::to_string(cdf.total()), request);
}

// A PNG; a bare one is exactly the heatmap, at most --max_render_pixels a side.
void CheckRender(FuzzCore& d, const v1::RenderResponse& png, const v1::RenderRequest& request) {
  static const std::string kSignature = "\x89PNG\r\n\x1a\n";
  const uint32_t max = d.ctx().options->render.max_pixels;
  bool ok = png.png().compare(0, kSignature.size(), kSignature) == 0 && png.width() >= 1 &&
            png.height() >= 1;
  if (request.bare()) {
    ok = ok && png.width() <= max && png.height() <= max &&
         (request.width() == 0 || request.width() == png.width()) &&
         (request.height() == 0 || request.height() == png.height());
  }
  if (!ok) {
    d.Finding("Render", "bad PNG: " + std::to_string(png.width()) + " x " +
                            std::to_string(png.height()) + ", " + std::to_string(png.png().size()) +
                            " bytes",
              request);
  }
}

void Run(const QueryProgram& program) {
  FuzzCore& d = FuzzCore::Get();
  const server::ServiceContext& ctx = d.ctx();
  for (int i = 0; i < program.calls_size() && i < kMaxCallsPerInput; ++i) {
    const QueryCall& call = program.calls(i);
    switch (call.call_case()) {
      case QueryCall::kCreate:
        (void)d.Create(call.create());
        break;
      case QueryCall::kIngest:
        d.Ingest(call.ingest());
        break;
      case QueryCall::kQuery:
        RunQuery(d, call.query());
        break;
      case QueryCall::kProject: {
        v1::ProjectResponse response;
        d.Check("Project", api::Project(ctx, call.project(), &response), call.project());
        break;
      }
      case QueryCall::kCdf: {
        v1::CdfResponse response;
        const absl::Status s = api::Cdf(ctx, call.cdf(), &response);
        d.Check("Cdf", s, call.cdf());
        if (s.ok()) CheckCdf(d, response, call.cdf());
        break;
      }
      case QueryCall::kQuantiles: {
        v1::QuantilesResponse response;
        d.Check("Quantiles", api::Quantiles(ctx, call.quantiles(), &response), call.quantiles());
        break;
      }
      case QueryCall::kRender: {
        v1::RenderResponse response;
        const absl::Status s = api::Render(ctx, call.render(), &response);
        d.Check("Render", s, call.render());
        if (s.ok()) CheckRender(d, response, call.render());
        break;
      }
      case QueryCall::CALL_NOT_SET:
        break;
    }
  }
  d.EndInput();
}

}  // namespace
}  // namespace histd::fuzz

HISTD_FUZZ_PROGRAM_TARGET(histd::fuzz::QueryProgram, {"a", "b", "h", "", "missing"})
