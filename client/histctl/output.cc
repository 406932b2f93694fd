#include "client/histctl/output.h"

#include <charconv>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/dtype.h"
#include "client/io/array_file.h"
#include "client/io/file_format.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"

namespace histd::histctl {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::string ScalarText(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return FormatFloat(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return FormatDouble(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return (rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f))->name();
    case FieldDescriptor::CPPTYPE_STRING:
      if (f->type() == FieldDescriptor::TYPE_BYTES) {
        return absl::StrCat("<", (rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f)).size(),
                            " bytes>");
      }
      return rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
    default:
      return "?";
  }
}

void PrintFlat(const Message& m, const std::string& prefix) {
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string name = prefix + f->name();
    if (f->is_repeated()) {
      const int n = r->FieldSize(m, f);
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        for (int j = 0; j < n; ++j) {
          PrintFlat(r->GetRepeatedMessage(m, f, j), absl::StrCat(name, "[", j, "]."));
        }
      } else {
        std::vector<std::string> items;
        for (int j = 0; j < n; ++j) items.push_back(ScalarText(m, f, j));
        std::printf("%s: [%s]\n", name.c_str(), absl::StrJoin(items, ", ").c_str());
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (r->HasField(m, f)) PrintFlat(r->GetMessage(m, f), name + ".");
    } else {
      std::printf("%s: %s\n", name.c_str(), ScalarText(m, f, -1).c_str());
    }
  }
}

}  // namespace

std::string FormatFloat(float v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, result.ptr);
}

std::string FormatDouble(double v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, result.ptr);
}

void PrintMessage(const Message& message, bool json) {
  if (json) {
    std::string text;
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    options.always_print_primitive_fields = true;
    options.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(message, &text, options);
    std::printf("%s", text.c_str());
    if (text.empty() || text.back() != '\n') std::printf("\n");
    return;
  }
  PrintFlat(message, "");
}

absl::Status WriteResult(const client::io::ArrayData& array, const std::string& output,
                         const std::string& format) {
  std::fflush(stdout);
  if (output.empty()) return client::io::WriteArrayFile("-", array, client::io::FileFormat::kCsv);
  absl::StatusOr<client::io::FileFormat> parsed = client::io::ParseFileFormat(format);
  if (!parsed.ok()) return parsed.status();
  return client::io::WriteArrayFile(output, array, *parsed);
}

void AddOutputFlags(FlagSet& flags, OutputOpts* o) {
  flags.String("output", &o->output, "write the result to this file (.npy, .csv, else raw); default CSV on stdout");
  flags.Short('o', "output");
  flags.String("out_format", &o->out_format, "override the output format: auto, npy, csv or raw");
}

int WriteOrReport(const client::io::ArrayData& array, const OutputOpts& out) {
  absl::Status written = WriteResult(array, out.output, out.out_format);
  if (!written.ok()) return ReportError(written);
  if (!out.output.empty()) {
    std::fprintf(stderr, "wrote %llu x %llu %s to %s\n", static_cast<unsigned long long>(array.rows),
                 static_cast<unsigned long long>(array.cols), client::DTypeShortName(array.dtype),
                 out.output.c_str());
  }
  return kExitOk;
}

}  // namespace histd::histctl
