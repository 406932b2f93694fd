// histctl subcommands of the Compute service: reduce, scan, transpose, matmul. Inputs come
// from files (npy, CSV, raw with --dtype/--shape) or name a resident histogram.
#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "client/histctl/command.h"
#include "client/histctl/output.h"
#include "client/dtype.h"
#include "client/io/array_file.h"

namespace histd::histctl {
namespace {

using client::io::ArrayData;

// One array input: a file or a histogram name.
struct InputOpts {
  std::string file, histogram, format = "auto", dtype, shape;
};

void AddInputFlags(FlagSet& flags, InputOpts* o, const std::string& prefix, const std::string& what) {
  const std::string p = prefix.empty() ? "" : prefix + "_";
  flags.String(prefix.empty() ? "input" : prefix, &o->file,
               absl::StrCat(what, ": a file (.npy, .csv, raw)"));
  flags.String(p + "histogram", &o->histogram, absl::StrCat(what, ": a resident histogram instead"));
  flags.String(p + "in_format", &o->format, "input file format: auto, npy, csv or raw");
  flags.String(p + "dtype", &o->dtype, "element type of a raw or CSV input (u8 i32 i64 u32 u64 f32 f64)");
  flags.String(p + "shape", &o->shape, "ROWSxCOLS of a raw input (default one row)");
}

// Fills *input from the options; convert_to (when set) converts a file's elements.
absl::Status BuildInput(const InputOpts& o, const char* what, histd::v1::DType convert_to,
                        histd::v1::ArrayInput* input) {
  if (!o.file.empty() == !o.histogram.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": give exactly one of a file or a histogram"));
  }
  if (!o.histogram.empty()) {
    input->set_histogram(o.histogram);
    return absl::OkStatus();
  }
  client::io::ReadArrayOptions options;
  absl::StatusOr<client::io::FileFormat> format = client::io::ParseFileFormat(o.format);
  if (!format.ok()) return format.status();
  options.format = *format;
  if (!o.dtype.empty()) {
    absl::StatusOr<histd::v1::DType> dtype = client::ParseDType(o.dtype);
    if (!dtype.ok()) return dtype.status();
    options.dtype = *dtype;
  }
  if (!o.shape.empty()) {
    absl::Status shape = ParseShape(o.shape, &options.rows, &options.cols);
    if (!shape.ok()) return shape;
  }
  absl::StatusOr<ArrayData> array = client::io::ReadArrayFile(o.file, options);
  if (!array.ok()) return array.status();
  if (convert_to != histd::v1::DTYPE_UNSPECIFIED) {
    array = client::io::ConvertArray(*array, convert_to);
    if (!array.ok()) return array.status();
  }
  *input->mutable_inline_() = client::io::ToProto(*array);
  return absl::OkStatus();
}

// Writes a result Array, or reports the call's error.
template <typename Response>
int WriteResponse(absl::StatusOr<Response> response, const OutputOpts& out) {
  if (!response.ok()) return ReportError(response.status());
  absl::StatusOr<ArrayData> array = client::io::FromProto(std::move(*response->mutable_result()));
  if (!array.ok()) return ReportError(absl::InternalError(absl::StrCat("result: ", array.status().message())));
  return WriteOrReport(*array, out);
}

// Accepts the input file as the one optional positional argument too.
absl::Status TakePositionalInput(const Invocation& inv, InputOpts* in) {
  if (inv.positionals.size() > 1) return absl::InvalidArgumentError("at most one positional argument (the input file)");
  if (inv.positionals.size() == 1) {
    if (!in->file.empty()) return absl::InvalidArgumentError("input file given twice");
    in->file = inv.positionals[0];
  }
  return absl::OkStatus();
}

Command ReduceCommand() {
  return {"reduce", "sum, min or max of an array, whole or along a dimension", "[FILE]",
          [](FlagSet& flags) {
            struct Opts { InputOpts in; std::string op = "sum", collapse = "all"; OutputOpts out; };
            auto o = std::make_shared<Opts>();
            AddInputFlags(flags, &o->in, "", "the input");
            flags.String("op", &o->op, "sum, min or max");
            flags.String("collapse", &o->collapse, "all (one value), rows (one per column) or cols (one per row)");
            AddOutputFlags(flags, &o->out);
            return [o](const Invocation& inv) {
              InputOpts in = o->in;
              absl::Status s = TakePositionalInput(inv, &in);
              if (!s.ok()) return ReportError(s, true);
              histd::v1::ReduceRequest request;
              if (o->op == "sum") request.set_op(histd::v1::REDUCE_OP_SUM);
              else if (o->op == "min") request.set_op(histd::v1::REDUCE_OP_MIN);
              else if (o->op == "max") request.set_op(histd::v1::REDUCE_OP_MAX);
              else return ReportError(absl::InvalidArgumentError("--op: want sum, min or max"), true);
              absl::StatusOr<histd::v1::Dim> dim = ParseDim(o->collapse, true);
              if (!dim.ok()) return ReportError(dim.status(), true);
              request.set_collapse(*dim);
              s = BuildInput(in, "input", histd::v1::DTYPE_UNSPECIFIED, request.mutable_input());
              if (!s.ok()) return ReportError(s);
              return WriteResponse(inv.Connect()->Reduce(request), o->out);
            };
          }};
}

