#include "widgets/colormap.h"

#include <algorithm>
#include <cmath>

namespace attn {
namespace {

// Each map is a few anchor colours sampled at equal steps along the
// published map, linearly interpolated to 256 entries.
struct Anchors {
  std::vector<uint32_t> rgb;
};

const Anchors& anchors(Colormap c) {
  static const Anchors viridis{{0x440154, 0x482878, 0x3e4989, 0x31688e, 0x26828e, 0x1f9e89, 0x35b779, 0x6ece58,
                                0xb5de2b, 0xfde725}};
  static const Anchors magma{{0x000004, 0x180f3d, 0x440f76, 0x721f81, 0x9e2f7f, 0xcd4071, 0xf1605d, 0xfd9668,
                              0xfeca8d, 0xfcfdbf}};
  static const Anchors blues{{0xf7fbff, 0xdeebf7, 0xc6dbef, 0x9ecae1, 0x6baed6, 0x4292c6, 0x2171b5, 0x08519c,
                              0x08306b}};
  static const Anchors gray{{0x000000, 0xffffff}};
  static const Anchors coolwarm{{0x3b4cc0, 0x6788ee, 0x9abbff, 0xc9d7f0, 0xedd1c2, 0xf7a889, 0xe26952, 0xb40426}};
  switch (c) {
    case Colormap::Viridis: return viridis;
    case Colormap::Magma: return magma;
    case Colormap::Blues: return blues;
    case Colormap::Gray: return gray;
    case Colormap::Coolwarm: return coolwarm;
  }
  return viridis;
}

std::array<Rgb8, 256> buildTable(Colormap c) {
  const std::vector<uint32_t>& a = anchors(c).rgb;
  std::array<Rgb8, 256> t{};
  const int n = static_cast<int>(a.size()) - 1;
  for (int i = 0; i < 256; ++i) {
    const float x = static_cast<float>(i) / 255.0f * static_cast<float>(n);
    const int lo = std::min(static_cast<int>(x), n - 1);
    const float f = x - static_cast<float>(lo);
    auto ch = [&](int shift) {
      const float p = static_cast<float>((a[lo] >> shift) & 0xff), q = static_cast<float>((a[lo + 1] >> shift) & 0xff);
      return static_cast<uint8_t>(std::lround(p + (q - p) * f));
    };
    t[i] = {ch(16), ch(8), ch(0)};
  }
  return t;
}

}  // namespace

const std::vector<Colormap>& allColormaps() {
  static const std::vector<Colormap> all = {Colormap::Viridis, Colormap::Magma, Colormap::Blues, Colormap::Gray,
                                            Colormap::Coolwarm};
  return all;
}

std::string colormapName(Colormap c) {
  switch (c) {
    case Colormap::Viridis: return "viridis";
    case Colormap::Magma: return "magma";
    case Colormap::Blues: return "blues";
    case Colormap::Gray: return "gray";
    case Colormap::Coolwarm: return "coolwarm";
  }
  return "viridis";
}

bool colormapFromName(const std::string& name, Colormap& out) {
  for (Colormap c : allColormaps())
    if (colormapName(c) == name) {
      out = c;
      return true;
    }
  return false;
}

bool colormapIsDiverging(Colormap c) { return c == Colormap::Coolwarm; }

const std::array<Rgb8, 256>& colormapTable(Colormap c) {
  static const std::array<std::array<Rgb8, 256>, 5> tables = {
      buildTable(Colormap::Viridis), buildTable(Colormap::Magma), buildTable(Colormap::Blues),
      buildTable(Colormap::Gray), buildTable(Colormap::Coolwarm)};
  return tables[static_cast<size_t>(c)];
}

Rgb8 colormapAt(Colormap c, float t) {
  const float x = std::clamp(std::isfinite(t) ? t : 0.0f, 0.0f, 1.0f);
  return colormapTable(c)[static_cast<size_t>(std::lround(x * 255.0f))];
}

}  // namespace attn

namespace attn {

Rgb8 headColor(int h) {
  static const uint32_t palette[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                     0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
  const uint32_t c = palette[static_cast<unsigned>(h) % 10];
  return {static_cast<uint8_t>(c >> 16), static_cast<uint8_t>(c >> 8), static_cast<uint8_t>(c)};
}

Rgb8 setColor(unsigned bits) {
  int high = 0;
  while (bits >> (high + 1)) ++high;
  if (bits & (bits - 1)) return headColor(high + 1);
  return headColor(high);
}

}  // namespace attn
