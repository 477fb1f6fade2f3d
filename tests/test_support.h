// Helpers for tests that run the real attnlab binary.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace attn::test {

struct RunResult {
  int status = -1;  // exit status, or -1 if killed by a signal
  std::string out, err;
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

}  // namespace attn::test
