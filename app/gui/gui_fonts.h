// Fonts for the GUI: DejaVu Sans with Noto Sans CJK merged in when a shown
// string needs it. Glyph ranges are built from the text actually shown
// (tokens, registry strings) plus Latin/Greek/Cyrillic and math symbols;
// the atlas is rebuilt between frames when new characters appear.
#pragma once

#include <imgui.h>

#include <filesystem>
#include <optional>
#include <set>
#include <string>

namespace attn {

// The one place fonts are looked up: the system font folders that Debian's
// fonts-dejavu-core and fonts-noto-cjk install into. Never relative to the
// working directory.
std::optional<std::filesystem::path> findFont(const std::string& file_name);

class FontAtlas {
 public:
  // Notes the characters of `utf8`; new ones make the atlas dirty.
  void require(const std::string& utf8);
  bool needsRebuild(float pixel_size) const { return dirty_ || pixel_size != built_size_; }
  // Rebuilds io.Fonts and the backend's font texture. Call outside NewFrame/Render.
  void rebuild(float pixel_size);
  bool hasCjkFont() const { return cjk_loaded_; }

 private:
  std::set<ImWchar> chars_;
  ImVector<ImWchar> ranges_;  // must outlive the atlas build
  bool dirty_ = true;
  bool cjk_loaded_ = false;
  float built_size_ = 0.0f;
};

}  // namespace attn