Command ScanCommand() {
  return {"scan", "inclusive or exclusive prefix sums, flattened or along a dimension", "[FILE]",
          [](FlagSet& flags) {
            struct Opts { InputOpts in; std::string kind = "inclusive", along = "all"; OutputOpts out; };
            auto o = std::make_shared<Opts>();
            AddInputFlags(flags, &o->in, "", "the input");
            flags.String("kind", &o->kind, "inclusive or exclusive");
            flags.String("along", &o->along, "all (flattened row-major), cols (within each row) or rows (within each column)");
            AddOutputFlags(flags, &o->out);
            return [o](const Invocation& inv) {
              InputOpts in = o->in;
              absl::Status s = TakePositionalInput(inv, &in);
              if (!s.ok()) return ReportError(s, true);
              histd::v1::ScanRequest request;
              if (o->kind == "inclusive") request.set_kind(histd::v1::SCAN_KIND_INCLUSIVE);
              else if (o->kind == "exclusive") request.set_kind(histd::v1::SCAN_KIND_EXCLUSIVE);
              else return ReportError(absl::InvalidArgumentError("--kind: want inclusive or exclusive"), true);
              absl::StatusOr<histd::v1::Dim> dim = ParseDim(o->along, true);
              if (!dim.ok()) return ReportError(dim.status(), true);
              request.set_along(*dim);
              s = BuildInput(in, "input", histd::v1::DTYPE_UNSPECIFIED, request.mutable_input());
              if (!s.ok()) return ReportError(s);
              return WriteResponse(inv.Connect()->Scan(request), o->out);
            };
          }};
}

Command TransposeCommand() {
  return {"transpose", "transpose an array", "[FILE]", [](FlagSet& flags) {
            struct Opts { InputOpts in; OutputOpts out; };
            auto o = std::make_shared<Opts>();
            AddInputFlags(flags, &o->in, "", "the input");
            AddOutputFlags(flags, &o->out);
            return [o](const Invocation& inv) {
              InputOpts in = o->in;
              absl::Status s = TakePositionalInput(inv, &in);
              if (!s.ok()) return ReportError(s, true);
              histd::v1::TransposeRequest request;
              s = BuildInput(in, "input", histd::v1::DTYPE_UNSPECIFIED, request.mutable_input());
              if (!s.ok()) return ReportError(s);
              return WriteResponse(inv.Connect()->Transpose(request), o->out);
            };
          }};
}

Command MatmulCommand() {
  return {"matmul", "alpha * A @ B + beta * C in float32 (file inputs are converted to f32)", "",
          [](FlagSet& flags) {
            struct Opts {
              InputOpts a, b, c;
              double alpha = 1, beta = 0;
              OutputOpts out;
            };
            auto o = std::make_shared<Opts>();
            AddInputFlags(flags, &o->a, "a", "A (m x k)");
            AddInputFlags(flags, &o->b, "b", "B (k x n)");
            flags.String("c", &o->c.file, "C (m x n) file, needed when beta != 0");
            flags.String("c_in_format", &o->c.format, "C file format: auto, npy, csv or raw");
            flags.String("c_shape", &o->c.shape, "ROWSxCOLS of a raw C");
            flags.Double("alpha", &o->alpha, "scale of A @ B");
            flags.Double("beta", &o->beta, "scale of C");
            AddOutputFlags(flags, &o->out);
            return [o](const Invocation& inv) {
              absl::Status s = ExpectPositionals(inv, 0, "no positional arguments (use --a and --b)");
              if (!s.ok()) return ReportError(s, true);
              histd::v1::MatmulRequest request;
              s = BuildInput(o->a, "A", histd::v1::DTYPE_F32, request.mutable_a());
              if (s.ok()) s = BuildInput(o->b, "B", histd::v1::DTYPE_F32, request.mutable_b());
              if (s.ok() && !o->c.file.empty()) {
                histd::v1::ArrayInput c;
                s = BuildInput(o->c, "C", histd::v1::DTYPE_F32, &c);
                if (s.ok()) *request.mutable_c() = std::move(*c.mutable_inline_());
              }
              if (!s.ok()) return ReportError(s);
              request.set_alpha(static_cast<float>(o->alpha));
              request.set_beta(static_cast<float>(o->beta));
              request.set_use_alpha_beta(true);
              return WriteResponse(inv.Connect()->Matmul(request), o->out);
            };
          }};
}

}  // namespace

void AddComputeCommands(std::vector<Command>* commands) {
  commands->push_back(ReduceCommand());
  commands->push_back(ScanCommand());
  commands->push_back(TransposeCommand());
  commands->push_back(MatmulCommand());
}

}  // namespace histd::histctl
