#include "app/export/html_page.h"

#include "embedded_page.h"
#include "engine/attention_math.h"
#include "engine/error.h"
#include "engine/parallel.h"
#include "widgets/colormap.h"

#include <QBuffer>
#include <QByteArray>
#include <QImage>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>

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

// Every map of the page one after the other; each map's offset goes in the page's META.
struct MapBytes {
  std::vector<uint8_t> bytes;
  // Appends `m` [rows, cols] (causal: row i's columns 0 … i only); returns its offset and its largest weight as read back.
  std::pair<int64_t, float> add(const Mat& m, bool causal) {
    const int64_t rows = m.rows(), cols = m.cols(), offset = static_cast<int64_t>(bytes.size());
    auto rowStart = [&](int64_t i) { return causal ? i * (i + 1) / 2 : i * cols; };
    bytes.resize(bytes.size() + static_cast<size_t>(rowStart(rows)));
    uint8_t* out = bytes.data() + offset;
    std::vector<uint8_t> top(static_cast<size_t>(rows), 0);
    parallelFor(rows, {}, [&](int64_t i) {
      const int64_t n = causal ? std::min(i + 1, cols) : cols;
      uint8_t* row = out + rowStart(i);
      uint8_t best = 0;
      for (int64_t j = 0; j < n; ++j) best = std::max(best, row[j] = weightByte(m(i, j)));
      top[static_cast<size_t>(i)] = best;
    });
    return {offset, byteWeight(*std::max_element(top.begin(), top.end()))};
  }
};

// gzip (RFC 1952) of `in`, as DecompressionStream("gzip") reads it.
std::string gzip(const std::vector<uint8_t>& in) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, MAX_WBITS + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::bad_alloc();
  std::string out(deflateBound(&z, static_cast<uLong>(in.size())), '\0');
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int r = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (r != Z_STREAM_END) throw std::bad_alloc();  // deflateBound leaves room for everything
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

// One kind of attention's META entry; its maps go into `bytes`.
nlohmann::json setMeta(const PageMaps& s, MapBytes& bytes) {
  nlohmann::json j = {{"name", s.name},     {"label", s.label},   {"rows", s.rows},         {"cols", s.cols},
                      {"layers", s.layers}, {"heads", s.heads},   {"triangle", s.causal}};
  // The figures' scale: log over ⌊log10 keys⌋ + 1 decades, 3 to 6 (widgets/value_range.h).
  const int decades = std::clamp(static_cast<int>(std::floor(std::log10(std::max<double>(1.0, static_cast<double>(s.cols.size()))))) + 1, 3, 6);
  j["scale"] = {{"mode", s.log_scale ? "log" : "linear"}, {"decades", decades}};
  auto maps = [&](const std::vector<const Mat*>& list, bool causal) {
    nlohmann::json offsets = nlohmann::json::array(), tops = nlohmann::json::array();
    for (const Mat* m : list) {
      if (!m) {
        offsets.push_back(nullptr);
        tops.push_back(0);
        continue;
      }
      const auto [offset, top] = bytes.add(*m, causal);
      offsets.push_back(offset);
      tops.push_back(top);
    }
    return std::pair{offsets, tops};
  };
  const auto [offsets, tops] = maps(s.maps, s.causal);
  j["maps"] = offsets;
  j["max"] = tops;
  j["pooled"] = nullptr;
  if (!s.pooled.empty()) {
    const auto [p_offsets, p_tops] = maps(s.pooled, false);
    j["pooled"] = {{"blocks", s.pooled.front()->rows()}, {"block", s.pooled_block}, {"labels", s.block_labels},
                   {"maps", p_offsets}, {"max", p_tops}};
  }
  j["rollout"] = nullptr;
  if (!s.rollout.empty()) {
    // A causal model's rollout, a product of lower-triangular maps, is lower-triangular too.
    const auto [r_offsets, r_tops] = maps(s.rollout, s.causal);
    j["rollout"] = {{"maps", r_offsets}, {"max", r_tops}, {"triangle", s.causal}};
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
  if (o.layer < 0 || o.layer >= c.sets.front().layers)
    throw InputError("--layer: expected 0.." + std::to_string(c.sets.front().layers - 1) + ", got " + std::to_string(o.layer));
  if (o.head < 0 || o.head >= c.sets.front().heads)
    throw InputError("--head: expected 0.." + std::to_string(c.sets.front().heads - 1) + ", got " + std::to_string(o.head));
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
  meta["focus"] = {{"set", 0}, {"layer", o.layer}, {"head", o.head}};
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
  page += "<script id=\"attnlab-meta\" type=\"application/json\">" + scriptSafe(meta.dump()) + "</script>\n";
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

}  // namespace attn
