#include "server/core/access_control.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/thread_name.h"
#include "server/core/log.h"

namespace histd::server {
namespace {

constexpr size_t kMaxLoggedRefusals = 4096;

struct MethodRole {
  const char* method;
  Role role;
};

// Every method of every histd.v1 service. A method missing here is refused to everyone;
// tests/server/access_control_test.cc checks this table against the proto descriptors.
constexpr std::array<MethodRole, 20> kMethodRoles = {{
    {"/histd.v1.Histograms/ListHistograms", Role::kReader},
    {"/histd.v1.Histograms/GetHistogramInfo", Role::kReader},
    {"/histd.v1.Histograms/GetServerStats", Role::kReader},
    {"/histd.v1.Histograms/CreateHistogram", Role::kProducer},
    {"/histd.v1.Histograms/DeleteHistogram", Role::kAdmin},
    {"/histd.v1.Histograms/ResetHistogram", Role::kAdmin},
    {"/histd.v1.Histograms/MergeHistogram", Role::kAdmin},
    {"/histd.v1.Histograms/WriteSnapshot", Role::kAdmin},
    {"/histd.v1.Histograms/ReadAndResetHistogram", Role::kAdmin},
    {"/histd.v1.Ingest/Ingest", Role::kProducer},
    {"/histd.v1.Query/Query", Role::kReader},
    {"/histd.v1.Query/Project", Role::kReader},
    {"/histd.v1.Query/Cdf", Role::kReader},
    {"/histd.v1.Query/Quantiles", Role::kReader},
    {"/histd.v1.Query/Render", Role::kReader},
    {"/histd.v1.Query/Watch", Role::kReader},
    {"/histd.v1.Compute/Reduce", Role::kReader},
    {"/histd.v1.Compute/Scan", Role::kReader},
    {"/histd.v1.Compute/Transpose", Role::kReader},
    {"/histd.v1.Compute/Matmul", Role::kReader},
}};

std::optional<Role> ParseRole(absl::string_view text) {
  if (text == "reader") return Role::kReader;
  if (text == "producer") return Role::kProducer;
  if (text == "admin") return Role::kAdmin;
  return std::nullopt;
}

void Sha256(absl::string_view text, unsigned char out[kTokenDigestBytes]) {
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), out);
}

// "ipv4:10.0.0.7:53412" -> "ipv4:10.0.0.7": one client, whatever its connection's port.
std::string PeerHost(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  const size_t first = peer.find(':');
  return colon == std::string::npos || colon == first ? peer : peer.substr(0, colon);
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kReader: return "reader";
    case Role::kProducer: return "producer";
    case Role::kAdmin: return "admin";
  }
  return "unknown";
}

std::string TokenDigestHex(absl::string_view token) {
  unsigned char digest[kTokenDigestBytes];
  Sha256(token, digest);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

absl::StatusOr<IdentityTable> ParseIdentityTable(absl::string_view text) {
  IdentityTable table;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty()) continue;
    const auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "tokens file line %d: %s (want 'sha256:<64 hex digits> <name> <role>' or "
          "'subject:<certificate CN or SAN> <name> <role>', role reader, producer or admin)",
          line_number, why));
    };
    if (words.size() < 3) return bad("fewer than three fields");
    Identity identity;
    identity.name = std::string(words[words.size() - 2]);
    const std::optional<Role> role = ParseRole(words.back());
    if (!role) return bad(absl::StrCat("unknown role '", words.back(), "'"));
    identity.role = *role;
    words.resize(words.size() - 2);
    const std::string key = absl::StrJoin(words, " ");
    if (absl::StartsWith(key, "sha256:")) {
      const absl::string_view hex = absl::string_view(key).substr(7);
      if (hex.size() != 2 * kTokenDigestBytes ||
          !std::all_of(hex.begin(), hex.end(), [](char c) { return absl::ascii_isxdigit(c); })) {
        return bad("sha256: wants 64 hex digits (sha256sum of the token)");
      }
      IdentityTable::TokenEntry entry;
      const std::string bytes = absl::HexStringToBytes(hex);
      std::memcpy(entry.digest, bytes.data(), kTokenDigestBytes);
      entry.identity = std::move(identity);
      table.tokens.push_back(std::move(entry));
    } else if (absl::StartsWith(key, "subject:") && key.size() > 8) {
      table.subjects.push_back({key.substr(8), std::move(identity)});
    } else {
      return bad(absl::StrCat("'", key.substr(0, 16), "' is neither sha256: nor subject:"));
    }
  }
  return table;
}

std::optional<Role> RequiredRole(absl::string_view method) {
  for (const MethodRole& entry : kMethodRoles) {
    if (method == entry.method) return entry.role;
  }
  return std::nullopt;
}

std::vector<std::string> KnownMethods() {
  std::vector<std::string> out;
  for (const MethodRole& entry : kMethodRoles) out.push_back(entry.method);
  return out;
}

AccessControl::AccessControl(std::string path, absl::Duration reload_interval)
    : path_(std::move(path)), reload_interval_(reload_interval) {}

absl::StatusOr<std::unique_ptr<AccessControl>> AccessControl::Create(
    std::string path, absl::Duration reload_interval) {
  std::unique_ptr<AccessControl> access(new AccessControl(std::move(path), reload_interval));
  if (absl::Status s = access->Reload(); !s.ok()) return s;
  const std::shared_ptr<const IdentityTable> table = access->table();
  LogInfo("identities_loaded", {{"path", access->path_},
                                {"tokens", table->tokens.size()},
                                {"certificate_subjects", table->subjects.size()}});
  AccessControl* const self = access.get();
  access->watcher_ = std::thread([self] { self->Watch(); });
  return access;
}

