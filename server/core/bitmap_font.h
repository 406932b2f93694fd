// A 5 x 7 pixel bitmap font for the labels of rendered heatmaps (server/core/heatmap.h): digits,
// '.', '-', '+', ' ' and the lowercase letters of number formats and short labels
// (a c e f i l n o r s t w x y). Other characters draw as blanks. The glyphs were drawn
// for histd (no outside source); each advances 6 pixels (one blank column).
//
// Thread safety: stateless.
#pragma once

#include <cstdint>
#include <string_view>

namespace histd::server {

inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 7;
inline constexpr int kGlyphAdvance = kGlyphWidth + 1;

// Rows of the glyph for `c`, top first; bit 4 is the leftmost pixel. All zero for a
// character the font lacks.
const uint8_t* GlyphRows(char c);

// Pixels a string spans horizontally (its last glyph has no trailing blank column).
inline int TextWidth(std::string_view text) {
  return text.empty() ? 0 : static_cast<int>(text.size()) * kGlyphAdvance - 1;
}

}  // namespace histd::server
