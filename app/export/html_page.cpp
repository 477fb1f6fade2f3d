#include "app/export/html_page.h"

#include "app/export/model_kinds.h"

#include "embedded_page.h"
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/parallel.h"
#include "widgets/colormap.h"
#include "widgets/value_range.h"

#include <QBuffer>
#include <QByteArray>
#include <QImage>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace attn {

// [SECTION] The byte per weight

uint8_t weightByte(float w) {
  if (!(w >= 1e-4f)) return w >= 5e-5f ? 1 : 0;  // below the four decades: the nearer of 0 and 10^−4
  // 254 steps over four decades: b − 1 = 63.5·(log10 w + 4), rounded.
  const float steps = 63.5f * (std::log10(w) + 4.0f);
  return static_cast<uint8_t>(1 + std::clamp(std::lround(steps), 0L, 254L));
}

float byteWeight(uint8_t b) { return b == 0 ? 0.0f : std::pow(10.0f, -4.0f + static_cast<float>(b - 1) / 63.5f); }

namespace {

// [SECTION] The maps' bytes

// Bits per byte of bytes counted in `count` (Shannon, order 0): what gzip's Huffman codes approach on bytes that
// do not repeat.
double bitsPerByte(const std::array<size_t, 256>& count) {
  double n = 0, bits = 0;
  for (const size_t c : count) n += static_cast<double>(c);
  for (const size_t c : count)
    if (c > 0) bits -= static_cast<double>(c) * std::log2(static_cast<double>(c) / n);
  return n > 0 ? bits / n : 0.0;
}

// Every map of the page one after the other; each map's offset goes in the page's META.
struct MapBytes {
  std::vector<uint8_t> bytes;
  struct Added {
    int64_t offset;
    float top;  // its largest weight, as read back
    bool up;    // stored with the Up filter
  };
  // Appends `m` [rows, cols] (causal: row i's columns 0 … i only).
  Added add(const Mat& m, bool causal) {
    const int64_t rows = m.rows(), cols = m.cols(), offset = static_cast<int64_t>(bytes.size());
    auto rowStart = [&](int64_t i) { return causal ? i * (i + 1) / 2 : i * cols; };
    auto rowLength = [&](int64_t i) { return causal ? std::min(i + 1, cols) : cols; };
    const size_t size = static_cast<size_t>(rowStart(rows));
    bytes.resize(bytes.size() + size);
    uint8_t* out = bytes.data() + offset;
    std::vector<uint8_t> top(static_cast<size_t>(rows), 0);
    parallelFor(rows, {}, [&](int64_t i) {
      uint8_t* row = out + rowStart(i);
      uint8_t best = 0;
      for (int64_t j = 0; j < rowLength(i); ++j) best = std::max(best, row[j] = weightByte(m(i, j)));
      top[static_cast<size_t>(i)] = best;
    });
    // PNG's Up filter: row i as its bytes minus row i − 1's (mod 256) where both have them, kept when that
    // leaves fewer bits per byte. A head's rows resemble each other (a sink column, a band, a key every
    // query reads), and gzip codes the small differences in fewer bits; the page adds them back. Maps whose
    // rows are unrelated keep their bytes (a difference of two would spread wider).
    // The filtered bytes are counted first and written only when chosen, bottom row first (each row's
    // difference reads the row above still unfiltered).
    auto upByte = [&](int64_t i, int64_t j) {
      return static_cast<uint8_t>(i > 0 && j < rowLength(i - 1) ? out[rowStart(i) + j] - out[rowStart(i - 1) + j]
                                                                 : out[rowStart(i) + j]);
    };
    std::array<size_t, 256> raw{}, up{};
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < rowLength(i); ++j) ++raw[out[rowStart(i) + j]], ++up[upByte(i, j)];
    const bool filtered = bitsPerByte(up) < bitsPerByte(raw);
    if (filtered)
      for (int64_t i = rows - 1; i > 0; --i)
        for (int64_t j = 0; j < rowLength(i - 1); ++j) out[rowStart(i) + j] = upByte(i, j);
    return {offset, top.empty() ? 0.0f : byteWeight(*std::max_element(top.begin(), top.end())), filtered};
  }
};