AccessControl::~AccessControl() {
  stop_.Notify();
  if (watcher_.joinable()) watcher_.join();
}

std::shared_ptr<const IdentityTable> AccessControl::table() const {
  absl::MutexLock lock(&mu_);
  return table_;
}

absl::Status AccessControl::Reload() {
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("--auth_tokens_file=%s: %s", path_, std::strerror(errno)));
  }
  const int64_t mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  {
    absl::MutexLock lock(&mu_);
    if (table_ != nullptr && mtime_ns == file_mtime_ns_ && st.st_size == file_size_ &&
        st.st_ino == file_inode_) {
      return absl::OkStatus();  // unchanged
    }
    // Recorded before parsing, so that a bad file is reported once, not every interval.
    file_mtime_ns_ = mtime_ns;
    file_size_ = st.st_size;
    file_inode_ = st.st_ino;
  }
  std::ifstream in(path_);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("--auth_tokens_file=%s: cannot be read", path_));
  }
  absl::StatusOr<IdentityTable> parsed = ParseIdentityTable(text.str());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--auth_tokens_file=%s: %s", path_, parsed.status().message()));
  }
  auto table = std::make_shared<const IdentityTable>(*std::move(parsed));
  absl::MutexLock lock(&mu_);
  table_ = std::move(table);
  return absl::OkStatus();
}

void AccessControl::Watch() {
  NameCurrentThread("histd-tokens");
  while (!stop_.WaitForNotificationWithTimeout(reload_interval_)) {
    const std::shared_ptr<const IdentityTable> before = table();
    if (absl::Status s = Reload(); !s.ok()) {
      LogError("identities_reload_failed",
               {{"path", path_}, {"status", s.ToString()}, {"kept", "the previous identities"}});
    } else if (table() != before) {
      LogInfo("identities_reloaded", {{"path", path_},
                                      {"tokens", table()->tokens.size()},
                                      {"certificate_subjects", table()->subjects.size()}});
    }
  }
}

absl::StatusOr<Identity> AccessControl::Authorize(const Credentials& credentials,
                                                  absl::string_view method) {
  return AuthorizeRole(credentials, method, RequiredRole(method));
}

absl::StatusOr<Identity> AccessControl::AuthorizeRole(const Credentials& credentials,
                                                      absl::string_view method,
                                                      std::optional<Role> required) {
  const std::shared_ptr<const IdentityTable> identities = table();
  const Identity* found = nullptr;
  std::string who;
  if (credentials.bearer_token.has_value()) {
    unsigned char digest[kTokenDigestBytes];
    Sha256(*credentials.bearer_token, digest);
    // Every entry is compared, in constant time, whichever matches.
    for (const IdentityTable::TokenEntry& entry : identities->tokens) {
      if (CRYPTO_memcmp(digest, entry.digest, kTokenDigestBytes) == 0) found = &entry.identity;
    }
    if (found == nullptr) {
      return Refuse(credentials, "unknown token",
                    absl::UnauthenticatedError(
                        "the bearer token is not in the server's tokens file (revoked, or "
                        "mistyped)"));
    }
  } else {
    for (const std::string& subject : credentials.subjects) {
      for (const IdentityTable::SubjectEntry& entry : identities->subjects) {
        if (found == nullptr && subject == entry.subject) found = &entry.identity;
      }
    }
    if (found == nullptr) {
      if (credentials.subjects.empty()) {
        return Refuse(credentials, "no credentials",
                      absl::UnauthenticatedError(
                          "no credentials: send 'authorization: Bearer <token>' metadata (histctl "
                          "--token_file or $HISTD_TOKEN) or a client certificate listed in the "
                          "server's tokens file"));
      }
      return Refuse(credentials, absl::StrCat("certificate ", credentials.subjects.front()),
                    absl::UnauthenticatedError(absl::StrCat(
                        "the client certificate (", absl::StrJoin(credentials.subjects, ", "),
                        ") is not listed in the server's tokens file")));
    }
  }
  if (!required || static_cast<int>(found->role) < static_cast<int>(*required)) {
    return Refuse(credentials, found->name,
                  absl::PermissionDeniedError(absl::StrFormat(
                      "%s: identity '%s' has role %s, which may not call it (it needs %s)",
                      method, found->name, RoleName(found->role),
                      required ? RoleName(*required) : "a role no identity has")));
  }
  return *found;
}

absl::Status AccessControl::Refuse(const Credentials& credentials, absl::string_view who,
                                   absl::Status status) {
  (status.code() == absl::StatusCode::kUnauthenticated ? unauthenticated_ : permission_denied_)
      .fetch_add(1, std::memory_order_relaxed);
  const std::string host = PeerHost(credentials.peer);
  const std::string key = absl::StrCat(host, "\n", who, "\n", static_cast<int>(status.code()));
  bool log = false;
  bool last = false;
  {
    absl::MutexLock lock(&log_mu_);
    if (logged_.size() < kMaxLoggedRefusals) {
      log = logged_.insert(key).second;
      last = log && logged_.size() == kMaxLoggedRefusals;
    }
  }
  if (log) {
    // The first refusal of this client host, identity and code; later ones are counted.
    LogWarning("access_refused", {{"code", absl::StatusCodeToString(status.code())},
                                  {"peer", host},
                                  {"identity", who},
                                  {"message", status.message()}});
  }
  if (last) {
    LogWarning("access_refusal_log_full", {{"distinct_refusals_logged", kMaxLoggedRefusals}});
  }
  return status;
}

RefusalCounts AccessControl::refusals() const {
  return {unauthenticated_.load(std::memory_order_relaxed),
          permission_denied_.load(std::memory_order_relaxed)};
}

}  // namespace histd::server
