// A producer's program built against the installed client library (find_package(histd)):
// creates a histogram on the daemon given and prints its bin count from GetHistogramInfo,
// which tests/install/consumer_test.sh compares with what was asked.
#include <cstdio>

#include "client/histd_client.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer HOST:PORT\n");
    return 2;
  }
  histd::client::Client client(argv[1]);
  histd::v1::CreateHistogramRequest create;
  create.mutable_spec()->set_name("consumer");
  create.mutable_spec()->set_rows(3);
  create.mutable_spec()->set_cols(7);
  if (absl::StatusOr<histd::v1::HistogramInfo> made = client.CreateHistogram(create); !made.ok()) {
    std::fprintf(stderr, "create: %s\n", made.status().ToString().c_str());
    return 1;
  }
  histd::v1::GetHistogramInfoRequest get;
  get.set_name("consumer");
  absl::StatusOr<histd::v1::HistogramInfo> info = client.GetHistogramInfo(get);
  if (!info.ok()) {
    std::fprintf(stderr, "info: %s\n", info.status().ToString().c_str());
    return 1;
  }
  std::printf("bins %u\n", info->spec().rows() * info->spec().cols());
  return 0;
}
