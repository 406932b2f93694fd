#include "server/core/sample_payload.h"

#include <cstring>
#include <utility>

namespace histd::server {

namespace {

class StringStorage : public PayloadStorage {
 public:
  explicit StringStorage(std::string bytes) : bytes_(std::move(bytes)) {}
  BytePiece piece() const {
    return {reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size()};
  }

 private:
  std::string bytes_;
};

}  // namespace

SamplePayload::SamplePayload(std::string bytes) {
  auto storage = std::make_unique<StringStorage>(std::move(bytes));
  const BytePiece piece = storage->piece();
  size_ = piece.size;
  if (size_ > 0) spans_.push_back(piece);
  storage_ = std::move(storage);
}

SamplePayload::SamplePayload(std::unique_ptr<PayloadStorage> storage,
                             const std::vector<BytePiece>& pieces, size_t offset, size_t size)
    : storage_(std::move(storage)), size_(size) {
  size_t left = size;
  for (const BytePiece& piece : pieces) {
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
