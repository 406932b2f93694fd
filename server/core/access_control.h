// Who may call what: identities from a tokens file, three roles, and the method table.
//
// The tokens file (--auth_tokens_file) holds one identity per line; '#' starts a comment:
//   sha256:<hex SHA-256 of the bearer token> <name> <role>
//   subject:<client certificate CN or SAN>    <name> <role>
// Roles, each allowed what the one before is: reader (list, info, stats, queries, renders,
// watches, compute),
// producer (reader, ingest and create), admin (every method: delete, reset, merge,
// read-and-reset, snapshots). Tokens are stored only as digests; a presented token is hashed
// (OpenSSL's SHA-256) and compared with every entry in constant time. A subject may contain
// spaces: the last two words of a line are the name and the role.
//
//   ParseIdentityTable(text)   the table, or INVALID_ARGUMENT naming the line.
//   RequiredRole(method)       the least role that may call a full method name
//                              ("/histd.v1.Histograms/DeleteHistogram"); nullopt for a
//                              method the table does not know (refused: fail closed).
//   AccessControl              the table re-read from its file when the file changes
//                              (checked every reload_interval by a thread of its own; a file
//                              that no longer parses keeps the last good table and is
//                              logged), Authorize(credentials, method) -> the identity or
//                              UNAUTHENTICATED / PERMISSION_DENIED with a message naming the
//                              method and role, and the refusal counters. Each refusal is
//                              logged once per (client host, identity, code).
//
// Thread safety: AccessControl is safe to call from any thread; the table is swapped whole.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace histd::server {

enum class Role { kReader = 0, kProducer = 1, kAdmin = 2 };
const char* RoleName(Role role);

inline constexpr size_t kTokenDigestBytes = 32;  // SHA-256

struct Identity {
  std::string name;
  Role role = Role::kReader;
};

struct IdentityTable {
  struct TokenEntry {
    unsigned char digest[kTokenDigestBytes];
    Identity identity;
  };
  struct SubjectEntry {
    std::string subject;
    Identity identity;
  };
  std::vector<TokenEntry> tokens;
  std::vector<SubjectEntry> subjects;
};

absl::StatusOr<IdentityTable> ParseIdentityTable(absl::string_view text);

// The SHA-256 of `token` as 64 lowercase hex digits (what a tokens file line holds).
std::string TokenDigestHex(absl::string_view token);

std::optional<Role> RequiredRole(absl::string_view method);
// Every method RequiredRole knows, for tests and documentation.
std::vector<std::string> KnownMethods();

// What a call presents. `bearer_token` is the value after "Bearer " (nullopt: no
// authorization metadata; over HTTP also the password of Basic authentication);
// `subjects` the verified client certificate's CN and SANs.
struct Credentials {
  std::optional<std::string> bearer_token;
  std::vector<std::string> subjects;
  std::string peer;  // "ipv4:10.0.0.7:53412", for the log
};

struct RefusalCounts {
  uint64_t unauthenticated = 0;
  uint64_t permission_denied = 0;
};

class AccessControl {
 public:
  // Reads and parses `path` (FAILED_PRECONDITION naming the file when it cannot be read,
  // INVALID_ARGUMENT naming the line when it does not parse), then watches it.
  static absl::StatusOr<std::unique_ptr<AccessControl>> Create(std::string path,
                                                               absl::Duration reload_interval);
  ~AccessControl();
  AccessControl(const AccessControl&) = delete;
  AccessControl& operator=(const AccessControl&) = delete;

  absl::StatusOr<Identity> Authorize(const Credentials& credentials, absl::string_view method);
  // The same for what the method table does not list (the HTTP endpoint's pages): `what`
  // names it in messages; nullopt `required` refuses every identity.
  absl::StatusOr<Identity> AuthorizeRole(const Credentials& credentials, absl::string_view what,
                                         std::optional<Role> required);
  RefusalCounts refusals() const;

 private:
  AccessControl(std::string path, absl::Duration reload_interval);
  std::shared_ptr<const IdentityTable> table() const;
  absl::Status Reload();
  void Watch();
  absl::Status Refuse(const Credentials& credentials, absl::string_view who, absl::Status status);

  const std::string path_;
  const absl::Duration reload_interval_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const IdentityTable> table_ ABSL_GUARDED_BY(mu_);
  // What the file looked like when last read: (mtime ns, size, inode).
  int64_t file_mtime_ns_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t file_size_ ABSL_GUARDED_BY(mu_) = -1;
  uint64_t file_inode_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Mutex log_mu_;
  // Refusals already logged; at most kMaxLoggedRefusals, then one line saying logging stops.
  absl::flat_hash_set<std::string> logged_ ABSL_GUARDED_BY(log_mu_);
  std::atomic<uint64_t> unauthenticated_{0};
  std::atomic<uint64_t> permission_denied_{0};
  absl::Notification stop_;
  std::thread watcher_;
};

}  // namespace histd::server
