// histctl subcommands of the Query service: query, project, cdf, quantiles.
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "client/dtype.h"
#include "client/histctl/command.h"
#include "client/histctl/output.h"
#include "client/io/array_data.h"

namespace histd::histctl {
namespace {

using client::io::ArrayData;

Command QueryCommand() {
  return {"query", "read a histogram (or a region, rebinned, transposed) into a file", "NAME",
          [](FlagSet& flags) {
            struct Opts {
              std::string rows, cols;
              uint64_t row_factor = 1, col_factor = 1, chunk_bytes = 0;
              bool transpose = false;
              OutputOpts out;
            };
            auto o = std::make_shared<Opts>();
            flags.String("rows", &o->rows, "row range BEGIN:END, half-open (default all)");
            flags.String("cols", &o->cols, "column range BEGIN:END, half-open (default all)");
            flags.Uint("row_factor", &o->row_factor, "sum blocks of this many rows (output u32 when > 1)");
            flags.Uint("col_factor", &o->col_factor, "sum blocks of this many columns (output u32 when > 1)");
            flags.Bool("transpose", &o->transpose, "return the result transposed (cols x rows)");
            flags.Uint("chunk_bytes", &o->chunk_bytes, "largest chunk the server streams (0 = its default)");
            AddOutputFlags(flags, &o->out);
            return [o](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 1, "NAME");
              if (!args.ok()) return ReportError(args, true);
              histd::v1::QueryRequest request;
              request.set_name(inv.positionals[0]);
              histd::v1::Region* region = request.mutable_region();
              uint32_t b, e;
              absl::Status parsed = ParseRange(o->rows, &b, &e);
              if (!parsed.ok()) return ReportError(parsed, true);
              region->set_row_begin(b);
              region->set_row_end(e);
              parsed = ParseRange(o->cols, &b, &e);
              if (!parsed.ok()) return ReportError(parsed, true);
              region->set_col_begin(b);
              region->set_col_end(e);
              if (o->row_factor > UINT32_MAX || o->col_factor > UINT32_MAX || o->chunk_bytes > UINT32_MAX) {
                return ReportError(absl::InvalidArgumentError("factors and --chunk_bytes must fit 32 bits"), true);
              }
              request.set_row_factor(static_cast<uint32_t>(o->row_factor));
              request.set_col_factor(static_cast<uint32_t>(o->col_factor));
              request.set_transpose(o->transpose);
              request.set_max_chunk_bytes(static_cast<uint32_t>(o->chunk_bytes));
              absl::StatusOr<client::QueryResult> result = inv.Connect()->Query(request);
              if (!result.ok()) return ReportError(result.status());
              ArrayData array;
              array.dtype = result->dtype;
              array.rows = result->rows;
              array.cols = result->cols;
              array.bytes = std::move(result->bytes);
              absl::Status written = WriteResult(array, o->out.output, o->out.out_format);
              if (!written.ok()) return ReportError(written);
              if (!o->out.output.empty()) {
                std::fprintf(stderr, "wrote %llu x %llu %s (cap %u) to %s\n",
                             static_cast<unsigned long long>(array.rows),
                             static_cast<unsigned long long>(array.cols),
                             client::DTypeShortName(array.dtype), result->cap,
                             o->out.output.c_str());
              }
              return kExitOk;
            };
          }};
}

Command ProjectCommand() {
  return {"project", "sum a histogram along one dimension (one count per row or column)", "NAME",
          [](FlagSet& flags) {
            struct Opts { std::string collapse; OutputOpts out; };
            auto o = std::make_shared<Opts>();
            flags.String("collapse", &o->collapse, "rows (one sum per column) or cols (one sum per row)");
            AddOutputFlags(flags, &o->out);
            return [o](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 1, "NAME");
              if (!args.ok()) return ReportError(args, true);
              absl::StatusOr<histd::v1::Dim> dim = ParseDim(o->collapse, false);
              if (!dim.ok()) return ReportError(dim.status(), true);
              histd::v1::ProjectRequest request;
              request.set_name(inv.positionals[0]);
              request.set_collapse(*dim);
              auto response = inv.Connect()->Project(request);
              if (!response.ok()) return ReportError(response.status());
              return WriteOrReport(
                  client::io::VectorU64(response->counts().data(), response->counts_size()), o->out);
            };
          }};
}