// gzip (RFC 1952) of `in`, as DecompressionStream("gzip") reads it; in pieces
// of 1 GiB at most, which zlib's 32-bit counts hold.
std::string gzip(const std::vector<uint8_t>& in) {
  z_stream z{};
  // Z_RLE: matches at distance 1 only, the runs the Up filter and the masked cells leave. On GPT-2-shaped maps
  // it gives 8 % fewer bytes than the default strategy, ten times as fast (its hash chains grow long on runs).
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, MAX_WBITS + 16, 8, Z_RLE) != Z_OK)
    throw std::runtime_error("gzip: zlib could not start (" + std::string(zError(Z_MEM_ERROR)) + ")");
  constexpr size_t kPiece = size_t{1} << 30;
  std::string out;
  std::vector<char> chunk(size_t{1} << 20);
  size_t at = 0;
  int r = Z_OK;
  while (r != Z_STREAM_END) {
    if (z.avail_in == 0 && at < in.size()) {
      const size_t n = std::min(kPiece, in.size() - at);
      z.next_in = const_cast<Bytef*>(in.data() + at);
      z.avail_in = static_cast<uInt>(n);
      at += n;
    }
    z.next_out = reinterpret_cast<Bytef*>(chunk.data());
    z.avail_out = static_cast<uInt>(chunk.size());
    r = deflate(&z, at == in.size() ? Z_FINISH : Z_NO_FLUSH);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) break;
    out.append(chunk.data(), chunk.size() - z.avail_out);
  }
  deflateEnd(&z);
  if (r != Z_STREAM_END) throw std::runtime_error("gzip: zlib failed (" + std::string(zError(r)) + ")");
  return out;
}

std::string base64(const std::string& bytes) {
  return QByteArray::fromRawData(bytes.data(), static_cast<qsizetype>(bytes.size())).toBase64().toStdString();
}

// The picture [H, W, 3] in [0, 1] as a PNG data URL.
std::string pictureUrl(const Array& a) {
  const int h = static_cast<int>(a.shape[0]), w = static_cast<int>(a.shape[1]);
  QImage img(w, h, QImage::Format_RGB888);
  for (int y = 0; y < h; ++y) {
    uchar* line = img.scanLine(y);
    for (int x = 0; x < w * 3; ++x)
      line[x] = static_cast<uchar>(std::lround(255.0f * std::clamp(a.data[static_cast<size_t>(y) * w * 3 + x], 0.0f, 1.0f)));
  }
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  img.save(&buffer, "PNG");
  return "data:image/png;base64," + png.toBase64().toStdString();
}

std::string hex(const Rgb8& c) {
  char s[8];
  std::snprintf(s, sizeof s, "#%02x%02x%02x", c.r, c.g, c.b);
  return s;
}

// Whether every weight above the diagonal would be stored as 0: what keeping only the lower triangle drops.
// A file's meta.json may call maps causal that are not; then the page keeps whole rows.
bool upperDropsNothing(const std::vector<const Mat*>& maps) {
  for (const Mat* m : maps)
    if (m)
      for (int64_t i = 0; i < m->rows(); ++i)
        for (int64_t j = i + 1; j < m->cols(); ++j)
          if (weightByte((*m)(i, j)) != 0) return false;
  return true;
}

// One kind of attention's META entry; its maps go into `bytes`.
nlohmann::json setMeta(const PageMaps& s, MapBytes& bytes) {
  for (const Mat* m : s.maps)
    if (m && (m->rows() != static_cast<int64_t>(s.rows.size()) || m->cols() != static_cast<int64_t>(s.cols.size())))
      throw std::logic_error("page: a map of " + s.name + " is not [rows, cols]");
  const bool triangle = s.causal && upperDropsNothing(s.maps) && upperDropsNothing(s.rollout);
  nlohmann::json j = {{"name", s.name},     {"label", s.label},   {"rows", s.rows},         {"cols", s.cols},
                      {"layers", s.layers}, {"heads", s.heads},   {"triangle", triangle}};
  // The figures' scale for this many keys (a log scale's decades grow with them).
  ColorScale scale;
  scale.kind = s.log_scale ? ScaleKind::Log : ScaleKind::Linear;
  const ValueRange range = withScale({}, scale, static_cast<int64_t>(s.cols.size()), nullptr, 0);
  j["scale"] = {{"mode", s.log_scale ? "log" : "linear"}, {"decades", range.decades}};
  // Each list's offsets (null: a map the page does not hold), largest weights and Up filters.
  auto maps = [&](const std::vector<const Mat*>& list, bool causal) {
    nlohmann::json out = {{"maps", nlohmann::json::array()}, {"max", nlohmann::json::array()}, {"up", nlohmann::json::array()}};
    for (const Mat* m : list) {
      const MapBytes::Added a = m ? bytes.add(*m, causal) : MapBytes::Added{-1, 0.0f, false};
      out["maps"].push_back(m ? nlohmann::json(a.offset) : nlohmann::json(nullptr));
      out["max"].push_back(a.top);
      out["up"].push_back(a.up);
    }
    return out;
  };
  j.update(maps(s.maps, triangle));
  j["pooled"] = nullptr;
  if (!s.pooled.empty()) {
    j["pooled"] = maps(s.pooled, false);
    j["pooled"].update({{"blocks", s.pooled.front()->rows()}, {"block", s.pooled_block}, {"labels", s.block_labels}});
  }
  j["rollout"] = nullptr;
  if (!s.rollout.empty()) {
    // A causal model's rollout, a product of lower-triangular maps, is lower-triangular too.
    j["rollout"] = maps(s.rollout, triangle);
    j["rollout"]["triangle"] = triangle;
  }
  j["table"] = {{"columns", s.table_columns}, {"rows", s.table_rows}};
  return j;
}

