// Helpers for tests that run the real attnlab binary.
#pragma once

#include "widgets/colormap.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attn::test {

struct RunResult {
  int status = -1;  // exit status, or -1 if killed by a signal
  std::string out, err;
  double peak_rss_bytes = 0;  // the process's peak resident memory (wait4's ru_maxrss)
};

// Runs ATTNLAB_BIN with `args` (no shell), extra environment `env`
// ("KEY=VALUE"), and a timeout in seconds (killed after it: status -1).
RunResult runAttnlab(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                     int timeout_seconds = 120);
// The same for any program, by its full path (a tool the test reads a file with).
RunResult runProgram(const std::string& program, const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {}, int timeout_seconds = 120);

// A fresh empty folder under the system temp dir, removed by the destructor.
struct TempDir {
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path path;
  std::filesystem::path operator/(const std::string& name) const { return path / name; }
};

// The whole file as bytes ("" when it cannot be read).
std::string slurp(const std::filesystem::path& p);

// Number of '\n' in `s` (an error message must be exactly one line).
int countLines(const std::string& s);

// Every regular file below `dir`, as relative paths, sorted.
std::vector<std::string> listFiles(const std::filesystem::path& dir);

// The commands that install the npm reference tokenizers into `npm_dir` and
// write the ids they give (scripts/test.sh's reference_ids step), as one line
// for the message of a test whose reference file is missing.
std::string referenceIdsCommand(const std::filesystem::path& npm_dir);

// A .npy file of the given dtype ('<i8', '<i4', '<f4'), read by hand: the
// engine's reader accepts float inputs only, on purpose. Fills `shape`;
// a test failure when the dtype is another. Defined for int64_t, int32_t, float.
template <class T>
std::vector<T> readTyped(const std::filesystem::path& path, const std::string& descr, std::vector<int64_t>& shape);

// An Xvfb server started with -displayfd; DISPLAY string ":N". Stopped by
// the destructor. `ok()` is false (with `error`) when Xvfb cannot start.
struct Xvfb {
  explicit Xvfb(int width = 1920, int height = 1200);
  ~Xvfb();
  Xvfb(const Xvfb&) = delete;
  Xvfb& operator=(const Xvfb&) = delete;
  bool ok() const { return pid > 0 && !display.empty(); }
  int pid = -1;
  std::string display, error;
};

// The source tree (assets/, tests/data/).
std::filesystem::path sourceDir();

// The shipped lessons: assets/lessons/ in the source tree, and their names (file stems), sorted.
std::filesystem::path lessonDir();
std::vector<std::string> shippedLessonNames();

// poppler-utils' pdftotext (installed by scripts/deps.sh), for reading a PDF's words back.
inline constexpr const char* kPdfToText = "/usr/bin/pdftotext";
// &lt; &gt; &quot; &apos; &#39; &amp; as the characters they stand for.
std::string unescapeXml(std::string s);
// The first page's size in points (pdftotext's reading); false when unreadable.
bool pdfPageSize(const std::string& pdf, double& width, double& height);
// True when `s` ends in '…'.
bool endsWithEllipsis(const std::string& s);
// What is wrong with the words of a PDF: one line per word outside its page
// (0.5 pt tolerance) and per line ending in '…'. Empty when all is well;
// `words` counts the words read, so a page with no text cannot pass unseen.
std::vector<std::string> pdfTextProblems(const std::string& pdf, int& words);

// The text of an SVG figure: every <text> element's content, unescaped, in
// the order drawn (a wrapped label is one element per line).
std::vector<std::string> svgTexts(const std::string& svg);

// The heatmap cells of an SVG figure (one filled rect per cell, as the figure
// export writes matrices of modest size): every grid of `rows` × `cols` equal
// rects side by side, in reading order (top to bottom, then left to right).
struct SvgGrid {
  double x = 0, y = 0, cell_w = 0, cell_h = 0;  // the top left cell's corner and the cells' spacing, in SVG units
  std::vector<uint32_t> rgb;                    // fill colours 0xRRGGBB, row by row
};
std::vector<SvgGrid> svgCellGrids(const std::string& svg, int64_t rows, int64_t cols);
// Where `cells` (colours 0xRRGGBB, row-major) do not show `weights` (as
// many, row-major) through `table` over [0, hi]: one line per cell whose
// colour is not an entry within one step of 255·w/hi, naming the cell, the
// weight and the weight the colour stands for. Empty when all agree. A cell
// of weight exactly 0 may show `masked_rgb` instead (a masked key's colour).
std::vector<std::string> cellColourProblems(const std::vector<uint32_t>& cells, const std::vector<float>& weights, float hi,
                                            const std::array<Rgb8, 256>& table, int64_t cols, uint32_t masked_rgb = 0xe1e1e4);

}  // namespace attn::test
