// Turns gRPC's answer to an unparsable request into INVALID_ARGUMENT with a message.
//
// gRPC's callback unary and server-streaming handlers answer a request whose bytes do not
// parse as the method's request message with UNIMPLEMENTED and no message, which reads as
// "this server lacks the method". This interceptor watches each such call: when the request
// arrived and could not be deserialized, the status sent is replaced by INVALID_ARGUMENT
// naming the method. Other statuses pass unchanged. The ingest stream decodes its own
// messages (server/grpc/ingest_request_decoder.h) and is not intercepted, so it pays nothing.
//
// Thread safety: gRPC runs one interceptor's hooks for a call one at a time.
#pragma once

#include <memory>

#include <grpcpp/support/server_interceptor.h>

namespace histd::server {

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeParseErrorInterceptorFactory();

}  // namespace histd::server
