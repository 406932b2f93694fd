// Transport security and identity of a histd client: TLS (trusting given CAs), a client
// certificate for mutual TLS, and a bearer token sent on every call.
//
//   LoadClientSecurity(files)   reads the PEM files and the token (token_file, else the
//                               HISTD_TOKEN environment variable); FAILED_PRECONDITION
//                               naming a file that cannot be read.
//   CreateChannel(target, security, args)  a channel with TLS when security.tls (system
//                               roots when ca_pem is empty), plaintext otherwise; the token
//                               goes as "authorization: Bearer <token>" metadata on every
//                               call, also over plaintext (a loopback daemon).
//   FailureKind(status)         what a failed call's status says went wrong, for messages:
//                               "connection" (UNAVAILABLE: nothing answered, or the
//                               connection closed: also a plaintext client on a TLS port),
//                               "certificate" (the TLS handshake failed: a CA or client
//                               certificate problem), "credentials" (UNAUTHENTICATED: no or
//                               unknown token or certificate), "role" (PERMISSION_DENIED);
//                               nullptr for anything else.
// Thread safety: plain functions; a channel is thread-safe.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/channel.h>
#include <grpcpp/support/channel_arguments.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace histd::client {

struct ClientSecurity {
  bool tls = false;
  std::string ca_pem;    // CAs that may sign the server's certificate; empty: system roots
  std::string cert_pem;  // client certificate chain and key (mutual TLS); both or neither
  std::string key_pem;
  std::string server_name;  // name checked against the server's certificate; empty: the target's host
  std::string token;        // bearer token; empty: none
};

struct ClientSecurityFiles {
  bool tls = false;  // also implied by any of the tls_ paths
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;
  std::string token_file;  // empty: $HISTD_TOKEN, when set
};

absl::StatusOr<ClientSecurity> LoadClientSecurity(const ClientSecurityFiles& files);

std::shared_ptr<grpc::Channel> CreateChannel(const std::string& target,
                                             const ClientSecurity& security,
                                             grpc::ChannelArguments args);

const char* FailureKind(const absl::Status& status);

}  // namespace histd::client
