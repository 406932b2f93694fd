// histctl subcommands that show a histogram: render (a PNG heatmap drawn by the daemon) and
// watch (a terminal heatmap that follows the histogram through the Watch stream).
//
// watch draws with Unicode upper half blocks (U+2580): each character shows two cells, the
// upper in the foreground colour and the lower in the background, from the xterm 256-colour
// palette: kTerminalRamp is viridis sampled at 16 levels, each the nearest palette colour
// (by RGB distance); saturated cells are palette red (196). On a terminal it switches stdin
// to raw mode and quits on 'q' (or Ctrl-C); --updates=N ends after N updates (scripts).
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/histctl/command.h"

namespace histd::histctl {
namespace {

constexpr int kTerminalRamp[16] = {53, 53, 54, 60, 60, 60, 30, 30, 30, 36, 72, 77, 113, 149, 184, 220};
constexpr int kTerminalSaturated = 196;

// The flags render and watch share.
struct ViewOpts {
  std::string rows, cols, scale = "linear", pool = "sum", zmin, zmax;
};

void AddViewFlags(FlagSet& flags, ViewOpts* o) {
  flags.String("rows", &o->rows, "row range BEGIN:END, half-open (default all)");
  flags.String("cols", &o->cols, "column range BEGIN:END, half-open (default all)");
  flags.String("scale", &o->scale, "colour scale: linear or log");
  flags.String("pool", &o->pool, "each pixel's bins: sum or max (max shows saturated bins at cap)");
  flags.String("zmin", &o->zmin, "value at the bottom of the colour scale (default 0, log: 1)");
  flags.String("zmax", &o->zmax, "value at the top of the colour scale (default the largest)");
}

absl::Status ParseRegion(const ViewOpts& o, histd::v1::Region* region) {
  uint32_t b, e;
  if (absl::Status s = ParseRange(o.rows, &b, &e); !s.ok()) return s;
  region->set_row_begin(b);
  region->set_row_end(e);
  if (absl::Status s = ParseRange(o.cols, &b, &e); !s.ok()) return s;
  region->set_col_begin(b);
  region->set_col_end(e);
  return absl::OkStatus();
}

absl::StatusOr<histd::v1::Pool> ParsePool(const std::string& text) {
  if (text == "sum") return histd::v1::POOL_SUM;
  if (text == "max") return histd::v1::POOL_MAX;
  return absl::InvalidArgumentError(absl::StrCat("--pool must be sum or max, got '", text, "'"));
}

absl::StatusOr<bool> ParseLogScale(const std::string& text) {
  if (text == "linear") return false;
  if (text == "log") return true;
  return absl::InvalidArgumentError(absl::StrCat("--scale must be linear or log, got '", text, "'"));
}

// An optional number: "" is unset.
absl::StatusOr<std::optional<double>> ParseOptionalNumber(const char* flag, const std::string& text) {
  if (text.empty()) return std::optional<double>();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, " must be a finite number, got '", text, "'"));
  }
  return std::optional<double>(v);
}

