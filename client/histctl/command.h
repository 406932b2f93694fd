// histctl's subcommand framework: the table of subcommands, the flags every subcommand
// shares (--server, --timeout, ...), and helpers for parsing common values and reporting
// errors.
//
// Exit codes: 0 success; 1 an error from the server or the data (the status code name and
// message are printed on stderr as "histctl: CODE: message", with what failed for a
// connection, certificate, credentials or role refusal); 2 a usage error.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/histctl/flags.h"
#include "client/client_security.h"
#include "client/histd_client.h"
#include "histd/v1/common.pb.h"

namespace histd::histctl {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

struct GlobalOptions {
  std::string server;  // from $HISTD_SERVER, else 127.0.0.1:7440
  double timeout_seconds = 0;  // per unary call; 0 = none
  uint64_t max_message_mib = 64;
  bool wait_for_ready = false;
  bool help = false;
  client::ClientSecurityFiles security_files;  // --tls_ca, --tls_cert, --token_file, ...
  client::ClientSecurity security;             // what they hold, loaded once flags are parsed
};

// What a subcommand's Run receives.
struct Invocation {
  GlobalOptions global;
  std::vector<std::string> positionals;

  std::unique_ptr<client::Client> Connect() const;
};

struct Command {
  const char* name;
  const char* summary;
  // Positional arguments, e.g. "NAME FILE" (shown in the usage line).
  const char* positionals;
  // Declares the subcommand's own flags (bound to storage the Run closure shares).
  // Returns the body to run after parsing.
  std::function<std::function<int(const Invocation&)>(FlagSet&)> define;
};

// Every subcommand, in the order `histctl --help` lists them.
const std::vector<Command>& Commands();
// Registration hooks, one per source file.
void AddHistogramCommands(std::vector<Command>* commands);
void AddIngestCommand(std::vector<Command>* commands);
void AddQueryCommands(std::vector<Command>* commands);
void AddViewCommands(std::vector<Command>* commands);
void AddComputeCommands(std::vector<Command>* commands);

// Declares --server, --timeout, --max_message_mib, --wait_for_ready and --help.
void AddGlobalFlags(FlagSet& flags, GlobalOptions* options);

// Prints "histctl: CODE: message" to stderr; returns kExitError (kExitUsage for a usage
// error, which callers signal by passing usage = true).
int ReportError(const absl::Status& status, bool usage = false);
// Fails with a usage error unless there are exactly n positionals.
absl::Status ExpectPositionals(const Invocation& inv, size_t n, const char* what);

// "rows" / "cols" (and "row"/"col", "0"/"1" as numpy axes) as a Dim; "all"/"none"/"" gives
// DIM_UNSPECIFIED when allow_all.
absl::StatusOr<histd::v1::Dim> ParseDim(const std::string& text, bool allow_all);
// "begin:end" half-open, either side may be empty ("" = the whole dimension, encoded as 0:0).
absl::Status ParseRange(const std::string& text, uint32_t* begin, uint32_t* end);
// "lo,hi" (or "lo:hi") as an axis.
absl::StatusOr<histd::v1::Axis> ParseAxis(const std::string& text);
// "RxC" (or "R,C").
absl::Status ParseShape(const std::string& text, uint64_t* rows, uint64_t* cols);
// Comma-separated numbers.
absl::StatusOr<std::vector<double>> ParseNumberList(const std::string& text);

}  // namespace histd::histctl
