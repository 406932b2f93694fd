#include "client/histctl/flags.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace histd::histctl {

void FlagSet::Add(const std::string& name, Kind kind, void* target, const std::string& help,
                  std::string default_text) {
  flags_.push_back(Flag{name, kind, target, help, std::move(default_text), 0});
}

void FlagSet::String(const std::string& name, std::string* target, const std::string& help) {
  Add(name, Kind::kString, target, help, *target);
}
void FlagSet::Uint(const std::string& name, uint64_t* target, const std::string& help) {
  Add(name, Kind::kUint, target, help, absl::StrCat(*target));
}
void FlagSet::Int(const std::string& name, int64_t* target, const std::string& help) {
  Add(name, Kind::kInt, target, help, absl::StrCat(*target));
}
void FlagSet::Double(const std::string& name, double* target, const std::string& help) {
  Add(name, Kind::kDouble, target, help, absl::StrCat(*target));
}
void FlagSet::Bool(const std::string& name, bool* target, const std::string& help) {
  Add(name, Kind::kBool, target, help, *target ? "true" : "false");
}

void FlagSet::Short(char c, const std::string& name) {
  if (Flag* flag = Find(name)) flag->short_name = c;
}

FlagSet::Flag* FlagSet::Find(const std::string& name) {
  for (Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

absl::Status FlagSet::Set(Flag& flag, const std::string& value, const std::string& spelled) {
  const auto bad = [&](const char* want) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag ", spelled, ": '", value, "' is not ", want));
  };
  switch (flag.kind) {
    case Kind::kString:
      *static_cast<std::string*>(flag.target) = value;
      return absl::OkStatus();
    case Kind::kUint:
      if (!absl::SimpleAtoi(value, static_cast<uint64_t*>(flag.target))) {
        return bad("a non-negative integer");
      }
      return absl::OkStatus();
    case Kind::kInt:
      if (!absl::SimpleAtoi(value, static_cast<int64_t*>(flag.target))) return bad("an integer");
      return absl::OkStatus();
    case Kind::kDouble:
      if (!absl::SimpleAtod(value, static_cast<double*>(flag.target))) return bad("a number");
      return absl::OkStatus();
    case Kind::kBool: {
      const std::string v = absl::AsciiStrToLower(value);
      bool* target = static_cast<bool*>(flag.target);
      if (v == "true" || v == "1" || v == "yes") {
        *target = true;
      } else if (v == "false" || v == "0" || v == "no") {
        *target = false;
      } else {
        return bad("true or false");
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unreachable");
}

absl::Status FlagSet::Parse(const std::vector<std::string>& args,
                            std::vector<std::string>* positionals) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positionals->insert(positionals->end(), args.begin() + i + 1, args.end());
      return absl::OkStatus();
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positionals->push_back(arg);
      continue;
    }
    std::string name;
    std::string value;
    bool has_value = false;
    Flag* flag = nullptr;
    if (arg[1] == '-') {
      const size_t eq = arg.find('=');
      name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        has_value = true;
      }
      flag = Find(name);
      if (flag == nullptr && !has_value && absl::StartsWith(name, "no")) {
        Flag* negated = Find(name.substr(2));
        if (negated != nullptr && negated->kind == Kind::kBool) {
          *static_cast<bool*>(negated->target) = false;
          continue;
        }
      }
    } else {
      for (Flag& f : flags_) {
        if (f.short_name == arg[1]) flag = &f;
      }
      if (flag != nullptr) name = flag->name;
      if (arg.size() > 2) {
        if (arg[2] != '=') flag = nullptr;  // -xyz is not a spelling we accept
        value = arg.substr(3);
        has_value = true;
      }
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
    }
    if (!has_value) {
      if (flag->kind == Kind::kBool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("flag ", arg, " needs a value"));
      }
    }
    absl::Status status = Set(*flag, value, arg[1] == '-' ? "--" + name : arg.substr(0, 2));
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

std::string FlagSet::Help() const {
  std::string out;
  for (const Flag& flag : flags_) {
    const char* kind = "";
    switch (flag.kind) {
      case Kind::kString: kind = "=<string>"; break;
      case Kind::kUint: kind = "=<uint>"; break;
      case Kind::kInt: kind = "=<int>"; break;
      case Kind::kDouble: kind = "=<number>"; break;
      case Kind::kBool: kind = ""; break;
    }
    std::string spelled = absl::StrCat("--", flag.name, kind);
    if (flag.short_name != 0) spelled = absl::StrCat("-", std::string(1, flag.short_name), ", ", spelled);
    std::string line = absl::StrFormat("  %-28s %s", spelled, flag.help);
    if (!flag.default_text.empty() && flag.default_text != "0" && flag.default_text != "false") {
      absl::StrAppend(&line, " (default: ", flag.default_text, ")");
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

}  // namespace histd::histctl
