// histctl: the command-line client of histd.
//   histctl [global flags] <subcommand> [flags] [arguments]
// Every subcommand has --help; `histctl --help` lists them. Exit codes: see command.h.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/histctl/command.h"

namespace histd::histctl {
namespace {

void PrintTopHelp() {
  std::printf(
      "histctl: command-line client of histd, the GPU histogram service.\n\n"
      "usage: histctl [global flags] <subcommand> [flags] [arguments]\n"
      "       histctl <subcommand> --help\n"
      "       histctl --version\n\nsubcommands:\n");
  for (const Command& c : Commands()) std::printf("  %-10s %s\n", c.name, c.summary);
  FlagSet flags;
  GlobalOptions global;
  AddGlobalFlags(flags, &global);
  std::printf("\nglobal flags (also accepted after the subcommand):\n%s", flags.Help().c_str());
  std::printf(
      "\nexit status: 0 ok, 1 error (printed as 'histctl: CODE: message'), 2 usage error\n");
}

const Command* FindCommand(const std::string& name) {
  for (const Command& c : Commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

// Index of the subcommand among args: the first argument that is neither a flag nor the
// value of a global flag written as "--flag value".
size_t SubcommandIndex(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty() || a[0] != '-') return i;
    if (a.find('=') == std::string::npos &&
        (a == "--server" || a == "--timeout" || a == "--max_message_mib" || a == "--tls_ca" ||
         a == "--tls_cert" || a == "--tls_key" || a == "--tls_server_name" ||
         a == "--token_file")) {
      ++i;
    }
  }
  return args.size();
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "--version" || args[0] == "version")) {
    std::printf("histctl %s\n", HISTD_VERSION);
    return kExitOk;
  }
  const size_t sub = SubcommandIndex(args);

  GlobalOptions global;
  FlagSet top;
  AddGlobalFlags(top, &global);
  std::vector<std::string> stray;
  absl::Status parsed =
      top.Parse(std::vector<std::string>(args.begin(), args.begin() + sub), &stray);
  if (!parsed.ok()) {
    ReportError(parsed, true);
    std::fprintf(stderr, "see histctl --help\n");
    return kExitUsage;
  }
  if (sub == args.size()) {
    PrintTopHelp();
    return global.help ? kExitOk : kExitUsage;
  }
  std::string name = args[sub];
  std::vector<std::string> rest(args.begin() + sub + 1, args.end());
  if (name == "help") {
    if (rest.empty()) {
      PrintTopHelp();
      return kExitOk;
    }
    name = rest[0];
    rest = {"--help"};
  }
  const Command* command = FindCommand(name);
  if (command == nullptr) {
    std::fprintf(stderr, "histctl: unknown subcommand '%s'; see histctl --help\n", name.c_str());
    return kExitUsage;
  }

  FlagSet flags;
  std::function<int(const Invocation&)> run = command->define(flags);
  Invocation inv;
  inv.global = global;
  AddGlobalFlags(flags, &inv.global);
  parsed = flags.Parse(rest, &inv.positionals);
  if (inv.global.help) {
    std::printf("usage: histctl %s [flags]%s%s\n\n%s.\n\nflags:\n%s", command->name,
                *command->positionals ? " " : "", command->positionals, command->summary,
                flags.Help().c_str());
    return kExitOk;
  }
  if (!parsed.ok()) {
    ReportError(parsed, true);
    std::fprintf(stderr, "see histctl %s --help\n", command->name);
    return kExitUsage;
  }
  absl::StatusOr<client::ClientSecurity> security =
      client::LoadClientSecurity(inv.global.security_files);
  if (!security.ok()) return ReportError(security.status(), true);
  inv.global.security = *std::move(security);
  return run(inv);
}

}  // namespace
}  // namespace histd::histctl

int main(int argc, char** argv) { return histd::histctl::Main(argc, argv); }
