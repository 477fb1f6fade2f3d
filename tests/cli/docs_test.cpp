// The README is a front door and the reference lives in docs/: the README
// stays short and links only pages that exist, and the lists docs/ gives of
// what the build registers (fuzz targets, variants, views, model kinds' views)
// are the registries' own, so neither side can drift.
#include "engine/registry.h"
#include "tests/test_support.h"
#include "widgets/views/view.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

// Each model kind's views in key order, as the binary lists them (`attnlab list --kinds --json`).
std::map<std::string, std::vector<std::string>> modelKindViews() {
  const RunResult list = runAttnlab({"list", "--kinds", "--json"});
  EXPECT_EQ(list.status, 0) << list.err;
  std::map<std::string, std::vector<std::string>> kinds;
  if (list.status != 0) return kinds;
  for (const nlohmann::json& kind : nlohmann::json::parse(list.out))
    for (const nlohmann::json& view : kind.at("views"))
      kinds[kind.at("name").get<std::string>()].push_back(view.at("name").get<std::string>());
  return kinds;
}

// docs/models.md's section on each kind's window; a new kind needs its line here.
const std::map<std::string, std::string> kKindSections = {{"text", "## In the window"},
                                                          {"encoder-decoder", "## Encoder–decoder models (T5, BART)"},
                                                          {"vision", "## Vision Transformers (ViT)"},
                                                          {"attention", "## Attention from your own files"}};

// Each kind's section names every view of the kind (`name` or **name**) and
// its keys, 1 to the number of views.
TEST(Docs, TheModelsPageNamesEveryViewOfEveryKind) {
  const std::string page = slurp(sourceDir() / "docs/models.md");
  const std::map<std::string, std::vector<std::string>> kinds = modelKindViews();
  ASSERT_FALSE(kinds.empty());
  for (const auto& [kind, views] : kinds) {
    const auto heading = kKindSections.find(kind);
    if (heading == kKindSections.end()) {
      ADD_FAILURE() << "the kind " << kind << " has no section of docs/models.md in this test";
      continue;
    }
    const std::string text = section(page, heading->second);
    ASSERT_FALSE(text.empty()) << "docs/models.md has no '" << heading->second << "' section";
    const std::set<std::string> named = matches(text, std::regex(R"((?:`|\*\*)([a-z-]+)(?:`|\*\*))"));
    for (const std::string& v : views) EXPECT_TRUE(named.count(v)) << v << " (" << kind << ") is not in " << heading->second;
    // the window's digits: 1 … 9, then 0 for a tenth view (app/gui/gui_kinds.h modelViewDigit)
    const std::string keys = views.size() <= 9 ? "eys 1–" + std::to_string(views.size()) : "eys 1–9 and 0";
    EXPECT_NE(text.find(keys), std::string::npos) << heading->second << " does not say its k" << keys;
  }
}

// Every `--view a|b|…` the docs write for a model is one kind's views in key
// order, and docs/cli.md's synopsis has one for every kind. The names the
// encoder–decoder's figures had before they took the window's (`lines` for
// `heads`, `cross|encoder|decoder` for `model --attention-of …`) are gone.
TEST(Docs, TheModelViewListsAreTheKindsAndUseNoRetiredName) {
  const std::map<std::string, std::vector<std::string>> kinds = modelKindViews();
  ASSERT_FALSE(kinds.empty());
  const std::string cli = slurp(sourceDir() / "docs/cli.md");
  const std::string models = slurp(sourceDir() / "docs/models.md");
  const std::regex list(R"(--view ([a-z-]+(?:\|[a-z-]+)+))");
  std::set<std::string> in_synopsis;
  for (const std::string* page : {&cli, &models})
    for (const std::string& written : matches(*page, list)) {
      bool found = false;
      for (const auto& [kind, views] : kinds) {
        std::string ordered;
        for (const std::string& v : views) ordered += (ordered.empty() ? "" : "|") + v;
        if (written != ordered) continue;
        found = true;
        if (page == &cli) in_synopsis.insert(kind);
      }
      EXPECT_TRUE(found) << "--view " << written << " is no kind's views in key order";
    }
  for (const auto& kind : kinds) EXPECT_TRUE(in_synopsis.count(kind.first)) << "docs/cli.md has no render line for " << kind.first;

  const std::string seq2seq = section(models, kKindSections.at("encoder-decoder"));
  EXPECT_FALSE(std::regex_search(seq2seq, std::regex(R"(--view lines\b|(?:`|\*\*)lines(?:`|\*\*))")))
      << "docs/models.md still names the encoder–decoder's heads view `lines`";
  std::vector<fs::path> pages = {sourceDir() / "README.md"};
  for (const fs::directory_entry& e : fs::directory_iterator(sourceDir() / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  for (const fs::path& p : pages)
    EXPECT_FALSE(std::regex_search(slurp(p), std::regex(R"(--view (?:cross|encoder|decoder)\b)")))
        << p << " asks for --view cross|encoder|decoder: it is --view model --attention-of …";
}

}  // namespace
}  // namespace attn::test
