// The GUI's Qt side: the QApplication living next to GLFW, modal dialogs
// (file open/save, message boxes) and PNG writing. The only GUI file that
// includes Qt. Modals are opened by the main loop after a frame is swapped,
// never inside NewFrame/Render.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn {

class QtSession {
 public:
  // Call after glfwInit(). Pins QT_QPA_PLATFORM=xcb and resets LC_NUMERIC.
  QtSession();
  ~QtSession();  // not copyable: owns the QApplication

  // Called ~30 times a second while a modal is open, to keep the GLFW
  // window painted.
  void setRepaint(std::function<void()> repaint) { repaint_ = std::move(repaint); }
  void processEvents();

  // Empty optional when the user cancels. `filter` is a Qt name filter.
  std::optional<std::string> openFile(const std::string& title, const std::string& filter);
  // Save dialog for figures: PNG, SVG, PDF; adds the extension of the chosen filter.
  std::optional<std::string> saveFigure(const std::string& suggested_name);
  void showError(const std::string& title, const std::string& text);

 private:
  // Runs `body` (which opens a modal) with the repaint timer ticking.
  void withRepaint(const std::function<void()>& body);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::function<void()> repaint_;
  std::string last_dir_;
};

// Writes RGBA8 pixels (top row first) as a PNG; false with `error` on failure.
bool savePng(const std::vector<uint8_t>& rgba, int width, int height, const std::string& path, std::string& error);

}  // namespace attn
