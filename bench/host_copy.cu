// Host-to-device copy floor for local (shared-memory) ingest on one and on all GPUs at once.
// Copies what histd copies, the way it copies it: chunks of 1 MiB (one message) or 8 MiB (one
// staging buffer) with cudaMemcpyAsync on two streams per device, from
//   pinned  - cudaHostAlloc memory, one buffer per device, first touched by its own thread
//   shm     - 16 POSIX shared-memory objects of 32 MiB (16 producers x 32 slots of 1 MiB, the
//             load generator's layout), mapped and registered once with cudaHostRegister
//             (portable, read-only) as histd registers a producer's region; every device
//             reads all of them, round robin
// on each device alone and on all devices at once (one host thread per device, same
// window), also while 16 host threads keep writing 1 MiB messages into the shm objects (the
// producers' memcpy under --shm_write_each). Prints the host's NUMA layout, each GPU's node
// and the nodes the shm pages live on, then one table: GB/s per device and in total.
// Usage: histd_bench_host_copy [seconds per row, default 0.5]
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.cuh"

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr int kRegions = 16;
constexpr size_t kRegionBytes = 32 * kMiB;
constexpr size_t kPinnedBytes = 512 * kMiB;
constexpr size_t kDeviceBytes = 64 * kMiB;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

int GpuNode(int device) {
  char bus[32];
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) return -1;
  std::string id(bus);
  for (char& c : id) c = static_cast<char>(std::tolower(c));
  // sysfs names the function with a 4-digit domain: 0000:18:00.0
  if (id.size() > 12 && id.find(':') == 8) id = id.substr(4);
  const std::string node = ReadLine("/sys/bus/pci/devices/" + id + "/numa_node");
  return node.empty() ? -1 : std::atoi(node.c_str());
}

// Pages per NUMA node of [data, data + bytes), one probe every 2 MiB (move_pages, query only).
std::map<int, int> PageNodes(const uint8_t* data, size_t bytes) {
  std::vector<void*> pages;
  for (size_t off = 0; off < bytes; off += 2 * kMiB) pages.push_back((void*)(data + off));
  std::vector<int> status(pages.size(), -1);
  std::map<int, int> count;
  if (syscall(SYS_move_pages, 0, pages.size(), pages.data(), nullptr, status.data(), 0) != 0)
    return count;
  for (int s : status) count[s] += 1;
  return count;
}

struct Source {
  std::vector<const uint8_t*> chunks;  // in copy order
};

// One device's copies for `seconds` once `go` is set; returns bytes copied and the time.
struct Result {
  double bytes = 0, seconds = 0;
};

void CopyLoop(int device, const Source& source, size_t chunk, double seconds,
              std::atomic<int>* ready, const std::atomic<bool>* go, Result* out) {
  BENCH_CUDA(cudaSetDevice(device));
  void* dev = nullptr;
  BENCH_CUDA(cudaMalloc(&dev, kDeviceBytes));
  cudaStream_t streams[2];
  for (auto& s : streams) BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto pass = [&](size_t* bytes) {
    size_t k = 0;
    for (const uint8_t* src : source.chunks) {
      BENCH_CUDA(cudaMemcpyAsync(static_cast<uint8_t*>(dev) + (k * chunk) % kDeviceBytes, src,
                                 chunk, cudaMemcpyHostToDevice, streams[k & 1]));
      ++k;
    }
    for (auto& s : streams) BENCH_CUDA(cudaStreamSynchronize(s));
    *bytes += k * chunk;
  };
  size_t warm = 0;
  pass(&warm);
  ready->fetch_add(1);
  while (!go->load()) std::this_thread::yield();
  size_t bytes = 0;
  const double start = Now();
  double elapsed = 0;
  while (elapsed < seconds) {
    pass(&bytes);
    elapsed = Now() - start;
  }
  out->bytes = bytes;
  out->seconds = elapsed;
  for (auto& s : streams) BENCH_CUDA(cudaStreamDestroy(s));
  BENCH_CUDA(cudaFree(dev));
}

// Copies on every device of `devices` at once; GB/s per device.
std::vector<double> Run(const std::vector<int>& devices, const std::vector<Source>& sources,
                        size_t chunk, double seconds) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<Result> results(devices.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < devices.size(); ++i)
    threads.emplace_back(CopyLoop, devices[i], std::cref(sources[i]), chunk, seconds, &ready,
                         &go, &results[i]);
  while (ready.load() < static_cast<int>(devices.size())) std::this_thread::yield();
  go = true;
  for (auto& t : threads) t.join();
  std::vector<double> rates;
  for (const Result& r : results) rates.push_back(r.bytes / r.seconds / 1e9);
  return rates;
}

