// histctl subcommands of the Histograms service, plus health.
#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/histctl/command.h"
#include "client/histctl/output.h"
#include "client/io/array_data.h"

namespace histd::histctl {
namespace {

// Runs a call and prints its response, or reports its error.
template <typename Response>
int PrintOrReport(const absl::StatusOr<Response>& response, bool json) {
  if (!response.ok()) return ReportError(response.status());
  PrintMessage(*response, json);
  return kExitOk;
}

Command CreateCommand() {
  return {"create", "create a histogram", "NAME", [](FlagSet& flags) {
            struct Opts {
              uint64_t rows = 0, cols = 0, cap = 255;
              std::string x, y;
              bool json = false;
            };
            auto o = std::make_shared<Opts>();
            flags.Uint("rows", &o->rows, "number of rows (required)");
            flags.Uint("cols", &o->cols, "number of columns (required)");
            flags.Uint("cap", &o->cap, "saturation cap of every bin, 1..255");
            flags.String("x", &o->x, "x axis LO,HI over the columns (for x/y samples)");
            flags.String("y", &o->y, "y axis LO,HI over the rows (for x/y samples)");
            flags.Bool("json", &o->json, "print the info as JSON");
            return [o](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 1, "NAME");
              if (!args.ok()) return ReportError(args, true);
              if (o->rows > UINT32_MAX || o->cols > UINT32_MAX || o->cap > UINT32_MAX) {
                return ReportError(absl::InvalidArgumentError("--rows, --cols and --cap must fit 32 bits"), true);
              }
              histd::v1::CreateHistogramRequest request;
              histd::v1::HistogramSpec* spec = request.mutable_spec();
              spec->set_name(inv.positionals[0]);
              spec->set_rows(static_cast<uint32_t>(o->rows));
              spec->set_cols(static_cast<uint32_t>(o->cols));
              spec->set_cap(static_cast<uint32_t>(o->cap));
              if (!o->x.empty()) {
                absl::StatusOr<histd::v1::Axis> axis = ParseAxis(o->x);
                if (!axis.ok()) return ReportError(axis.status(), true);
                *spec->mutable_x_axis() = *axis;
              }
              if (!o->y.empty()) {
                absl::StatusOr<histd::v1::Axis> axis = ParseAxis(o->y);
                if (!axis.ok()) return ReportError(axis.status(), true);
                *spec->mutable_y_axis() = *axis;
              }
              return PrintOrReport(inv.Connect()->CreateHistogram(request), o->json);
            };
          }};
}

Command DeleteCommand() {
  return {"delete", "delete one or more histograms", "NAME...", [](FlagSet&) {
            return [](const Invocation& inv) {
              if (inv.positionals.empty()) {
                return ReportError(absl::InvalidArgumentError("expected NAME..."), true);
              }
              std::unique_ptr<client::Client> client = inv.Connect();
              for (const std::string& name : inv.positionals) {
                histd::v1::DeleteHistogramRequest request;
                request.set_name(name);
                auto response = client->DeleteHistogram(request);
                if (!response.ok()) return ReportError(response.status());
                std::printf("deleted %s\n", name.c_str());
              }
              return kExitOk;
            };
          }};
}

Command ListCommand() {
  return {"list", "list histograms (a table; --long or --json for every field)", "",
          [](FlagSet& flags) {
            struct Opts { bool json = false, long_format = false; };
            auto o = std::make_shared<Opts>();
            flags.Bool("json", &o->json, "print the response as JSON");
            flags.Bool("long", &o->long_format, "print every field of every histogram");
            return [o](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 0, "no arguments");
              if (!args.ok()) return ReportError(args, true);
              auto response = inv.Connect()->ListHistograms();
              if (!response.ok()) return ReportError(response.status());
              if (o->json || o->long_format) {
                PrintMessage(*response, o->json);
                return kExitOk;
              }
              std::printf("%-32s %8s %8s %4s %14s %14s %12s %s\n", "NAME", "ROWS", "COLS", "CAP",
                          "SAMPLES", "TOTAL", "SATURATED", "DEVICE");
              for (const histd::v1::HistogramInfo& h : response->histograms()) {
                std::printf("%-32s %8u %8u %4u %14llu %14llu %12llu %s\n", h.spec().name().c_str(),
                            h.spec().rows(), h.spec().cols(), h.spec().cap(),
                            static_cast<unsigned long long>(h.samples_applied()),
                            static_cast<unsigned long long>(h.total_count()),
                            static_cast<unsigned long long>(h.saturated_bins()), h.device().c_str());
              }
              return kExitOk;
            };
          }};
}

// info and reset: one NAME, print the HistogramInfo.
template <typename Request, typename Call>
Command NameCommand(const char* name, const char* summary, Call call) {
  return {name, summary, "NAME", [call](FlagSet& flags) {
            auto json = std::make_shared<bool>(false);
            flags.Bool("json", json.get(), "print as JSON");
            return [json, call](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 1, "NAME");
              if (!args.ok()) return ReportError(args, true);
              Request request;
              request.set_name(inv.positionals[0]);
              std::unique_ptr<client::Client> client = inv.Connect();
              return PrintOrReport(call(*client, request), *json);
            };
          }};
}

