#include "widgets/formula.h"

#include <algorithm>
#include <cctype>

namespace attn {
namespace {

enum class Level { Base, Sup, Sub };

struct Segment {
  std::string text;
  Level level = Level::Base;
};

// Bytes of the UTF-8 character starting at s[i].
size_t charLength(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  return std::min(n, s.size() - i);
}

// The argument of a script marker at s[i] (just after '^' or '_'); advances i.
std::string scriptArgument(const std::string& s, size_t& i, bool up) {
  if (i >= s.size()) return {};
  const char open = s[i];
  if (open == '{' || (up && open == '(')) {
    const char close = open == '{' ? '}' : ')';
    int depth = 0;
    for (size_t j = i; j < s.size(); ++j) {
      depth += s[j] == open ? 1 : s[j] == close ? -1 : 0;
      if (depth == 0) {
        std::string arg = s.substr(i + 1, j - i - 1);
        i = j + 1;
        return arg;
      }
    }
    // Unbalanced: the rest is literal.
  }
  const size_t start = i;
  if (std::isalnum(static_cast<unsigned char>(s[i]))) {
    while (i < s.size() && std::isalnum(static_cast<unsigned char>(s[i]))) ++i;
  } else {
    i += charLength(s, i);
  }
  return s.substr(start, i - start);
}

// Words (split at spaces) of segments.
std::vector<std::vector<Segment>> parseWords(const std::string& s) {
  std::vector<std::vector<Segment>> words(1);
  auto base = [&]() -> std::string& {
    std::vector<Segment>& w = words.back();
    if (w.empty() || w.back().level != Level::Base) w.push_back({});
    return w.back().text;
  };
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == ' ') {
      if (!words.back().empty()) words.emplace_back();
      ++i;
      continue;
    }
    if (c == '\\' && i + 1 < s.size() && (s[i + 1] == '^' || s[i + 1] == '_' || s[i + 1] == '\\')) {
      base() += s[i + 1];  // escaped: literal
      i += 2;
      continue;
    }
    // A marker with something before it in the word (not "_x" alone, not a trailing '^').
    if ((c == '^' || c == '_') && i + 1 < s.size() && s[i + 1] != ' ' && !words.back().empty()) {
      ++i;
      const bool up = c == '^';
      words.back().push_back({scriptArgument(s, i, up), up ? Level::Sup : Level::Sub});
      continue;
    }
    const size_t n = charLength(s, i);
    base() += s.substr(i, n);
    i += n;
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

// Runs of one word from x = 0; returns its width.
float layoutWord(const std::vector<Segment>& word, float px, const MeasureText& measure, std::vector<FormulaRun>& out) {
  float x = 0, script_start = 0, script_end = 0;
  Level last = Level::Base;
  for (const Segment& seg : word) {
    if (seg.level == Level::Base) {
      x = std::max(x, script_end);
      out.push_back({seg.text, x, 0.0f, 1.0f});
      x += measure(seg.text, 1.0f);
      script_end = x;
      last = Level::Base;
      continue;
    }
    // A second script after one of the other kind stacks on it.
    const bool stacks = last != Level::Base && last != seg.level;
    const float at = stacks ? script_start : std::max(x, script_end);
    const float dy = seg.level == Level::Sup ? -0.38f * px : 0.22f * px;
    out.push_back({seg.text, at, dy, kScriptScale});
    const float end = at + measure(seg.text, kScriptScale);
    script_start = at;
    script_end = stacks ? std::max(script_end, end) : end;
    x = script_end;
    last = seg.level;
  }
  return std::max(x, script_end);
}

}  // namespace

float formulaLineHeight(float px) { return px * 1.45f; }

std::vector<FormulaLine> layoutFormula(const std::string& text, float px, float max_width, const MeasureText& measure) {
  std::vector<FormulaLine> lines;
  const float space = measure(" ", 1.0f);
  for (const std::vector<Segment>& word : parseWords(text)) {
    std::vector<FormulaRun> runs;
    const float w = layoutWord(word, px, measure, runs);
    const bool fits = !lines.empty() && (max_width <= 0 || lines.back().width + space + w <= max_width);
    if (!fits) lines.emplace_back();
    FormulaLine& line = lines.back();
    const float x0 = line.runs.empty() ? 0.0f : line.width + space;
    for (size_t k = 0; k < runs.size(); ++k) {
      FormulaRun& r = runs[k];
      // Plain words join the plain run before them, so plain text stays whole
      // strings (one text element in an SVG, one search hit).
      const bool joins = k == 0 && !line.runs.empty() && line.runs.back().scale == 1.0f && r.scale == 1.0f &&
                         line.runs.back().dy == 0.0f && r.dy == 0.0f;
      if (joins) {
        line.runs.back().text += " " + r.text;
        continue;
      }
      r.x += x0;
      line.runs.push_back(std::move(r));
    }
    line.width = x0 + w;
  }
  return lines;
}

}  // namespace attn
