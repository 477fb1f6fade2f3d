// Small OpenGL helpers for custom drawing inside ImGui draw callbacks:
// program compilation that prints the driver log, and a save/restore of the
// GL state our callbacks touch (as imgui_impl_opengl3 does around its own).
#pragma once

#include <GL/glcorearb.h>

#include <string>

namespace attn::gl {

// Returns 0 and prints the driver's log to stderr when compiling or linking
// fails. `name` identifies the program in the message.
GLuint buildProgram(const char* name, const char* vertex_src, const char* fragment_src);

// Saves, on construction, the state a custom draw changes and restores it on
// destruction.
class StateBackup {
 public:
  StateBackup();
  ~StateBackup();
  StateBackup(const StateBackup&) = delete;
  StateBackup& operator=(const StateBackup&) = delete;

 private:
  GLint program_ = 0, vertex_array_ = 0, array_buffer_ = 0, active_texture_ = 0;
  GLint texture_[2] = {0, 0}, sampler_[2] = {0, 0};
  GLint blend_src_rgb_ = 0, blend_dst_rgb_ = 0, blend_src_alpha_ = 0, blend_dst_alpha_ = 0;
  GLint scissor_box_[4] = {0, 0, 0, 0};
  GLboolean blend_ = 0, scissor_ = 0, depth_ = 0, cull_ = 0;
};

}  // namespace attn::gl
