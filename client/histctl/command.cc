#include "client/histctl/command.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"

namespace histd::histctl {

const std::vector<Command>& Commands() {
  static const std::vector<Command>* commands = [] {
    auto* list = new std::vector<Command>();
    AddHistogramCommands(list);
    AddIngestCommand(list);
    AddQueryCommands(list);
    AddViewCommands(list);
    AddComputeCommands(list);
    return list;
  }();
  return *commands;
}

std::unique_ptr<client::Client> Invocation::Connect() const {
  client::ClientOptions options;
  options.max_message_bytes = static_cast<int>(std::min<uint64_t>(global.max_message_mib, 2047) << 20);
  if (global.timeout_seconds > 0) options.rpc_timeout = absl::Seconds(global.timeout_seconds);
  options.wait_for_ready = global.wait_for_ready;
  options.security = global.security;
  return std::make_unique<client::Client>(global.server, options);
}

void AddGlobalFlags(FlagSet& flags, GlobalOptions* options) {
  if (options->server.empty()) {
    const char* env = std::getenv("HISTD_SERVER");
    options->server = env != nullptr && *env != '\0' ? env : client::kDefaultServerAddress;
  }
  flags.String("server", &options->server, "histd address host:port ($HISTD_SERVER)");
  flags.Double("timeout", &options->timeout_seconds, "seconds per call; 0 waits forever");
  flags.Uint("max_message_mib", &options->max_message_mib, "largest gRPC message, MiB");
  flags.Bool("wait_for_ready", &options->wait_for_ready,
             "wait for the server to come up instead of failing at once");
  client::ClientSecurityFiles& files = options->security_files;
  flags.Bool("tls", &files.tls, "connect with TLS (implied by the other --tls_ flags)");
  flags.String("tls_ca", &files.tls_ca,
               "PEM CA bundle that signed the server's certificate (default: system roots)");
  flags.String("tls_cert", &files.tls_cert, "PEM client certificate, for mutual TLS");
  flags.String("tls_key", &files.tls_key, "PEM private key of --tls_cert");
  flags.String("tls_server_name", &files.tls_server_name,
               "name to check the server's certificate against (default: --server's host)");
  flags.String("token_file", &files.token_file,
               "file holding the bearer token (default: $HISTD_TOKEN)");
  flags.Bool("help", &options->help, "show this help");
  flags.Short('h', "help");
}

int ReportError(const absl::Status& status, bool usage) {
  std::string what;
  if (const char* kind = client::FailureKind(status)) {
    const std::string k = kind;
    what = k == "connection"    ? " (connection failed: is histd running there? A plaintext "
                                  "client on a TLS port also ends here: pass --tls_ca)"
           : k == "certificate" ? " (TLS certificate problem: check --tls_ca, --tls_cert, "
                                  "--tls_key and --tls_server_name)"
           : k == "credentials" ? " (credentials refused: check --token_file / $HISTD_TOKEN "
                                  "or the client certificate)"
                                : " (role not allowed: ask for an identity with a larger role)";
  }
  std::fprintf(stderr, "histctl: %s: %s%s\n", absl::StatusCodeToString(status.code()).c_str(),
               std::string(status.message()).c_str(), what.c_str());
  return usage ? kExitUsage : kExitError;
}

absl::Status ExpectPositionals(const Invocation& inv, size_t n, const char* what) {
  if (inv.positionals.size() == n) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("expected ", what, " (", n, " argument",
                                                 n == 1 ? "" : "s", "), got ",
                                                 inv.positionals.size()));
}

absl::StatusOr<histd::v1::Dim> ParseDim(const std::string& text, bool allow_all) {
  const std::string t = absl::AsciiStrToLower(text);
  if (t == "rows" || t == "row" || t == "0") return histd::v1::DIM_ROWS;
  if (t == "cols" || t == "col" || t == "columns" || t == "1") return histd::v1::DIM_COLS;
  if (allow_all && (t.empty() || t == "all" || t == "none")) return histd::v1::DIM_UNSPECIFIED;
  return absl::InvalidArgumentError(absl::StrCat("dimension '", text, "': want rows or cols",
                                                 allow_all ? " (or all)" : ""));
}

absl::Status ParseRange(const std::string& text, uint32_t* begin, uint32_t* end) {
  *begin = 0;
  *end = 0;
  if (text.empty()) return absl::OkStatus();
  const std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts.size() != 2 ||
      (!parts[0].empty() && !absl::SimpleAtoi(parts[0], begin)) ||
      (!parts[1].empty() && !absl::SimpleAtoi(parts[1], end))) {
    return absl::InvalidArgumentError(absl::StrCat("range '", text, "': want BEGIN:END"));
  }
  return absl::OkStatus();
}

absl::StatusOr<histd::v1::Axis> ParseAxis(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, absl::ByAnyChar(",:"));
  float lo, hi;
  if (parts.size() != 2 || !absl::SimpleAtof(parts[0], &lo) || !absl::SimpleAtof(parts[1], &hi)) {
    return absl::InvalidArgumentError(absl::StrCat("axis '", text, "': want LO,HI"));
  }
  histd::v1::Axis axis;
  axis.set_lo(lo);
  axis.set_hi(hi);
  return axis;
}

absl::Status ParseShape(const std::string& text, uint64_t* rows, uint64_t* cols) {
  const std::vector<std::string> parts = absl::StrSplit(text, absl::ByAnyChar("x,X"));
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], rows) || !absl::SimpleAtoi(parts[1], cols)) {
    return absl::InvalidArgumentError(absl::StrCat("shape '", text, "': want ROWSxCOLS"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> ParseNumberList(const std::string& text) {
  std::vector<double> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    double v;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(part), &v)) {
      return absl::InvalidArgumentError(absl::StrCat("'", part, "' is not a number"));
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace histd::histctl