Command RenderCommand() {
  return {"render", "draw a histogram (or a region) as a PNG heatmap with labels and a colour bar",
          "NAME",
          [](FlagSet& flags) {
            struct Opts {
              ViewOpts view;
              uint64_t width = 0, height = 0;
              bool bare = false;
              std::string output;
            };
            auto o = std::make_shared<Opts>();
            AddViewFlags(flags, &o->view);
            flags.Uint("width", &o->width, "heatmap pixels across (0: the region's columns, at most 1024)");
            flags.Uint("height", &o->height, "heatmap pixels down (0: the region's rows, at most 1024)");
            flags.Bool("bare", &o->bare, "only the heatmap: no labels, no colour bar");
            flags.String("output", &o->output, "PNG file to write (required)");
            flags.Short('o', "output");
            return [o](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 1, "NAME");
              if (!args.ok()) return ReportError(args, true);
              if (o->output.empty()) {
                return ReportError(absl::InvalidArgumentError("render needs -o FILE.png"), true);
              }
              histd::v1::RenderRequest request;
              request.set_name(inv.positionals[0]);
              if (absl::Status s = ParseRegion(o->view, request.mutable_region()); !s.ok()) {
                return ReportError(s, true);
              }
              absl::StatusOr<histd::v1::Pool> pool = ParsePool(o->view.pool);
              if (!pool.ok()) return ReportError(pool.status(), true);
              request.set_pool(*pool);
              absl::StatusOr<bool> log = ParseLogScale(o->view.scale);
              if (!log.ok()) return ReportError(log.status(), true);
              request.set_scale(*log ? histd::v1::SCALE_LOG : histd::v1::SCALE_LINEAR);
              absl::StatusOr<std::optional<double>> zmin = ParseOptionalNumber("zmin", o->view.zmin);
              if (!zmin.ok()) return ReportError(zmin.status(), true);
              absl::StatusOr<std::optional<double>> zmax = ParseOptionalNumber("zmax", o->view.zmax);
              if (!zmax.ok()) return ReportError(zmax.status(), true);
              if (*zmin) request.set_zmin(**zmin);
              if (*zmax) request.set_zmax(**zmax);
              if (o->width > UINT32_MAX || o->height > UINT32_MAX) {
                return ReportError(absl::InvalidArgumentError("--width and --height must fit 32 bits"), true);
              }
              request.set_width(static_cast<uint32_t>(o->width));
              request.set_height(static_cast<uint32_t>(o->height));
              request.set_bare(o->bare);
              absl::StatusOr<histd::v1::RenderResponse> png = inv.Connect()->Render(request);
              if (!png.ok()) return ReportError(png.status());
              std::ofstream file(o->output, std::ios::binary | std::ios::trunc);
              file.write(png->png().data(), static_cast<std::streamsize>(png->png().size()));
              file.close();
              if (!file) {
                return ReportError(absl::UnavailableError(absl::StrCat("cannot write ", o->output)));
              }
              std::fprintf(stderr, "wrote a %u x %u PNG (rows %u:%u, cols %u:%u, z %g..%g) to %s\n",
                           png->width(), png->height(), png->region().row_begin(),
                           png->region().row_end(), png->region().col_begin(),
                           png->region().col_end(), png->zmin(), png->zmax(), o->output.c_str());
              return kExitOk;
            };
          }};
}

// Restores the terminal's mode on destruction; raw mode only when stdin is a terminal.
class RawTerminal {
 public:
  RawTerminal() {
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= ~(ICANON | ECHO);
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
  }
  ~RawTerminal() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  bool active() const { return active_; }

 private:
  termios saved_{};
  bool active_ = false;
};

// The palette index of a cell's value.
int CellColor(uint64_t v, bool saturated, bool log, double zmin, double zmax) {
  if (saturated) return kTerminalSaturated;
  double t;
  if (!(zmax > zmin)) {
    t = double(v) > zmin ? 1 : 0;
  } else if (log) {
    t = v == 0 ? 0 : (std::log10(double(v)) - std::log10(zmin)) / (std::log10(zmax) - std::log10(zmin));
  } else {
    t = (double(v) - zmin) / (zmax - zmin);
  }
  t = std::clamp(t, 0.0, 1.0);
  return kTerminalRamp[static_cast<int>(std::lround(t * 15))];
}

// One frame: cursor home, a status line, then rows / 2 lines of half blocks.
std::string DrawFrame(const std::string& name, const histd::v1::WatchUpdate& u, bool log,
                      std::optional<double> zmin_opt, std::optional<double> zmax_opt) {
  auto value = [&](uint64_t cell) -> uint64_t {
    if (u.dtype() == histd::v1::DTYPE_U8) return static_cast<uint8_t>(u.data()[cell]);
    uint32_t v;
    std::memcpy(&v, u.data().data() + cell * 4, 4);
    return v;
  };
  const uint64_t cells = u.rows() * u.cols();
  uint64_t largest = 0;
  for (uint64_t i = 0; i < cells; ++i) largest = std::max(largest, value(i));
  const double zmin = zmin_opt.value_or(log ? 1.0 : 0.0);
  const double zmax = zmax_opt.value_or(std::max(zmin, double(largest)));
  // Only a max-pooled view shows saturation: its cells are bins' values.
  auto saturated = [&](uint64_t cell) {
    return u.dtype() == histd::v1::DTYPE_U8 && value(cell) >= u.cap();
  };
  std::string out = "\x1b[H";
  absl::StrAppendFormat(&out, "%s  rows %u:%u cols %u:%u  %ux%u cells  z %g..%g%s  update %u  (q quits)\x1b[K\n",
                        name, u.region().row_begin(), u.region().row_end(), u.region().col_begin(),
                        u.region().col_end(), u.rows(), u.cols(), zmin, zmax, log ? " log" : "",
                        u.sequence());
  for (uint64_t r = 0; r < u.rows(); r += 2) {
    for (uint64_t c = 0; c < u.cols(); ++c) {
      const uint64_t upper = r * u.cols() + c;
      const int fg = CellColor(value(upper), saturated(upper), log, zmin, zmax);
      if (r + 1 < u.rows()) {
        const uint64_t lower = upper + u.cols();
        const int bg = CellColor(value(lower), saturated(lower), log, zmin, zmax);
        absl::StrAppendFormat(&out, "\x1b[38;5;%dm\x1b[48;5;%dm\u2580", fg, bg);
      } else {
        absl::StrAppendFormat(&out, "\x1b[0m\x1b[38;5;%dm\u2580", fg);
      }
    }
    out += "\x1b[0m\x1b[K\n";
  }
  out += "\x1b[J";
  return out;
}

