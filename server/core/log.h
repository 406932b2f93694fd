// The daemon's log: one line per notable event on stderr, as text or as JSON.
//
// An event has a level, a name and typed fields:
//   LogInfo("snapshot_written", {{"why", "periodic"}, {"histograms", 3}, {"seconds", 0.25}});
// --log_format=text (the default), for people; values with spaces, quotes, '=' or control
// characters are quoted with escapes (logfmt):
//   2026-11-28T02:41:56.123Z INFO snapshot_written why=periodic histograms=3 seconds=0.25
// --log_format=json, for log shippers (one object per line; RFC 3339 UTC time; level is
// info, warning or error; invalid UTF-8 in a value becomes U+FFFD):
//   {"level":"info","time":"2026-11-28T02:41:56.123Z","event":"snapshot_written",
//    "fields":{"why":"periodic","histograms":3,"seconds":0.25}}
// Free text, printf-style, is for lines with nothing worth a field:
//   LogWarning("staging buffer %d released twice", i);
// text: the message as written; json: event "message", the text in fields.message.
// In either format a control character in a message or value is escaped, so that no input
// (a client's histogram name, a peer address) can forge or split a line.
//
// Abseil 20220623 has no absl/log, so this is ours. A line is written whole with one fwrite,
// so lines from different threads never interleave.
// Thread safety: every function may be called from any thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <variant>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace histd::server {

enum class LogLevel : int { kInfo = 0, kWarning = 1, kError = 2, kOff = 3 };
enum class LogFormat : int { kText = 0, kJson = 1 };

// Lines below `level` are dropped (tests use kWarning or kOff to stay quiet).
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
void SetLogFormat(LogFormat format);
LogFormat GetLogFormat();

// One field of an event: a key (an identifier, snake_case; the field refers to it, so it must
// outlive the call: a string literal) and a string, integer, floating-point or boolean value.
class LogField {
 public:
  using Value = std::variant<std::string, int64_t, uint64_t, double, bool>;

  LogField(absl::string_view key, absl::string_view value) : key_(key), value_(std::string(value)) {}
  LogField(absl::string_view key, const char* value) : key_(key), value_(std::string(value)) {}
  LogField(absl::string_view key, const std::string& value) : key_(key), value_(value) {}
  template <typename Int,
            std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
  LogField(absl::string_view key, Int value)
      : key_(key),
        value_(std::is_signed_v<Int> ? Value(static_cast<int64_t>(value))
                                     : Value(static_cast<uint64_t>(value))) {}
  LogField(absl::string_view key, double value) : key_(key), value_(value) {}
  LogField(absl::string_view key, bool value) : key_(key), value_(value) {}

  absl::string_view key() const { return key_; }
  const Value& value() const { return value_; }

 private:
  absl::string_view key_;
  Value value_;
};

// Writes one event (if `level` is not below the log level).
void LogEvent(LogLevel level, absl::string_view event, std::initializer_list<LogField> fields);
// Writes one free-text line: event "message" in JSON.
void LogLine(LogLevel level, absl::string_view message);

inline void LogInfo(absl::string_view event, std::initializer_list<LogField> fields) {
  LogEvent(LogLevel::kInfo, event, fields);
}
inline void LogWarning(absl::string_view event, std::initializer_list<LogField> fields) {
  LogEvent(LogLevel::kWarning, event, fields);
}
inline void LogError(absl::string_view event, std::initializer_list<LogField> fields) {
  LogEvent(LogLevel::kError, event, fields);
}

template <typename... Args>
void LogInfo(const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (GetLogLevel() <= LogLevel::kInfo) LogLine(LogLevel::kInfo, absl::StrFormat(format, args...));
}
template <typename... Args>
void LogWarning(const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (GetLogLevel() <= LogLevel::kWarning) {
    LogLine(LogLevel::kWarning, absl::StrFormat(format, args...));
  }
}
template <typename... Args>
void LogError(const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (GetLogLevel() <= LogLevel::kError) LogLine(LogLevel::kError, absl::StrFormat(format, args...));
}

}  // namespace histd::server
