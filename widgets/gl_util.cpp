#include "widgets/gl_util.h"

#include <cstdio>
#include <vector>

namespace attn::gl {

namespace {

bool checkShader(GLuint shader, const char* name, const char* stage) {
  GLint ok = 0, len = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &len);
  if (ok == GL_TRUE) return true;
  std::vector<char> log(static_cast<size_t>(len > 1 ? len : 1), '\0');
  if (len > 1) glGetShaderInfoLog(shader, len, nullptr, log.data());
  std::fprintf(stderr, "attnlab: failed to compile %s %s shader:\n%s\n", name, stage, log.data());
  return false;
}

}  // namespace

GLuint buildProgram(const char* name, const char* vertex_src, const char* fragment_src) {
  const GLuint vs = glCreateShader(GL_VERTEX_SHADER);
  glShaderSource(vs, 1, &vertex_src, nullptr);
  glCompileShader(vs);
  const GLuint fs = glCreateShader(GL_FRAGMENT_SHADER);
  glShaderSource(fs, 1, &fragment_src, nullptr);
  glCompileShader(fs);
  const bool compiled = checkShader(vs, name, "vertex") && checkShader(fs, name, "fragment");
  GLuint program = 0;
  if (compiled) {
    program = glCreateProgram();
    glAttachShader(program, vs);
    glAttachShader(program, fs);
    glLinkProgram(program);
    GLint ok = 0, len = 0;
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    if (ok != GL_TRUE) {
      glGetProgramiv(program, GL_INFO_LOG_LENGTH, &len);
      std::vector<char> log(static_cast<size_t>(len > 1 ? len : 1), '\0');
      if (len > 1) glGetProgramInfoLog(program, len, nullptr, log.data());
      std::fprintf(stderr, "attnlab: failed to link %s program:\n%s\n", name, log.data());
      glDeleteProgram(program);
      program = 0;
    } else {
      glDetachShader(program, vs);
      glDetachShader(program, fs);
    }
  }
  glDeleteShader(vs);
  glDeleteShader(fs);
  return program;
}

StateBackup::StateBackup() {
  glGetIntegerv(GL_CURRENT_PROGRAM, &program_);
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &vertex_array_);
  glGetIntegerv(GL_ARRAY_BUFFER_BINDING, &array_buffer_);
  glGetIntegerv(GL_ACTIVE_TEXTURE, &active_texture_);
  for (int unit = 0; unit < 2; ++unit) {
    glActiveTexture(GL_TEXTURE0 + unit);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture_[unit]);
    glGetIntegerv(GL_SAMPLER_BINDING, &sampler_[unit]);
  }
  glGetIntegerv(GL_BLEND_SRC_RGB, &blend_src_rgb_);
  glGetIntegerv(GL_BLEND_DST_RGB, &blend_dst_rgb_);
  glGetIntegerv(GL_BLEND_SRC_ALPHA, &blend_src_alpha_);
  glGetIntegerv(GL_BLEND_DST_ALPHA, &blend_dst_alpha_);
  glGetIntegerv(GL_SCISSOR_BOX, scissor_box_);
  blend_ = glIsEnabled(GL_BLEND);
  scissor_ = glIsEnabled(GL_SCISSOR_TEST);
  depth_ = glIsEnabled(GL_DEPTH_TEST);
  cull_ = glIsEnabled(GL_CULL_FACE);
}

StateBackup::~StateBackup() {
  glUseProgram(static_cast<GLuint>(program_));
  glBindVertexArray(static_cast<GLuint>(vertex_array_));
  glBindBuffer(GL_ARRAY_BUFFER, static_cast<GLuint>(array_buffer_));
  for (int unit = 0; unit < 2; ++unit) {
    glActiveTexture(GL_TEXTURE0 + unit);
    glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(texture_[unit]));
    glBindSampler(static_cast<GLuint>(unit), static_cast<GLuint>(sampler_[unit]));
  }
  glActiveTexture(static_cast<GLenum>(active_texture_));
  glBlendFuncSeparate(static_cast<GLenum>(blend_src_rgb_), static_cast<GLenum>(blend_dst_rgb_),
                      static_cast<GLenum>(blend_src_alpha_), static_cast<GLenum>(blend_dst_alpha_));
  auto set = [](GLenum cap, GLboolean on) { on ? glEnable(cap) : glDisable(cap); };
  set(GL_BLEND, blend_);
  set(GL_SCISSOR_TEST, scissor_);
  set(GL_DEPTH_TEST, depth_);
  set(GL_CULL_FACE, cull_);
  glScissor(scissor_box_[0], scissor_box_[1], scissor_box_[2], scissor_box_[3]);
}

}  // namespace attn::gl