Command CdfCommand() {
  return {"cdf",
          "cumulative distribution of a projection; writes N x 2 f64 (cumulative, fraction)",
          "NAME", [](FlagSet& flags) {
            struct Opts { std::string collapse; OutputOpts out; };
            auto o = std::make_shared<Opts>();
            flags.String("collapse", &o->collapse, "cols (CDF over rows) or rows (CDF over columns)");
            AddOutputFlags(flags, &o->out);
            return [o](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 1, "NAME");
              if (!args.ok()) return ReportError(args, true);
              absl::StatusOr<histd::v1::Dim> dim = ParseDim(o->collapse, false);
              if (!dim.ok()) return ReportError(dim.status(), true);
              histd::v1::CdfRequest request;
              request.set_name(inv.positionals[0]);
              request.set_collapse(*dim);
              auto response = inv.Connect()->Cdf(request);
              if (!response.ok()) return ReportError(response.status());
              if (response->fraction_size() != response->cumulative_size()) {
                return ReportError(absl::InternalError("cdf response: cumulative and fraction differ in length"));
              }
              const int n = response->cumulative_size();
              std::vector<double> table(2 * static_cast<size_t>(n));
              for (int i = 0; i < n; ++i) {
                table[2 * i] = static_cast<double>(response->cumulative(i));
                table[2 * i + 1] = response->fraction(i);
              }
              ArrayData array = client::io::VectorF64(table.data(), table.size());
              array.one_dimensional = false;
              array.rows = n;
              array.cols = 2;
              std::fprintf(stderr, "total %llu\n", static_cast<unsigned long long>(response->total()));
              return WriteOrReport(array, o->out);
            };
          }};
}

Command QuantilesCommand() {
  return {"quantiles",
          "bin positions where the CDF reaches probabilities; writes K x 3 f64 (p, bin, axis value or nan)",
          "NAME", [](FlagSet& flags) {
            struct Opts { std::string collapse, p = "0.5"; OutputOpts out; };
            auto o = std::make_shared<Opts>();
            flags.String("collapse", &o->collapse, "cols (quantiles over rows) or rows (over columns)");
            flags.String("p", &o->p, "comma-separated probabilities in [0, 1]");
            AddOutputFlags(flags, &o->out);
            return [o](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 1, "NAME");
              if (!args.ok()) return ReportError(args, true);
              absl::StatusOr<histd::v1::Dim> dim = ParseDim(o->collapse, false);
              if (!dim.ok()) return ReportError(dim.status(), true);
              absl::StatusOr<std::vector<double>> p = ParseNumberList(o->p);
              if (!p.ok()) return ReportError(p.status(), true);
              histd::v1::QuantilesRequest request;
              request.set_name(inv.positionals[0]);
              request.set_collapse(*dim);
              for (double v : *p) request.add_probabilities(v);
              auto response = inv.Connect()->Quantiles(request);
              if (!response.ok()) return ReportError(response.status());
              if (response->bin_positions_size() != static_cast<int>(p->size())) {
                return ReportError(absl::InternalError("quantiles response: wrong number of positions"));
              }
              const size_t k = p->size();
              std::vector<double> table(3 * k);
              for (size_t i = 0; i < k; ++i) {
                table[3 * i] = (*p)[i];
                table[3 * i + 1] = response->bin_positions(static_cast<int>(i));
                table[3 * i + 2] = static_cast<int>(i) < response->axis_values_size()
                                       ? response->axis_values(static_cast<int>(i))
                                       : std::numeric_limits<double>::quiet_NaN();
              }
              ArrayData array = client::io::VectorF64(table.data(), table.size());
              array.one_dimensional = false;
              array.rows = k;
              array.cols = 3;
              std::fprintf(stderr, "total %llu\n", static_cast<unsigned long long>(response->total()));
              return WriteOrReport(array, o->out);
            };
          }};
}

}  // namespace

void AddQueryCommands(std::vector<Command>* commands) {
  commands->push_back(QueryCommand());
  commands->push_back(ProjectCommand());
  commands->push_back(CdfCommand());
  commands->push_back(QuantilesCommand());
}

}  // namespace histd::histctl
