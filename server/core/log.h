// A tiny logger: one line per notable event on stderr, "<UTC time> <LEVEL> <message>".
//
// Abseil 20220623 has no absl/log, so this is ours. Lines are written whole with one
// fwrite, so lines from different threads never interleave.
// Thread safety: every function may be called from any thread.
#pragma once

#include "absl/strings/string_view.h"

#include "absl/strings/str_format.h"

namespace histd::server {

enum class LogLevel : int { kInfo = 0, kWarning = 1, kError = 2, kOff = 3 };

// Lines below `level` are dropped (tests use kWarning or kOff to stay quiet).
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

void LogLine(LogLevel level, absl::string_view message);

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
