#include "tests/fuzz/proto_mutator.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "google/protobuf/descriptor.h"

namespace histd::fuzz {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr uint64_t kInterestingU64[] = {
    0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 100, 127, 128, 129, 255, 256, 257,
    1000, 1023, 1024, 1025, 4095, 4096, 4097, 65535, 65536, 65537, (1u << 20), (1u << 24),
    0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu, uint64_t{1} << 32, (uint64_t{1} << 32) + 1,
    uint64_t{1} << 40, uint64_t{1} << 61, uint64_t{1} << 62, (uint64_t{1} << 62) + 1,
    uint64_t{1} << 63, 0x7fffffffffffffffu, 0xfffffffffffffffeu, 0xffffffffffffffffu};

constexpr double kInterestingDouble[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, 0.25, 0.999, 1.5, 2.0, 3.0, 10.0, 255.0, 256.0, 1e-30, 1e30, 1e300,
    std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
    -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min(),
    std::numeric_limits<double>::min(), std::numeric_limits<double>::max(),
    std::numeric_limits<double>::lowest(), std::numeric_limits<double>::epsilon(),
    std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
    std::numeric_limits<float>::lowest(), 16777216.0, 16777217.0};

// Replaces bytes that are not valid UTF-8 with '?', so a proto3 string field still parses.
void RepairUtf8(std::string* s) {
  size_t i = 0;
  while (i < s->size()) {
    const auto c = static_cast<unsigned char>((*s)[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = n > 0 && i + n <= s->size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>((*s)[i + k]) >> 6) == 2;
    if (ok && n > 1) {
      // Overlong forms, surrogates and code points above U+10FFFF are invalid too.
      uint32_t cp = c & (0xff >> (n + 1));
      for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>((*s)[i + k]) & 0x3f);
      static constexpr uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kLeast[n] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
    }
    if (!ok) {
      (*s)[i] = '?';
      n = 1;
    }
    i += n;
  }
}

// A double as float, out-of-range values as the infinity of their sign (no UB on the cast).
float ToFloat(double d) {
  if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
    return d > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  }
  return static_cast<float>(d);
}

class Mutator {
 public:
  Mutator(unsigned seed, size_t max_size, const std::vector<std::string>& words)
      : rng_(seed), max_size_(max_size), words_(words) {}

  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool OneIn(uint64_t n) { return Below(n) == 0; }

  void Mutate(Message* m) {
    strings_.clear();
    CollectStrings(*m);
    MutateMessage(m, 0);
  }

