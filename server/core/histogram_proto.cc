#include "server/core/histogram_proto.h"

#include "absl/strings/str_format.h"

namespace histd::server {

absl::StatusOr<HistogramSpec> SpecFromProto(const v1::HistogramSpec& proto) {
  // proto3 cannot tell an unset cap from 0: unset means the default, 255.
  const uint32_t cap = proto.cap() == 0 ? 255 : proto.cap();
  if (cap > 255) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cap must be in 1..255 (0 or unset: 255), got %d", proto.cap()));
  }
  HistogramSpec spec;
  spec.name = proto.name();
  spec.shape.rows = proto.rows();
  spec.shape.cols = proto.cols();
  spec.shape.cap = static_cast<uint8_t>(cap);
  if (proto.has_x_axis()) spec.x_axis = AxisRange{proto.x_axis().lo(), proto.x_axis().hi()};
  if (proto.has_y_axis()) spec.y_axis = AxisRange{proto.y_axis().lo(), proto.y_axis().hi()};
  return spec;
}

void SpecToProto(const HistogramSpec& spec, v1::HistogramSpec* proto) {
  proto->set_name(spec.name);
  proto->set_rows(spec.shape.rows);
  proto->set_cols(spec.shape.cols);
  proto->set_cap(spec.shape.cap);
  if (spec.x_axis) {
    proto->mutable_x_axis()->set_lo(spec.x_axis->lo);
    proto->mutable_x_axis()->set_hi(spec.x_axis->hi);
  }
  if (spec.y_axis) {
    proto->mutable_y_axis()->set_lo(spec.y_axis->lo);
    proto->mutable_y_axis()->set_hi(spec.y_axis->hi);
  }
}

void CountersToProto(const IngestCounters& c, v1::HistogramInfo* info) {
  info->set_samples_applied(c.samples_applied);
  info->set_samples_rejected(c.samples_rejected);
  info->set_messages_applied(c.messages_applied);
  info->set_messages_rejected(c.messages_rejected);
  info->set_x_underflow(c.x_underflow);
  info->set_x_overflow(c.x_overflow);
  info->set_y_underflow(c.y_underflow);
  info->set_y_overflow(c.y_overflow);
  info->set_samples_outside(c.samples_outside);
  info->set_x_nan(c.x_nan);
  info->set_y_nan(c.y_nan);
}

void EntryToInfo(const HistogramEntry& entry, const std::string& device, v1::HistogramInfo* info) {
  SpecToProto(entry.spec(), info->mutable_spec());
  CountersToProto(entry.counters(), info);
  info->set_bytes_used(entry.storage().bytes_used());
  info->set_device(device);
}

IngestCounters CountersFromProto(const v1::HistogramInfo& info) {
  IngestCounters c;
  c.samples_applied = info.samples_applied();
  c.samples_rejected = info.samples_rejected();
  c.messages_applied = info.messages_applied();
  c.messages_rejected = info.messages_rejected();
  c.x_underflow = info.x_underflow();
  c.x_overflow = info.x_overflow();
  c.y_underflow = info.y_underflow();
  c.y_overflow = info.y_overflow();
  c.samples_outside = info.samples_outside();
  c.x_nan = info.x_nan();
  c.y_nan = info.y_nan();
  return c;
}

}  // namespace histd::server
