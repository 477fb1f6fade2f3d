// The README's pictures are made by the commands their captions give: each
// picture's caption holds an `attnlab …` command writing that very file, and
// the command, run with its output in a temp folder, writes a PNG of the
// picture's size that looks like it (scripts/readme_images.sh runs the same
// commands to regenerate them). And the window opens the README's example,
// the shipped T5, on a sentence it translates. With the GUI tests: both start
// the window under Xvfb, which the sanitizer run leaves out.
#include "tests/test_support.h"

#include <QImage>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace attn::test {
namespace {

struct CaptionCommand {
  std::string picture;            // assets/readme/NAME.png
  std::vector<std::string> args;  // after "attnlab"
};

// Every picture of the README with the command its caption gives (none: empty args).
std::vector<CaptionCommand> captionCommands() {
  const std::string readme = slurp(sourceDir() / "README.md");
  const std::regex picture(R"(!\[([^\]]*)\]\((assets/readme/[^)]+\.png)\))"), command("`attnlab ([^`]+)`");
  std::vector<CaptionCommand> out;
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), picture); it != std::sregex_iterator(); ++it) {
    CaptionCommand c{(*it)[2].str(), {}};
    const std::string caption = (*it)[1].str();
    std::smatch m;
    if (std::regex_search(caption, m, command)) {
      std::istringstream words(m[1].str());
      for (std::string w; words >> w;) c.args.push_back(w);
    }
    out.push_back(c);
  }
  return out;
}

// The share of pixels that differ by more than a few levels once both
// pictures are shrunk 8 times (a clock or a font's hinting stays under it,
// another layout or another input does not).
double differingShare(const QImage& a, const QImage& b) {
  const QSize small(std::max(1, a.width() / 8), std::max(1, a.height() / 8));
  const QImage x = a.convertToFormat(QImage::Format_RGB32).scaled(small, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
  const QImage y = b.convertToFormat(QImage::Format_RGB32).scaled(small, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
  size_t n = 0;
  for (int r = 0; r < x.height(); ++r)
    for (int c = 0; c < x.width(); ++c) {
      const QRgb p = x.pixel(c, r), q = y.pixel(c, r);
      n += std::max({std::abs(qRed(p) - qRed(q)), std::abs(qGreen(p) - qGreen(q)), std::abs(qBlue(p) - qBlue(q))}) > 24;
    }
  return static_cast<double>(n) / (static_cast<double>(x.width()) * x.height());
}

TEST(Readme, EachPictureIsMadeByTheCommandItsCaptionGives) {
  const std::vector<CaptionCommand> commands = captionCommands();
  ASSERT_GE(commands.size(), 2u) << "the README shows the window and a figure";
  for (const CaptionCommand& c : commands) {
    ASSERT_FALSE(c.args.empty()) << c.picture << ": its caption gives no `attnlab …` command";
    // The command writes the picture itself (--out or --screenshot): here into a temp folder instead.
    const TempDir dir;
    const std::string made = (dir / "made.png").string();
    std::vector<std::string> args = c.args;
    int outputs = 0;
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if ((args[i] == "--out" || args[i] == "--screenshot") && args[i + 1] == c.picture) {
        args[i + 1] = made;
        ++outputs;
      }
    ASSERT_EQ(outputs, 1) << c.picture << ": the caption's command does not write " << c.picture;
    std::vector<std::string> env = {"XDG_CONFIG_HOME=" + (dir / "config").string()};
    std::unique_ptr<Xvfb> xvfb;
    if (args[0] == "gui") {
      xvfb = std::make_unique<Xvfb>();
      ASSERT_TRUE(xvfb->ok()) << xvfb->error;
      env.insert(env.end(), {"DISPLAY=" + xvfb->display, "QT_QPA_PLATFORM="});
    }
    const RunResult r = runAttnlab(args, env);
    ASSERT_EQ(r.status, 0) << c.picture << ": " << r.err;
    const QImage shown(QString::fromStdString((sourceDir() / c.picture).string())), drawn(QString::fromStdString(made));
    ASSERT_FALSE(drawn.isNull()) << c.picture << ": the caption's command wrote no PNG";
    ASSERT_EQ(drawn.size(), shown.size()) << c.picture << ": the caption's command draws another size";
    EXPECT_LT(differingShare(drawn, shown), 0.02)
        << c.picture << " is not what its caption's command draws (scripts/readme_images.sh regenerates it)";
  }
}

// The window on the T5 as the README opens it: its sentence, its translation, no <unk>.
TEST(Readme, TheWindowOpensTheShippedT5OnItsSentence) {
  const TempDir dir;
  Xvfb xvfb;
  ASSERT_TRUE(xvfb.ok()) << xvfb.error;
  const RunResult r = runAttnlab({"gui", "--model", "shipped:t5-toy", "--frames", "8", "--size", "1280x720", "--screenshot",
                                  (dir / "s.png").string(), "--describe", (dir / "s.json").string()},
                                 {"DISPLAY=" + xvfb.display, "QT_QPA_PLATFORM=", "XDG_CONFIG_HOME=" + (dir / "config").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string described = slurp(dir / "s.json");
  EXPECT_EQ(described.find("<unk>"), std::string::npos);
  for (const char* word : {"oiseau", "regarde", "souvent", "watches", "horse"})
    EXPECT_NE(described.find(word), std::string::npos) << word;
}

}  // namespace
}  // namespace attn::test