 private:
  void CollectStrings(const Message& m) {
    const Reflection* r = m.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    r->ListFields(m, &fields);
    for (const FieldDescriptor* f : fields) {
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING && f->type() == FieldDescriptor::TYPE_STRING) {
        if (f->is_repeated()) {
          for (int i = 0; i < r->FieldSize(m, f); ++i) strings_.push_back(r->GetRepeatedString(m, f, i));
        } else {
          strings_.push_back(r->GetString(m, f));
        }
      } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        if (f->is_repeated()) {
          for (int i = 0; i < r->FieldSize(m, f); ++i) CollectStrings(r->GetRepeatedMessage(m, f, i));
        } else {
          CollectStrings(r->GetMessage(m, f));
        }
      }
    }
  }

  // Returns false when the message has no field to mutate.
  bool MutateMessage(Message* m, int depth) {
    const Descriptor* d = m->GetDescriptor();
    const Reflection* r = m->GetReflection();
    if (d->field_count() == 0 || depth > 16) return false;
    const FieldDescriptor* f = d->field(static_cast<int>(Below(d->field_count())));
    if (f->is_repeated()) {
      MutateRepeated(m, f, depth);
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!r->HasField(*m, f)) {
        Message* sub = r->MutableMessage(m, f);
        if (OneIn(2)) MutateMessage(sub, depth + 1);
      } else if (OneIn(8)) {
        r->ClearField(m, f);
      } else if (!MutateMessage(r->MutableMessage(m, f), depth + 1)) {
        r->ClearField(m, f);
      }
    } else {
      SetScalar(m, f, -1);
    }
    return true;
  }

  void MutateRepeated(Message* m, const FieldDescriptor* f, int depth) {
    const Reflection* r = m->GetReflection();
    const int n = r->FieldSize(*m, f);
    const bool is_message = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    switch (n == 0 ? 0 : Below(5)) {
      case 0:  // add an element
        if (is_message) {
          Message* sub = r->AddMessage(m, f);
          MutateMessage(sub, depth + 1);
        } else {
          AddScalar(m, f);
        }
        break;
      case 1: {  // remove one
        r->SwapElements(m, f, static_cast<int>(Below(n)), n - 1);
        r->RemoveLast(m, f);
        break;
      }
      case 2: {  // duplicate one
        const int i = static_cast<int>(Below(n));
        if (is_message) {
          r->AddMessage(m, f)->CopyFrom(r->GetRepeatedMessage(*m, f, i));
          r->SwapElements(m, f, n, static_cast<int>(Below(n + 1)));
        } else {
          AddScalar(m, f);
        }
        break;
      }
      case 3:  // swap two
        r->SwapElements(m, f, static_cast<int>(Below(n)), static_cast<int>(Below(n)));
        break;
      default: {  // mutate one
        const int i = static_cast<int>(Below(n));
        if (is_message) {
          MutateMessage(r->MutableRepeatedMessage(m, f, i), depth + 1);
        } else {
          SetScalar(m, f, i);
        }
        break;
      }
    }
  }

  uint64_t NewInteger(uint64_t current) {
    switch (Below(5)) {
      case 0:
      case 1:
        return kInterestingU64[Below(sizeof(kInterestingU64) / sizeof(kInterestingU64[0]))];
      case 2:
        return current + Below(9) - 4;
      case 3:
        return current ^ (uint64_t{1} << Below(64));
      default:
        return (uint64_t{rng_()} << 32 | rng_()) >> Below(64);
    }
  }

  double NewDouble(double current) {
    switch (Below(5)) {
      case 0:
      case 1:
        return kInterestingDouble[Below(sizeof(kInterestingDouble) / sizeof(kInterestingDouble[0]))];
      case 2:
        return OneIn(2) ? current * 2 : -current;
      case 3:
        return std::nextafter(current, OneIn(2) ? INFINITY : -INFINITY);
      default: {
        const uint64_t bits = uint64_t{rng_()} << 32 | rng_();
        double d;
        std::memcpy(&d, &bits, 8);
        return d;
      }
    }
  }

  int NewEnum(const EnumDescriptor* e, int current) {
    if (OneIn(6)) {
      constexpr int kUnnamed[] = {-1, 99, 0x7fffffff, std::numeric_limits<int>::min()};
      return kUnnamed[Below(4)];
    }
    if (OneIn(6)) return static_cast<int>(static_cast<uint32_t>(current) + 1u);
    return e->value(static_cast<int>(Below(e->value_count())))->number();
  }

  std::string NewString(const FieldDescriptor* f, std::string current) {
    switch (Below(6)) {
      case 0:
        if (!strings_.empty()) {
          current = strings_[Below(strings_.size())];
          break;
        }
        [[fallthrough]];
      case 1:
        if (!words_.empty()) {
          current = words_[Below(words_.size())];
          break;
        }
        [[fallthrough]];
      case 2: {  // a new length, the bytes repeated
        constexpr size_t kLengths[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 24, 32, 64, 128, 129, 256, 1024};
        size_t len = OneIn(3) ? current.size() + Below(9) - 4 : kLengths[Below(sizeof(kLengths) / sizeof(kLengths[0]))];
        if (len > max_size_) len = max_size_;
        const std::string old = current.empty() ? std::string(1, static_cast<char>(rng_())) : current;
        current.resize(len);
        for (size_t i = 0; i < len; ++i) current[i] = old[i % old.size()];
        break;
      }
      default: {  // libFuzzer's byte mutations (dictionary and compare operands included)
        size_t cap = current.size() * 2 + 64;
        if (cap > max_size_) cap = max_size_;
        if (current.size() > cap) current.resize(cap);
        std::string buf = current;
        buf.resize(cap);
        const size_t n = LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(buf.data()), current.size(), cap);
        buf.resize(n);
        current = std::move(buf);
        break;
      }
    }
    if (f->type() == FieldDescriptor::TYPE_STRING) RepairUtf8(&current);
    return current;
  }

  // Sets field f of m (element i of a repeated field, or the singular field when i < 0).
  void SetScalar(Message* m, const FieldDescriptor* f, int i) {
    const Reflection* r = m->GetReflection();
    const bool rep = i >= 0;
    switch (f->cpp_type()) {
#define HISTD_SET_INT(CPPTYPE, Name, T)                                                   \
  case FieldDescriptor::CPPTYPE: {                                                        \
    const T v = static_cast<T>(NewInteger(static_cast<uint64_t>(                         \
        rep ? r->GetRepeated##Name(*m, f, i) : r->Get##Name(*m, f))));                    \
    rep ? r->SetRepeated##Name(m, f, i, v) : r->Set##Name(m, f, v);                      \
    break;                                                                                \
  }
      HISTD_SET_INT(CPPTYPE_INT32, Int32, int32_t)
      HISTD_SET_INT(CPPTYPE_INT64, Int64, int64_t)
      HISTD_SET_INT(CPPTYPE_UINT32, UInt32, uint32_t)
      HISTD_SET_INT(CPPTYPE_UINT64, UInt64, uint64_t)
#undef HISTD_SET_INT
      case FieldDescriptor::CPPTYPE_DOUBLE: {
        const double v = NewDouble(rep ? r->GetRepeatedDouble(*m, f, i) : r->GetDouble(*m, f));
        rep ? r->SetRepeatedDouble(m, f, i, v) : r->SetDouble(m, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_FLOAT: {
        const float v = ToFloat(NewDouble(rep ? r->GetRepeatedFloat(*m, f, i) : r->GetFloat(*m, f)));
        rep ? r->SetRepeatedFloat(m, f, i, v) : r->SetFloat(m, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_BOOL: {
        const bool v = !(rep ? r->GetRepeatedBool(*m, f, i) : r->GetBool(*m, f));
        rep ? r->SetRepeatedBool(m, f, i, v) : r->SetBool(m, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int v = NewEnum(f->enum_type(), rep ? r->GetRepeatedEnumValue(*m, f, i) : r->GetEnumValue(*m, f));
        rep ? r->SetRepeatedEnumValue(m, f, i, v) : r->SetEnumValue(m, f, v);
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string v = NewString(f, rep ? r->GetRepeatedString(*m, f, i) : r->GetString(*m, f));
        rep ? r->SetRepeatedString(m, f, i, std::move(v)) : r->SetString(m, f, std::move(v));
        break;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        break;
    }
  }

  void AddScalar(Message* m, const FieldDescriptor* f) {
    const Reflection* r = m->GetReflection();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: r->AddInt32(m, f, 0); break;
      case FieldDescriptor::CPPTYPE_INT64: r->AddInt64(m, f, 0); break;
      case FieldDescriptor::CPPTYPE_UINT32: r->AddUInt32(m, f, 0); break;
      case FieldDescriptor::CPPTYPE_UINT64: r->AddUInt64(m, f, 0); break;
      case FieldDescriptor::CPPTYPE_DOUBLE: r->AddDouble(m, f, 0.5); break;
      case FieldDescriptor::CPPTYPE_FLOAT: r->AddFloat(m, f, 0.5f); break;
      case FieldDescriptor::CPPTYPE_BOOL: r->AddBool(m, f, true); break;
      case FieldDescriptor::CPPTYPE_ENUM: r->AddEnumValue(m, f, 0); break;
      case FieldDescriptor::CPPTYPE_STRING: r->AddString(m, f, ""); break;
      case FieldDescriptor::CPPTYPE_MESSAGE: return;
    }
    SetScalar(m, f, r->FieldSize(*m, f) - 1);
  }

  std::minstd_rand rng_;
  const size_t max_size_;
  const std::vector<std::string>& words_;
  std::vector<std::string> strings_;
};

size_t WriteOut(const Message& m, uint8_t* out, size_t max_size) {
  const size_t n = m.ByteSizeLong();
  if (n > max_size) return 0;
  m.SerializeToArray(out, static_cast<int>(n));
  return n;
}

}  // namespace

size_t MutateProto(Message* scratch, uint8_t* data, size_t size, size_t max_size, unsigned seed,
                   const std::vector<std::string>& words) {
  Mutator mutator(seed, max_size, words);
  // Now and then: libFuzzer's byte mutations of the whole input, kept when it still parses.
  if (mutator.OneIn(16)) {
    std::string copy(reinterpret_cast<const char*>(data), size);
    const size_t n = LLVMFuzzerMutate(data, size, max_size);
    if (scratch->ParseFromArray(data, static_cast<int>(n))) return n;
    std::memcpy(data, copy.data(), copy.size());
  }
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (!scratch->ParseFromArray(data, static_cast<int>(size))) scratch->Clear();
    const int rounds = 1 + static_cast<int>(mutator.Below(4));
    for (int i = 0; i < rounds; ++i) mutator.Mutate(scratch);
    if (const size_t n = WriteOut(*scratch, data, max_size); n > 0 || scratch->ByteSizeLong() == 0) {
      return n;
    }
  }
  return size;
}

size_t CrossOverProto(Message* scratch1, Message* scratch2, const uint8_t* data1, size_t size1,
                      const uint8_t* data2, size_t size2, uint8_t* out, size_t max_out_size,
                      unsigned seed) {
  if (!scratch1->ParseFromArray(data1, static_cast<int>(size1)) ||
      !scratch2->ParseFromArray(data2, static_cast<int>(size2))) {
    return 0;
  }
  std::minstd_rand rng(seed);
  // Each repeated top-level field: a prefix of the first input's elements followed by a
  // suffix of the second's.
  const Reflection* r = scratch1->GetReflection();
  const Descriptor* d = scratch1->GetDescriptor();
  for (int k = 0; k < d->field_count(); ++k) {
    const FieldDescriptor* f = d->field(k);
    if (!f->is_repeated() || f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const int n1 = r->FieldSize(*scratch1, f), n2 = r->FieldSize(*scratch2, f);
    const int keep = n1 == 0 ? 0 : static_cast<int>(rng() % (n1 + 1));
    while (r->FieldSize(*scratch1, f) > keep) r->RemoveLast(scratch1, f);
    for (int i = n2 == 0 ? 0 : static_cast<int>(rng() % (n2 + 1)); i < n2; ++i) {
      r->AddMessage(scratch1, f)->CopyFrom(r->GetRepeatedMessage(*scratch2, f, i));
    }
  }
  return WriteOut(*scratch1, out, max_out_size);
}

}  // namespace histd::fuzz
