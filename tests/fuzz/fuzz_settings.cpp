// libFuzzer target: the GUI's settings file. Any text gives settings (the
// defaults and a warning when it is corrupt), never an exception, and the
// values are always within the ranges the GUI can draw with.
#include "app/gui/gui_settings.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string warning;
  const attn::GuiSettings s = attn::parseSettings(text, "settings.json", warning);
  if (!(s.ui_scale >= 0.5f && s.ui_scale <= 4.0f)) std::abort();
  if (!(s.font_size >= 8.0f && s.font_size <= 48.0f)) std::abort();
  if (s.recent_models.size() > attn::kMaxRecentModels) std::abort();
  if (!warning.empty() && !(s == attn::GuiSettings{})) std::abort();  // corrupt: exactly the defaults
  return 0;
}
