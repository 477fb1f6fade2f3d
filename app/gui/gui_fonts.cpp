#include "app/gui/gui_fonts.h"

#include <imgui_impl_opengl3.h>
#include <imgui_internal.h>  // ImTextCharFromUtf8

#include <cstdio>

namespace attn {

std::optional<std::filesystem::path> findFont(const std::string& file_name) {
  const std::filesystem::path dirs[] = {
      "/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/opentype/noto", "/usr/share/fonts/truetype/noto",
      "/usr/share/fonts/noto-cjk", "/usr/local/share/fonts"};
  for (const auto& d : dirs) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(d / file_name, ec)) return d / file_name;
  }
  return std::nullopt;
}

namespace {

bool isCjk(ImWchar c) {
  return (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFF00 && c <= 0xFFEF);
}

// Always present: Latin + Latin-1, Greek, Cyrillic and the symbols the
// registry's formulas use (√, ᵀ, ∈, arrows, sub/superscripts).
const ImWchar kBaseRanges[] = {
    0x0020, 0x00FF,  // Basic Latin, Latin-1
    0x0100, 0x024F,  // Latin Extended
    0x0370, 0x03FF,  // Greek
    0x0400, 0x052F,  // Cyrillic
    0x1D00, 0x1DBF,  // phonetic extensions (ᵀ)
    0x2000, 0x206F,  // punctuation (– — … ·)
    0x2070, 0x209F,  // super/subscripts
    0x2100, 0x214F,  // letter-like
    0x2190, 0x21FF,  // arrows
    0x2200, 0x22FF,  // mathematical operators (√ ∈ ∑ ≤)
    0x2300, 0x23FF,  // misc technical (⌈ ⌉)
    0x25A0, 0x25FF,  // geometric shapes
    0,
};

}  // namespace

void FontAtlas::require(const std::string& utf8) {
  const char* p = utf8.c_str();
  const char* end = p + utf8.size();
  while (p < end) {
    unsigned int c = 0;
    const int n = ImTextCharFromUtf8(&c, p, end);
    if (n <= 0) break;
    p += n;
    if (c < 0x80 || c > 0xFFFF) continue;  // ASCII is always there; ImWchar is 16-bit
    if (chars_.insert(static_cast<ImWchar>(c)).second) dirty_ = true;
  }
}

void FontAtlas::rebuild(float pixel_size) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  ImFontGlyphRangesBuilder builder;
  builder.AddRanges(kBaseRanges);
  bool need_cjk = false;
  for (ImWchar c : chars_) {
    builder.AddChar(c);
    need_cjk |= isCjk(c);
  }
  ranges_.clear();
  builder.BuildRanges(&ranges_);

  ImFontConfig cfg;
  cfg.OversampleH = 2;
  cfg.OversampleV = 1;
  const auto dejavu = findFont("DejaVuSans.ttf");
  if (dejavu) {
    io.Fonts->AddFontFromFileTTF(dejavu->c_str(), pixel_size, &cfg, ranges_.Data);
  } else {
    std::fprintf(stderr, "attnlab: DejaVuSans.ttf not found (install fonts-dejavu-core); using the built-in font\n");
    cfg.SizePixels = pixel_size;
    io.Fonts->AddFontDefault(&cfg);
  }
  cjk_loaded_ = false;
  if (need_cjk) {
    if (const auto noto = findFont("NotoSansCJK-Regular.ttc")) {
      // Merged: only glyphs DejaVu lacks come from Noto.
      ImFontConfig merge;
      merge.MergeMode = true;
      merge.FontNo = 0;
      merge.OversampleH = 1;
      // ImGui sizes a font by its line height (ascent + descent): 1.448 em for
      // Noto Sans CJK, 1.164 em for DejaVu Sans. At the same pixel size CJK
      // glyphs would come out a fifth smaller than Latin ones; at this size
      // their em matches DejaVu's (the baseline is the merged font's).
      constexpr float kCjkToLatinLineHeight = 1.448f / 1.164f;
      io.Fonts->AddFontFromFileTTF(noto->c_str(), pixel_size * kCjkToLatinLineHeight, &merge, ranges_.Data);
      cjk_loaded_ = true;
    }
  }
  io.Fonts->Build();
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  built_size_ = pixel_size;
  dirty_ = false;
}

}  // namespace attn
