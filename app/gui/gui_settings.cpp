#include "app/gui/gui_settings.h"

#include "app/shared/config_dir.h"

#include "engine/error.h"
#include "engine/npy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>

namespace attn {

void rememberModel(GuiSettings& s, const std::string& path) {
  std::erase(s.recent_models, path);
  s.recent_models.insert(s.recent_models.begin(), path);
  if (s.recent_models.size() > kMaxRecentModels) s.recent_models.resize(kMaxRecentModels);
}

std::filesystem::path settingsPath() { return userConfigDir() / "settings.json"; }

namespace {

// A number field clamped to [lo, hi], read as double: a float conversion of a
// value beyond float's range (1e300) would be undefined behaviour.
float clampedNumber(const nlohmann::json& j, const char* key, float def, float lo, float hi) {
  const double v = j.value(key, static_cast<double>(def));
  return static_cast<float>(std::clamp(v, static_cast<double>(lo), static_cast<double>(hi)));
}

}  // namespace

GuiSettings parseSettings(const std::string& text, const std::string& where, std::string& warning) {
  GuiSettings s;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object()) throw std::runtime_error("expected a JSON object");
    s.ui_scale = clampedNumber(j, "ui_scale", s.ui_scale, 0.5f, 4.0f);
    s.font_size = clampedNumber(j, "font_size", s.font_size, 8.0f, 48.0f);
    s.dark = j.value("theme", std::string("dark")) != "light";
    s.export_screen_theme = j.value("export_theme", std::string("light")) == "screen";
    Colormap c;
    if (colormapFromName(j.value("colormap", std::string()), c)) s.colormap = c;
    if (j.contains("recent_models"))
      for (const nlohmann::json& p : j.at("recent_models"))
        if (p.is_string() && s.recent_models.size() < kMaxRecentModels) s.recent_models.push_back(p.get<std::string>());
  } catch (const std::exception& e) {
    warning = "ignoring settings file " + where + ": " + e.what();
    return GuiSettings{};
  }
  return s;
}

GuiSettings loadSettings(const std::filesystem::path& path, std::string& warning) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return GuiSettings{};
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parseSettings(text, path.string(), warning);
}

bool saveSettings(const GuiSettings& s, const std::filesystem::path& path, std::string& error) {
  const nlohmann::json j = {{"ui_scale", s.ui_scale},
                            {"font_size", s.font_size},
                            {"theme", s.dark ? "dark" : "light"},
                            {"export_theme", s.export_screen_theme ? "screen" : "light"},
                            {"colormap", colormapName(s.colormap)},
                            {"recent_models", s.recent_models}};
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  try {
    writeFileAtomic(path, j.dump(2) + "\n");
  } catch (const InputError& e) {
    error = e.what();
    return false;
  }
  return true;
}

}  // namespace attn