Command MergeCommand() {
  return {"merge", "add every bin of SOURCE into TARGET (same shape), saturating", "SOURCE TARGET",
          [](FlagSet& flags) {
            auto json = std::make_shared<bool>(false);
            flags.Bool("json", json.get(), "print the target's info as JSON");
            return [json](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 2, "SOURCE TARGET");
              if (!args.ok()) return ReportError(args, true);
              histd::v1::MergeHistogramRequest request;
              request.set_source(inv.positionals[0]);
              request.set_target(inv.positionals[1]);
              return PrintOrReport(inv.Connect()->MergeHistogram(request), *json);
            };
          }};
}

Command ReadResetCommand() {
  return {"read-reset",
          "one monitoring cycle: write every bin to a file and print the counters, then zero "
          "both on the server (atomically with respect to ingest)",
          "NAME", [](FlagSet& flags) {
            struct Opts {
              uint64_t chunk_bytes = 0;
              bool json = false;
              OutputOpts out;
            };
            auto o = std::make_shared<Opts>();
            flags.Uint("chunk_bytes", &o->chunk_bytes, "largest chunk the server streams (0 = its default)");
            flags.Bool("json", &o->json, "print the cycle's info as JSON");
            AddOutputFlags(flags, &o->out);
            return [o](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 1, "NAME");
              if (!args.ok()) return ReportError(args, true);
              if (o->out.output.empty()) {
                return ReportError(absl::InvalidArgumentError(
                                       "read-reset needs -o FILE for the bins (the counters go to stdout)"),
                                   true);
              }
              if (o->chunk_bytes > UINT32_MAX) {
                return ReportError(absl::InvalidArgumentError("--chunk_bytes must fit 32 bits"), true);
              }
              histd::v1::ReadAndResetHistogramRequest request;
              request.set_name(inv.positionals[0]);
              request.set_max_chunk_bytes(static_cast<uint32_t>(o->chunk_bytes));
              absl::StatusOr<client::ReadAndResetResult> result =
                  inv.Connect()->ReadAndResetHistogram(request);
              if (!result.ok()) return ReportError(result.status());
              client::io::ArrayData array;
              array.dtype = histd::v1::DTYPE_U8;
              array.rows = result->info.spec().rows();
              array.cols = result->info.spec().cols();
              array.bytes = std::move(result->bins);
              // The bins first: once the server has reset, they exist only here.
              const int written = WriteOrReport(array, o->out);
              PrintMessage(result->info, o->json);
              return written;
            };
          }};
}

Command StatsCommand() {
  return {"stats", "print server statistics", "", [](FlagSet& flags) {
            auto json = std::make_shared<bool>(false);
            flags.Bool("json", json.get(), "print as JSON");
            return [json](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 0, "no arguments");
              if (!args.ok()) return ReportError(args, true);
              return PrintOrReport(inv.Connect()->GetServerStats(), *json);
            };
          }};
}

Command SnapshotCommand() {
  return {"snapshot", "write every histogram to the daemon's --snapshot_path now", "",
          [](FlagSet& flags) {
            auto json = std::make_shared<bool>(false);
            flags.Bool("json", json.get(), "print as JSON");
            return [json](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 0, "no arguments");
              if (!args.ok()) return ReportError(args, true);
              return PrintOrReport(inv.Connect()->WriteSnapshot(), *json);
            };
          }};
}

Command HealthCommand() {
  return {"health", "grpc.health.v1 check; exits 0 only when SERVING", "", [](FlagSet& flags) {
            auto service = std::make_shared<std::string>();
            flags.String("service", service.get(), "service name to ask about ('' = the server)");
            return [service](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 0, "no arguments");
              if (!args.ok()) return ReportError(args, true);
              absl::StatusOr<client::ServingStatus> status = inv.Connect()->CheckHealth(*service);
              if (!status.ok()) return ReportError(status.status());
              std::printf("%s\n", client::ServingStatusName(*status));
              return *status == client::ServingStatus::kServing ? kExitOk : kExitError;
            };
          }};
}

}  // namespace

void AddHistogramCommands(std::vector<Command>* commands) {
  commands->push_back(CreateCommand());
  commands->push_back(DeleteCommand());
  commands->push_back(ListCommand());
  commands->push_back(NameCommand<histd::v1::GetHistogramInfoRequest>(
      "info", "print a histogram's spec and counters",
      [](client::Client& c, const histd::v1::GetHistogramInfoRequest& r) { return c.GetHistogramInfo(r); }));
  commands->push_back(NameCommand<histd::v1::ResetHistogramRequest>(
      "reset", "zero every bin and counter of a histogram",
      [](client::Client& c, const histd::v1::ResetHistogramRequest& r) { return c.ResetHistogram(r); }));
  commands->push_back(MergeCommand());
  commands->push_back(ReadResetCommand());
  commands->push_back(StatsCommand());
  commands->push_back(SnapshotCommand());
  commands->push_back(HealthCommand());
}

}  // namespace histd::histctl