Command WatchCommand() {
  return {"watch", "follow a histogram live: a terminal heatmap refreshed as it changes (q quits)",
          "NAME",
          [](FlagSet& flags) {
            struct Opts {
              ViewOpts view;
              uint64_t width = 0, height = 0, interval_ms = 1000, updates = 0;
            };
            auto o = std::make_shared<Opts>();
            AddViewFlags(flags, &o->view);
            flags.Uint("width", &o->width, "cells across (0: the terminal's columns)");
            flags.Uint("height", &o->height, "cells down, two per line (0: the terminal's lines)");
            flags.Uint("interval_ms", &o->interval_ms, "how often the daemon looks for a change");
            flags.Uint("updates", &o->updates, "end after this many updates (0: until q)");
            return [o](const Invocation& inv) {
              absl::Status args = ExpectPositionals(inv, 1, "NAME");
              if (!args.ok()) return ReportError(args, true);
              histd::v1::WatchRequest request;
              request.set_name(inv.positionals[0]);
              if (absl::Status s = ParseRegion(o->view, request.mutable_region()); !s.ok()) {
                return ReportError(s, true);
              }
              absl::StatusOr<histd::v1::Pool> pool = ParsePool(o->view.pool);
              if (!pool.ok()) return ReportError(pool.status(), true);
              request.set_pool(*pool);
              absl::StatusOr<bool> log = ParseLogScale(o->view.scale);
              if (!log.ok()) return ReportError(log.status(), true);
              absl::StatusOr<std::optional<double>> zmin = ParseOptionalNumber("zmin", o->view.zmin);
              if (!zmin.ok()) return ReportError(zmin.status(), true);
              absl::StatusOr<std::optional<double>> zmax = ParseOptionalNumber("zmax", o->view.zmax);
              if (!zmax.ok()) return ReportError(zmax.status(), true);
              winsize terminal{};
              const bool sized = ioctl(STDOUT_FILENO, TIOCGWINSZ, &terminal) == 0 && terminal.ws_col > 0;
              const uint64_t width = o->width != 0 ? o->width : sized ? terminal.ws_col : 80;
              const uint64_t height = o->height != 0 ? o->height
                                      : sized ? 2 * std::max(1, terminal.ws_row - 2)
                                              : 48;
              if (width > UINT32_MAX || height > UINT32_MAX || o->interval_ms > UINT32_MAX) {
                return ReportError(absl::InvalidArgumentError("--width, --height and --interval_ms must fit 32 bits"), true);
              }
              request.set_cols(static_cast<uint32_t>(width));
              request.set_rows(static_cast<uint32_t>(height));
              request.set_interval_ms(static_cast<uint32_t>(o->interval_ms));
              std::unique_ptr<client::Client> client = inv.Connect();
              std::unique_ptr<client::WatchStream> watch = client->Watch(request);
              RawTerminal raw;
              std::atomic<bool> quit{false};
              std::thread keys;
              if (raw.active()) {
                keys = std::thread([&] {
                  while (!quit.load()) {
                    pollfd in{STDIN_FILENO, POLLIN, 0};
                    if (poll(&in, 1, 100) <= 0) continue;
                    char c = 0;
                    if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q' || c == 3)) {
                      quit.store(true);
                      watch->Cancel();
                    }
                  }
                });
              }
              std::fputs("\x1b[2J", stdout);
              histd::v1::WatchUpdate update;
              uint64_t shown = 0;
              while (watch->Next(&update)) {
                const std::string frame = DrawFrame(inv.positionals[0], update, *log, *zmin, *zmax);
                std::fwrite(frame.data(), 1, frame.size(), stdout);
                std::fflush(stdout);
                if (o->updates != 0 && ++shown == o->updates) {
                  quit.store(true);
                  watch->Cancel();
                }
              }
              const bool asked_to_quit = quit.exchange(true);
              if (keys.joinable()) keys.join();
              absl::Status status = watch->Finish();
              if (asked_to_quit && absl::IsCancelled(status)) return kExitOk;
              return ReportError(status);
            };
          }};
}

}  // namespace

void AddViewCommands(std::vector<Command>* commands) {
  commands->push_back(RenderCommand());
  commands->push_back(WatchCommand());
}

}  // namespace histd::histctl
