#include "server/core/log.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace histd::server {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> g_format{static_cast<int>(LogFormat::kText)};

const char* TextLevel(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarning: return "WARN";
    case LogLevel::kError: return "ERROR";
    case LogLevel::kOff: break;
  }
  return "?";
}

const char* JsonLevel(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
    case LogLevel::kOff: break;
  }
  return "?";
}

// RFC 3339, UTC, milliseconds.
std::string Now() { return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()); }

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

// Appends `s` with control characters, and `quote` and backslash when quoting, escaped.
void AppendEscaped(absl::string_view s, bool quoting, std::string* out) {
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '\n') out->append("\\n");
    else if (c == '\r') out->append("\\r");
    else if (c == '\t') out->append("\\t");
    else if (IsControl(c)) absl::StrAppendFormat(out, "\\x%02x", c);
    else if (quoting && (c == '"' || c == '\\')) absl::StrAppend(out, "\\", absl::string_view(&ch, 1));
    else out->push_back(ch);
  }
}

// logfmt: bare when the value has no space, quote, '=', backslash or control character.
void AppendTextValue(absl::string_view s, std::string* out) {
  bool bare = !s.empty();
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || IsControl(c)) bare = false;
  }
  if (bare) {
    out->append(s.data(), s.size());
    return;
  }
  out->push_back('"');
  AppendEscaped(s, /*quoting=*/true, out);
  out->push_back('"');
}

std::string TextValue(const LogField::Value& value) {
  struct Visitor {
    std::string operator()(const std::string& s) const {
      std::string out;
      AppendTextValue(s, &out);
      return out;
    }
    std::string operator()(int64_t v) const { return absl::StrCat(v); }
    std::string operator()(uint64_t v) const { return absl::StrCat(v); }
    std::string operator()(double v) const { return absl::StrFormat("%g", v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
  };
  return std::visit(Visitor{}, value);
}

nlohmann::ordered_json JsonValue(const LogField::Value& value) {
  struct Visitor {
    nlohmann::ordered_json operator()(const std::string& s) const { return s; }
    nlohmann::ordered_json operator()(int64_t v) const { return v; }
    nlohmann::ordered_json operator()(uint64_t v) const { return v; }
    // JSON has no infinities or NaN: those become strings.
    nlohmann::ordered_json operator()(double v) const {
      if (std::isfinite(v)) return v;
      return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
    }
    nlohmann::ordered_json operator()(bool v) const { return v; }
  };
  return std::visit(Visitor{}, value);
}

std::string JsonLine(LogLevel level, absl::string_view event,
                     std::initializer_list<LogField> fields) {
  nlohmann::ordered_json line;
  line["level"] = JsonLevel(level);
  line["time"] = Now();
  line["event"] = std::string(event);
  nlohmann::ordered_json& object = line["fields"] = nlohmann::ordered_json::object();
  for (const LogField& field : fields) object[std::string(field.key())] = JsonValue(field.value());
  // Invalid UTF-8 (a client's bytes in a name) is replaced, so the line stays valid JSON.
  return line.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

void Write(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }
void SetLogFormat(LogFormat format) { g_format.store(static_cast<int>(format)); }
LogFormat GetLogFormat() { return static_cast<LogFormat>(g_format.load()); }

void LogEvent(LogLevel level, absl::string_view event, std::initializer_list<LogField> fields) {
  if (level < GetLogLevel() || level == LogLevel::kOff) return;
  if (GetLogFormat() == LogFormat::kJson) {
    Write(JsonLine(level, event, fields));
    return;
  }
  std::string line = absl::StrCat(Now(), " ", TextLevel(level), " ");
  AppendEscaped(event, /*quoting=*/false, &line);
  for (const LogField& field : fields) {
    absl::StrAppend(&line, " ", field.key(), "=", TextValue(field.value()));
  }
  line.push_back('\n');
  Write(line);
}

void LogLine(LogLevel level, absl::string_view message) {
  if (level < GetLogLevel() || level == LogLevel::kOff) return;
  if (GetLogFormat() == LogFormat::kJson) {
    Write(JsonLine(level, "message", {{"message", message}}));
    return;
  }
  std::string line = absl::StrCat(Now(), " ", TextLevel(level), " ");
  AppendEscaped(message, /*quoting=*/false, &line);
  line.push_back('\n');
  Write(line);
}

}  // namespace histd::server
