// Colormaps as data: one table per map, shared by the GL shader (uploaded
// as a 256×1 lookup texture) and the QPainter figure export, so the screen
// and the exported figure use the same colours.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

enum class Colormap { Viridis, Magma, Blues, Gray, Coolwarm };

struct Rgb8 {
  uint8_t r, g, b;
};

const std::vector<Colormap>& allColormaps();
std::string colormapName(Colormap c);            // "viridis", ...
bool colormapFromName(const std::string& name, Colormap& out);
bool colormapIsDiverging(Colormap c);            // centred on 0 (signed data)

// 256 entries, t = i/255.
const std::array<Rgb8, 256>& colormapTable(Colormap c);
Rgb8 colormapAt(Colormap c, float t);  // t clamped to [0, 1]

}  // namespace attn

namespace attn {

// Categorical colour of head h (token-lines view, legends); cycles after 10.
Rgb8 headColor(int h);

// Colour of a connection admitted by the sub-patterns in `bits` (≠ 0;
// SparseRows::sets): one bit s → headColor(s); several → the head colour
// after the highest one, so with two sets "both" is headColor(2), the colour
// the layer × head category picture gives "A¹ ∪ A²". GUI and figures share it.
Rgb8 setColor(unsigned bits);

}  // namespace attn
