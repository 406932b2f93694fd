#include "client/watch_stream.h"

#include "absl/strings/str_cat.h"
#include "client/dtype.h"
#include "client/grpc_status.h"

namespace histd::client {

WatchStream::WatchStream(histd::v1::Query::Stub& stub, const histd::v1::WatchRequest& request,
                         bool wait_for_ready) {
  context_.set_wait_for_ready(wait_for_ready);
  reader_ = stub.Watch(&context_, request);
}

WatchStream::~WatchStream() {
  if (!finished_) {
    context_.TryCancel();
    (void)Finish();
  }
}

bool WatchStream::Next(histd::v1::WatchUpdate* update) {
  if (!problem_.ok() || finished_) return false;
  if (!reader_->Read(update)) return false;
  const uint64_t element = update->dtype() == histd::v1::DTYPE_U32  ? 4
                           : update->dtype() == histd::v1::DTYPE_U8 ? 1
                                                                    : 0;
  absl::StatusOr<uint64_t> bytes = ArrayByteLength(update->dtype(), update->rows(), update->cols());
  if (element == 0 || !bytes.ok() || *bytes != update->data().size()) {
    problem_ = absl::InternalError(absl::StrCat(
        "watch update ", update->sequence(), ": ", update->rows(), " x ", update->cols(), " ",
        DTypeShortName(update->dtype()), " with ", update->data().size(), " data bytes"));
  } else if (update->sequence() <= last_sequence_) {
    problem_ = absl::InternalError(absl::StrCat("watch update ", update->sequence(),
                                                " after update ", last_sequence_));
  }
  if (!problem_.ok()) {
    context_.TryCancel();
    return false;
  }
  last_sequence_ = update->sequence();
  return true;
}

void WatchStream::Cancel() { context_.TryCancel(); }

absl::Status WatchStream::Finish() {
  if (!finished_) {
    finished_ = true;
    status_ = FromGrpcStatus(reader_->Finish());
  }
  return problem_.ok() ? status_ : problem_;
}

}  // namespace histd::client
