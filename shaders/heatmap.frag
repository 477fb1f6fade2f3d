#version 330 core
// Colourises an R32F data matrix at screen resolution: each fragment finds
// its cell, normalises the value into [0, 1] over uRange and looks the
// colour up in a 256×1 colormap texture. Cell borders appear when a cell is
// large on screen; NaN cells are grey.
in vec2 vUv;
uniform sampler2D uData;      // R32F [rows, cols], texel (col, row)
uniform sampler2D uLut;       // RGB8 256×1
uniform vec2 uRange;          // value at colormap 0 and 1
uniform int uMode;            // ScaleMode: 0 linear, 1 log, 2 power (widgets/value_range.h, scaleToUnit)
uniform int uDiverging;       // 1: the curve applies to |v| on each side of 0
uniform float uGamma;         // power
uniform float uDecades;       // log
uniform vec2 uDataSize;       // (cols, rows)
uniform float uCellPx;        // on-screen size of the smaller cell side
uniform vec4 uGridColor;
out vec4 fragColor;

float shape(float u) {
  if (uMode == 1) return u > 0.0 ? clamp(1.0 + log(u) / (log(10.0) * uDecades), 0.0, 1.0) : 0.0;
  if (uMode == 2) return pow(u, uGamma);
  return u;
}

float scaleToUnit(float v) {
  if (uDiverging == 1) {
    float u = clamp(abs(v) / uRange.y, 0.0, 1.0);
    return 0.5 + (v < 0.0 ? -0.5 : 0.5) * shape(u);
  }
  return shape(clamp((v - uRange.x) / (uRange.y - uRange.x), 0.0, 1.0));
}

void main() {
  vec2 cellf = vUv * uDataSize;
  ivec2 cell = clamp(ivec2(floor(cellf)), ivec2(0), ivec2(uDataSize) - 1);
  float v = texelFetch(uData, cell, 0).r;
  vec3 c;
  if (isnan(v) || isinf(v)) {
    c = vec3(0.5);
  } else {
    float t = scaleToUnit(v);
    c = texture(uLut, vec2((t * 255.0 + 0.5) / 256.0, 0.5)).rgb;
  }
  if (uCellPx >= 14.0) {
    vec2 f = fract(cellf);
    vec2 px = fwidth(cellf);
    if (f.x < px.x || f.y < px.y) c = mix(c, uGridColor.rgb, uGridColor.a);
  }
  fragColor = vec4(c, 1.0);
}
