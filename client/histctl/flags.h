// FlagSet: a tiny table-driven command-line flag parser, one table per histctl subcommand
// (absl flags are process-global, which does not fit subcommands with their own flags).
//
// Accepted spellings: --name=value, --name value, -n value / -n=value for a flag with a
// short alias; booleans as --name, --name=true|false|1|0 and --noname. "--" ends the flags;
// everything that is not a flag (including a lone "-") is a positional argument. Unknown
// flags and malformed values are INVALID_ARGUMENT with a message naming the flag.
//
// Thread safety: none (used once, from main).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace histd::histctl {

class FlagSet {
 public:
  void String(const std::string& name, std::string* target, const std::string& help);
  void Uint(const std::string& name, uint64_t* target, const std::string& help);
  void Int(const std::string& name, int64_t* target, const std::string& help);
  void Double(const std::string& name, double* target, const std::string& help);
  void Bool(const std::string& name, bool* target, const std::string& help);
  // -c as another spelling of --name.
  void Short(char c, const std::string& name);

  // Sets the targets; appends the positional arguments to *positionals.
  absl::Status Parse(const std::vector<std::string>& args, std::vector<std::string>* positionals);

  // One line per flag: "  --name=<kind>  help (default: value)", defaults as they were
  // when the flag was declared.
  std::string Help() const;

 private:
  enum class Kind { kString, kUint, kInt, kDouble, kBool };
  struct Flag {
    std::string name;
    Kind kind;
    void* target;
    std::string help;
    std::string default_text;
    char short_name = 0;
  };

  Flag* Find(const std::string& name);
  void Add(const std::string& name, Kind kind, void* target, const std::string& help,
           std::string default_text);
  absl::Status Set(Flag& flag, const std::string& value, const std::string& spelled);

  std::vector<Flag> flags_;
};

}  // namespace histd::histctl
