// How histctl prints messages and writes results.
//
// Messages print as one "field.path: value" line per field, every field included (zeros
// too), so that scripts can grep them; --json prints protobuf JSON instead. Arrays go to
// the -o file in the format its extension names (or --out_format), or as CSV to stdout.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "client/histctl/command.h"
#include "client/io/array_data.h"
#include "google/protobuf/message.h"

namespace histd::histctl {

// The shortest decimal text that reads back as the same float / double.
std::string FormatFloat(float v);
std::string FormatDouble(double v);

void PrintMessage(const google::protobuf::Message& message, bool json);

// output "" writes CSV to stdout; otherwise format "auto"/"" chooses by extension.
absl::Status WriteResult(const client::io::ArrayData& array, const std::string& output,
                         const std::string& format);

// Where a subcommand writes its array result: -o/--output and --out_format.
struct OutputOpts {
  std::string output;
  std::string out_format = "auto";
};
void AddOutputFlags(FlagSet& flags, OutputOpts* o);

// Writes `array` as `out` says (and names the file on stderr); returns kExitOk or the
// exit code of the reported error.
int WriteOrReport(const client::io::ArrayData& array, const OutputOpts& out);

}  // namespace histd::histctl
