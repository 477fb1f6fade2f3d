#version 330 core
// A screen-space quad in ImGui coordinates; uv addresses the data matrix
// ([0,1]² is the whole matrix, the visible window is set by zoom/pan).
layout(location = 0) in vec2 aPos;
layout(location = 1) in vec2 aUv;
uniform vec2 uDisplayPos;
uniform vec2 uDisplaySize;
out vec2 vUv;

void main() {
  vec2 ndc = (aPos - uDisplayPos) / uDisplaySize * 2.0 - 1.0;
  gl_Position = vec4(ndc.x, -ndc.y, 0.0, 1.0);
  vUv = aUv;
}
