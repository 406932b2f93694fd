#include "server/core/png_encode.h"

#include <png.h>
#include <zlib.h>

#include <csetjmp>
#include <vector>

namespace histd::server {
namespace {

void AppendToString(png_structp png, png_bytep data, png_size_t length) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), length);
}

void NoFlush(png_structp) {}

// libpng reports errors through longjmp; the message is kept for the status.
void OnError(png_structp png, png_const_charp message) {
  *static_cast<std::string*>(png_get_error_ptr(png)) = message;
  png_longjmp(png, 1);
}

void OnWarning(png_structp, png_const_charp) {}

}  // namespace

uint64_t PngBytesBound(uint32_t width, uint32_t height) {
  // The raw rows (a filter byte each), zlib's overhead when it falls back to stored blocks
  // (5 bytes per block of at most 64 KiB), libpng's IDAT chunks (12 bytes per 8 KiB), the
  // row pointers, the palette (768 bytes) and the other chunks.
  const uint64_t raw = uint64_t{height} * (uint64_t{width} + 1);
  return raw + raw / 256 + uint64_t{height} * sizeof(png_bytep) + 4096;
}

absl::StatusOr<std::string> EncodePng(const Image& image) {
  if (image.width == 0 || image.height == 0 ||
      image.pixels.size() != uint64_t{image.width} * image.height) {
    return absl::InternalError("PNG of a malformed image");
  }
  std::string out, error;
  std::vector<png_bytep> rows(image.height);
  for (uint32_t y = 0; y < image.height; ++y) {
    rows[y] = const_cast<png_bytep>(image.pixels.data() + uint64_t{y} * image.width);
  }
  png_color palette[kPaletteSize];
  for (int i = 0; i < kPaletteSize; ++i) {
    palette[i] = png_color{kPalette[i].r, kPalette[i].g, kPalette[i].b};
  }
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &error, OnError, OnWarning);
  if (png == nullptr) return absl::InternalError("libpng: png_create_write_struct failed");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    return absl::InternalError("libpng: png_create_info_struct failed");
  }
  // Nothing with a destructor is created between here and the end of the writes.
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return absl::InternalError("libpng: " + error);
  }
  png_set_write_fn(png, &out, AppendToString, NoFlush);
  png_set_IHDR(png, info, image.width, image.height, 8, PNG_COLOR_TYPE_PALETTE,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_PLTE(png, info, palette, kPaletteSize);
  if (image.cells_repeat) {
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
    png_set_compression_strategy(png, Z_RLE);
  } else {
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_set_compression_strategy(png, Z_HUFFMAN_ONLY);
  }
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace histd::server
