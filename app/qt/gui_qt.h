// The GUI's Qt side: the QApplication living next to GLFW, modal dialogs
// (file open/save, message boxes) and PNG writing. The only GUI file that
// includes Qt. Modals are opened by the main loop after a frame is swapped,
// never inside NewFrame/Render.
#pragma once

#include "engine/model/model.h"

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
  // Save dialog for the interactive page (.html).
  std::optional<std::string> savePage(const std::string& suggested_name);
  void showError(const std::string& title, const std::string& text);

  // [SECTION] Real models
  // A model to open: a .safetensors file, or a folder ("Open this folder"
  // in the dialog). Empty optional when the user cancels.
  std::optional<std::string> openModel();
  // A modal progress dialog with Cancel while `busy()` holds; `progress()`
  // is 0..1; Cancel calls `cancel()` and the dialog waits for `busy()` to end.
  void progressWhile(const std::string& label, const std::function<bool()>& busy,
                     const std::function<float()>& progress, const std::function<void()>& cancel);
  // The model summary: architecture, sizes, parameter count, dtype, size on
  // disk and a table of its tensors (name, shape, dtype).
  void showModelInfo(const ModelInfo& info);
  // Text longer than the model's positions: explains and asks; true = truncate.
  bool askTruncate(int64_t tokens, int64_t limit);

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
