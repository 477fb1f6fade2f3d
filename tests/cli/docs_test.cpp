// The README is a front door and the reference lives in docs/: the README
// stays short and links only pages that exist, and the lists docs/ gives of
// what the build registers (fuzz targets, variants, views) are the registries'
// own, so neither side can drift.
#include "engine/registry.h"
#include "tests/test_support.h"
#include "widgets/views/view.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace attn::test {
namespace {

namespace fs = std::filesystem;

// The names `pattern`'s first group matches in `text`.
std::set<std::string> matches(const std::string& text, const std::regex& pattern) {
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1].str());
  return out;
}

// The text of a docs page's section `heading` ("## Views"), up to the next heading of its level.
std::string section(const std::string& page, const std::string& heading) {
  const size_t start = page.find("\n" + heading + "\n");
  if (start == std::string::npos) return {};
  const size_t end = page.find("\n## ", start + heading.size() + 1);
  return page.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(Docs, TheReadmeIsShortAndLinksEveryDocsPage) {
  const std::string readme = slurp(sourceDir() / "README.md");
  std::istringstream lines(readme);
  int count = 0;
  for (std::string line; std::getline(lines, line);) ++count;
  EXPECT_LE(count, 260) << "README.md is a front door; the reference goes to docs/";

  const std::set<std::string> linked = matches(readme, std::regex(R"(\]\((docs/[^)#]+\.md)[)#])"));
  for (const std::string& page : linked) EXPECT_TRUE(fs::is_regular_file(sourceDir() / page)) << page << " is linked but missing";
  size_t pages = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(sourceDir() / "docs"))
    if (e.path().extension() == ".md") {
      ++pages;
      EXPECT_TRUE(linked.count("docs/" + e.path().filename().string())) << e.path() << " is not linked from README.md";
    }
  EXPECT_GT(pages, 0u);
}

// docs/building.md's table of fuzz targets is the build's list (tests/fuzz/CMakeLists.txt)
// and the sources there (tests/fuzz/fuzz_<target>.cpp).
TEST(Docs, TheFuzzTargetsListedAreTheOnesBuilt) {
  const std::string cmake = slurp(sourceDir() / "tests/fuzz/CMakeLists.txt");
  std::smatch list;
  ASSERT_TRUE(std::regex_search(cmake, list, std::regex(R"(foreach\(target ([a-z0-9_ ]+)\))")));
  std::set<std::string> built;
  std::istringstream words(list[1].str());
  for (std::string w; words >> w;) built.insert(w);

  std::set<std::string> sources;
  for (const fs::directory_entry& e : fs::directory_iterator(sourceDir() / "tests/fuzz")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("fuzz_", 0) == 0 && e.path().extension() == ".cpp") sources.insert(name.substr(5, name.size() - 9));
  }
  EXPECT_EQ(sources, built) << "a tests/fuzz/fuzz_*.cpp that is not built, or a target without its source";

  const std::string fuzzing = section(slurp(sourceDir() / "docs/building.md"), "## Fuzzing");
  ASSERT_FALSE(fuzzing.empty()) << "docs/building.md has no '## Fuzzing' section";
  EXPECT_EQ(matches(fuzzing, std::regex(R"(\n\| `([a-z0-9_]+)` \|)")), built);
}

// docs/variants.md names every registered variant, and its views section every
// registered view, so a new one cannot go undocumented.
TEST(Docs, TheVariantsPageNamesEveryVariantAndView) {
  const std::string page = slurp(sourceDir() / "docs/variants.md");
  const std::set<std::string> named = matches(page, std::regex("`([a-z0-9-]+)`"));
  for (const VariantInfo& v : variants()) EXPECT_TRUE(named.count(v.name)) << v.name << " is not in docs/variants.md";
  const std::set<std::string> views = matches(section(page, "## Views"), std::regex("`([a-z]+)`"));
  ASSERT_FALSE(views.empty()) << "docs/variants.md has no '## Views' section";
  for (const ViewInfo* v : viewRegistry()) EXPECT_TRUE(views.count(v->name)) << v->name << " is not in docs/variants.md's views";
}

}  // namespace
}  // namespace attn::test
