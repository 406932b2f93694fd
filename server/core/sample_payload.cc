#include "server/core/sample_payload.h"

#include <cstring>
#include <utility>

namespace histd::server {

namespace {

class StringStorage : public PayloadStorage {
 public:
  explicit StringStorage(std::string bytes) : bytes_(std::move(bytes)) {}
  size_t piece_count() const override { return 1; }
  BytePiece piece(size_t) const override {
    return {reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size()};
  }

 private:
  std::string bytes_;
};

}  // namespace

SamplePayload::SamplePayload(std::string bytes) {
  const size_t size = bytes.size();
  *this = SamplePayload(std::make_unique<StringStorage>(std::move(bytes)), 0, size);
}

SamplePayload::SamplePayload(std::unique_ptr<PayloadStorage> storage, size_t offset, size_t size)
    : storage_(std::move(storage)), size_(size) {
  size_t left = size;
  for (size_t i = 0; i < storage_->piece_count(); ++i) {
    const BytePiece piece = storage_->piece(i);
    if (left == 0) break;
    if (offset >= piece.size) {
      offset -= piece.size;
      continue;
    }
    const size_t n = piece.size - offset < left ? piece.size - offset : left;
    spans_.push_back({piece.data + offset, n});
    left -= n;
    offset = 0;
  }
  size_ -= left;  // only when the contract was broken: never claim bytes that are not there
}

void SamplePayload::CopyTo(size_t offset, size_t bytes, uint8_t* dst) const {
  ForEachSpan(offset, bytes, [&dst](const uint8_t* data, size_t n) {
    std::memcpy(dst, data, n);
    dst += n;
    return true;
  });
}

std::string SamplePayload::ToString() const {
  std::string out(size_, '\0');
  CopyTo(0, size_, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

}  // namespace histd::server