// Host threads writing 1 MiB messages into the shm objects while they run (GB/s written).
class Writers {
 public:
  Writers(int threads, const std::vector<uint8_t*>& regions) {
    for (int t = 0; t < threads; ++t) {
      threads_.emplace_back([this, t, regions] {
        std::vector<uint8_t> message(kMiB, static_cast<uint8_t>(t));
        uint8_t* region = regions[t % regions.size()];
        size_t k = 0, bytes = 0;
        while (!stop_.load(std::memory_order_relaxed)) {
          std::memcpy(region + (k++ % (kRegionBytes / kMiB)) * kMiB, message.data(), kMiB);
          bytes += kMiB;
        }
        written_ += bytes;
      });
    }
    start_ = Now();
  }
  double StopGBs() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    return written_.load() / (Now() - start_) / 1e9;
  }

 private:
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> written_{0};
  double start_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
  int count = 0;
  BENCH_CUDA(cudaGetDeviceCount(&count));
  std::printf("# Host-to-device copy floor (histd_bench_host_copy)\n\n");
  std::printf("host: %u hardware threads; NUMA nodes:", std::thread::hardware_concurrency());
  for (int n = 0; n < 16; ++n) {
    const std::string cpus = ReadLine("/sys/devices/system/node/node" + std::to_string(n) + "/cpulist");
    if (!cpus.empty()) std::printf(" node%d cpus %s;", n, cpus.c_str());
  }
  std::printf("\n");
  std::vector<int> all;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop;
    BENCH_CUDA(cudaGetDeviceProperties(&prop, d));
    std::printf("cuda:%d %s, PCI %02x:%02x, NUMA node %d\n", d, prop.name, prop.pciBusID,
                prop.pciDeviceID, GpuNode(d));
    all.push_back(d);
  }

  // The shm objects: created, written once (first touch by this thread), registered.
  std::vector<uint8_t*> regions;
  for (int r = 0; r < kRegions; ++r) {
    const std::string key = "/histd-host-copy-" + std::to_string(getpid()) + "-" + std::to_string(r);
    const int fd = shm_open(key.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, kRegionBytes) != 0) {
      std::perror("shm_open");
      return 1;
    }
    void* p = mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    shm_unlink(key.c_str());
    if (p == MAP_FAILED) {
      std::perror("mmap");
      return 1;
    }
    std::memset(p, r + 1, kRegionBytes);
    BENCH_CUDA(cudaHostRegister(p, kRegionBytes, cudaHostRegisterPortable | cudaHostRegisterReadOnly));
    regions.push_back(static_cast<uint8_t*>(p));
  }
  std::map<int, int> nodes;
  for (uint8_t* r : regions)
    for (auto [node, n] : PageNodes(r, kRegionBytes)) nodes[node] += n;
  std::printf("shm objects: %d x %zu MiB, registered; pages (2 MiB probes) per node:", kRegions,
              kRegionBytes / kMiB);
  for (auto [node, n] : nodes) std::printf(" node %d: %d;", node, n);
  std::printf("\n");

  // Pinned: one buffer per device, first touched on a thread of its own.
  std::vector<uint8_t*> pinned(count, nullptr);
  for (int d = 0; d < count; ++d) {
    std::thread([&, d] {
      BENCH_CUDA(cudaSetDevice(d));
      void* p = nullptr;
      BENCH_CUDA(cudaHostAlloc(&p, kPinnedBytes, cudaHostAllocPortable));
      std::memset(p, d + 1, kPinnedBytes);
      pinned[d] = static_cast<uint8_t*>(p);
    }).join();
  }

  auto sources = [&](bool shm, size_t chunk) {
    std::vector<Source> out(count);
    for (int d = 0; d < count; ++d) {
      if (shm) {  // message k of producer r: region r, slot k, producers interleaved
        for (size_t s = 0; s < kRegionBytes / chunk; ++s)
          for (int r = 0; r < kRegions; ++r) out[d].chunks.push_back(regions[r] + s * chunk);
      } else {
        for (size_t off = 0; off + chunk <= kPinnedBytes; off += chunk)
          out[d].chunks.push_back(pinned[d] + off);
      }
    }
    return out;
  };
  std::printf("\n%.2f s per row; each device thread copies on two streams\n\n", seconds);
  std::printf("| memory | chunk | host writers | devices | GB/s per device | GB/s total | writers GB/s |\n");
  std::printf("|---|---:|---:|---|---|---:|---:|\n");
  auto row = [&](bool shm, size_t chunk, int writers, const std::vector<int>& devices) {
    std::vector<Source> all_sources = sources(shm, chunk);
    std::vector<Source> picked;
    for (int d : devices) picked.push_back(all_sources[d]);
    std::unique_ptr<Writers> w;
    if (writers > 0) w = std::make_unique<Writers>(writers, regions);
    std::vector<double> rates = Run(devices, picked, chunk, seconds);
    const double written = w ? w->StopGBs() : 0;
    std::string per, names;
    double total = 0;
    for (size_t i = 0; i < devices.size(); ++i) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%.1f", i ? " + " : "", rates[i]);
      per += buf;
      names += (i ? "," : "") + std::string("cuda:") + std::to_string(devices[i]);
      total += rates[i];
    }
    char wrote[32] = "-";
    if (writers > 0) std::snprintf(wrote, sizeof wrote, "%.1f", written);
    std::printf("| %s | %zu MiB | %d | %s | %s | %.1f | %s |\n", shm ? "shm (registered)" : "pinned",
                chunk / kMiB, writers, names.c_str(), per.c_str(), total, wrote);
    std::fflush(stdout);
  };
  for (bool shm : {false, true}) {
    for (size_t chunk : {kMiB, 8 * kMiB}) {
      for (int d = 0; d < count; ++d) row(shm, chunk, 0, {d});
      if (count > 1) row(shm, chunk, 0, all);
    }
  }
  for (int d = 0; d < count; ++d) row(true, kMiB, 16, {d});
  if (count > 1) row(true, kMiB, 16, all);
  {  // the writers alone
    Writers w(16, regions);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    std::printf("| (no copy) | - | 16 | - | - | - | %.1f |\n", w.StopGBs());
  }
  for (uint8_t* r : regions) {
    cudaHostUnregister(r);
    munmap(r, kRegionBytes);
  }
  for (uint8_t* p : pinned) cudaFreeHost(p);
  return 0;
}
