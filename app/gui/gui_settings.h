// GUI preferences remembered between runs: a small JSON file at
// $XDG_CONFIG_HOME/attnlab/settings.json (else ~/.config/attnlab/...).
// A missing or corrupt file gives the defaults and a warning, never an error.
#pragma once

#include "widgets/colormap.h"

#include <filesystem>
#include <string>
#include <vector>

namespace attn {

struct GuiSettings {
  float ui_scale = 1.0f;    // widget sizes and spacing (projectors: 1.5–2)
  float font_size = 17.0f;  // pixels at scale 1
  bool dark = true;
  bool export_screen_theme = false;  // exported figures are light (for paper) unless this keeps the screen's theme
  Colormap colormap = Colormap::Viridis;
  std::vector<std::string> recent_models;  // most recent first, at most kMaxRecentModels

  bool operator==(const GuiSettings&) const = default;
};

constexpr size_t kMaxRecentModels = 8;
// Moves `path` to the front of the recent-models list.
void rememberModel(GuiSettings& s, const std::string& path);

std::filesystem::path settingsPath();  // settings.json in userConfigDir() (app/shared/config_dir.h)
// The settings file's text; `where` names it in the warning. On a corrupt
// file: defaults, and `warning` says what was wrong.
GuiSettings parseSettings(const std::string& text, const std::string& where, std::string& warning);
GuiSettings loadSettings(const std::filesystem::path& path, std::string& warning);
// Writes a temp file and renames; false (with `error`) when it cannot.
bool saveSettings(const GuiSettings& s, const std::filesystem::path& path, std::string& error);

}  // namespace attn