// `text` inside <script>: JSON with every "<" escaped, so no "</script>" or "<!--" ends or bends it.
std::string scriptSafe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (const char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

std::string htmlEscaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

// [SECTION] Writing

std::string htmlPage(const PageContent& c, const PageOptions& o) {
  if (c.sets.empty()) throw InputError("--format html: nothing to show");
  if (o.max_bytes > kMaxPageBytes)
    throw InputError("--max-bytes: expected at most " + std::to_string(kMaxPageBytes) +
                     " (a browser holds the page's maps as one string, at most 512 MiB), got " + std::to_string(o.max_bytes));
  size_t focus = 0;  // the first, or the one named
  for (size_t k = 0; k < c.sets.size(); ++k)
    if (c.sets[k].name == o.set) focus = k;
  const PageMaps& f = c.sets[focus];
  if (o.layer < 0 || o.layer >= f.layers)
    throw InputError("--layer: expected 0.." + std::to_string(f.layers - 1) + ", got " + std::to_string(o.layer));
  if (o.head < 0 || o.head >= f.heads)
    throw InputError("--head: expected 0.." + std::to_string(f.heads - 1) + ", got " + std::to_string(o.head));
  // No memory check of its own: the maps are in memory already, at four bytes a weight; the page's take one
  // (and gzip's output less).
  MapBytes bytes;
  const std::string title = o.title.value_or(c.title);
  nlohmann::json meta = {{"format", 1}, {"title", title}, {"subtitle", c.subtitle}, {"kind", c.kind}, {"note", c.note}};
  char bound[200];
  std::snprintf(bound, sizeof bound,
                "Weights are stored as one byte on a log scale over four decades: each is read back within %.2f %% "
                "(within 10\xE2\x81\xBB\xE2\x81\xB4 below 10\xE2\x81\xBB\xE2\x81\xB4).",
                kPageRelative * 100);
  meta["quantisation"] = {{"levels", 255}, {"decades", 4}, {"relative", kPageRelative}, {"absolute", kPageAbsolute}, {"text", bound}};
  nlohmann::json colours = nlohmann::json::array();
  for (const Rgb8& rgb : colormapTable(o.colormap)) colours.push_back(hex(rgb));
  meta["colormap"] = colours;
  meta["sets"] = nlohmann::json::array();
  for (const PageMaps& s : c.sets) meta["sets"].push_back(setMeta(s, bytes));
  meta["focus"] = {{"set", focus}, {"layer", o.layer}, {"head", o.head}};
  meta["picture"] = nullptr;
  if (c.picture)
    meta["picture"] = {{"src", pictureUrl(*c.picture)}, {"width", c.picture->shape[1]}, {"height", c.picture->shape[0]},
                       {"grid", {c.grid_h, c.grid_w}}, {"cls", true}};
  const std::string maps = base64(gzip(bytes.bytes));
  bytes.bytes = {};

  std::string page;
  page.reserve(maps.size() + 400000);
  page += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width\">\n<title>" + htmlEscaped(title) + "</title>\n<style>\n";
  page += kPage_page_css;
  page += "</style>\n</head><body>\n";
  page += kPage_body_html;
  page += "<script id=\"attnlab-meta\" type=\"application/json\">" + scriptSafe(meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) + "</script>\n";
  page += "<script id=\"attnlab-maps\" type=\"text/plain\">";
  page += maps;
  page += "</script>\n<script>\n";
  page += kPage_page_js;
  page += "</script>\n</body></html>\n";
  if (static_cast<int64_t>(page.size()) > o.max_bytes)
    throw InputError("--max-bytes: the page would be " + formatBytes(static_cast<double>(page.size())) + " (" +
                     std::to_string(page.size()) + " bytes), over the limit of " + std::to_string(o.max_bytes) +
                     " bytes: --max-bytes " + std::to_string(page.size()) + " admits it" +
                     (c.note.empty() ? "" : ", or name fewer heads with --heads"));
  return page;
}

std::string modelPage(const ModelOutput& out, const PageRequest& r, const PageOptions& o) {
  const ModelKindInfo& kind = modelKindOf(out);
  PageContent c = kind.page(out, r);
  c.kind = kind.name;
  return htmlPage(c, o);
}

}  // namespace attn
