#include "server/sample_payload.h"

#include <cstring>
#include <utility>

namespace histd::server {

SamplePayload::SamplePayload(std::string bytes)
    : owned_(std::make_unique<std::string>(std::move(bytes))), size_(owned_->size()) {
  if (size_ > 0) spans_.push_back({reinterpret_cast<const uint8_t*>(owned_->data()), size_});
}

SamplePayload::SamplePayload(std::vector<grpc::Slice> slices, size_t offset, size_t size)
    : slices_(std::move(slices)), size_(size) {
  size_t left = size;
  for (const grpc::Slice& slice : slices_) {
    if (left == 0) break;
    if (offset >= slice.size()) {
      offset -= slice.size();
      continue;
    }
    const size_t n = slice.size() - offset < left ? slice.size() - offset : left;
    spans_.push_back({slice.begin() + offset, n});
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
