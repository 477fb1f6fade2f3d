// GuiSettings: the recent-models list and the preferences survive a restart
// (save, then load from the same file); opening a model again moves it to the
// front; the list is bounded; a corrupt or hand-edited file falls back to the
// defaults or is clamped, never fails.
#include "app/gui/gui_settings.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace attn {
namespace {

namespace fs = std::filesystem;

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnlab-settings-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path file() const { return dir_ / "attnlab" / "settings.json"; }
  fs::path dir_;
};

TEST_F(SettingsTest, RecentModelsSurviveARestartMostRecentFirst) {
  GuiSettings s;
  rememberModel(s, "/models/gpt2");
  rememberModel(s, "/models/bert-base-uncased");
  rememberModel(s, "/models/gpt2");  // opened again: moves to the front, once
  s.colormap = Colormap::Magma;
  s.dark = false;
  std::string error;
  ASSERT_TRUE(saveSettings(s, file(), error)) << error;

  std::string warning;
  const GuiSettings back = loadSettings(file(), warning);
  EXPECT_TRUE(warning.empty()) << warning;
  EXPECT_EQ(back.recent_models, (std::vector<std::string>{"/models/gpt2", "/models/bert-base-uncased"}));
  EXPECT_EQ(back, s);
}

TEST_F(SettingsTest, RecentModelsKeepOnlyTheNewest) {
  GuiSettings s;
  for (size_t i = 0; i < kMaxRecentModels + 3; ++i) rememberModel(s, "/m/" + std::to_string(i));
  ASSERT_EQ(s.recent_models.size(), kMaxRecentModels);
  EXPECT_EQ(s.recent_models.front(), "/m/" + std::to_string(kMaxRecentModels + 2));
  EXPECT_EQ(s.recent_models.back(), "/m/3");
}

TEST_F(SettingsTest, HandEditedFileIsClampedAndNonStringsSkipped) {
  fs::create_directories(file().parent_path());
  std::ofstream(file()) << R"({"ui_scale": 40, "font_size": 2, "colormap": "nope",
                               "recent_models": ["/a", 7, "/b", null]})";
  std::string warning;
  const GuiSettings s = loadSettings(file(), warning);
  EXPECT_TRUE(warning.empty()) << warning;
  EXPECT_FLOAT_EQ(s.ui_scale, 4.0f);
  EXPECT_FLOAT_EQ(s.font_size, 8.0f);
  EXPECT_EQ(s.colormap, GuiSettings{}.colormap);
  EXPECT_EQ(s.recent_models, (std::vector<std::string>{"/a", "/b"}));
}

TEST_F(SettingsTest, CorruptFileGivesDefaultsAndAWarningNamingIt) {
  fs::create_directories(file().parent_path());
  std::ofstream(file()) << R"({"recent_models": ["/a", )";
  std::string warning;
  const GuiSettings s = loadSettings(file(), warning);
  EXPECT_EQ(s, GuiSettings{});
  EXPECT_NE(warning.find(file().string()), std::string::npos) << warning;
}

TEST_F(SettingsTest, MissingFileIsDefaultsWithoutWarning) {
  std::string warning;
  EXPECT_EQ(loadSettings(file(), warning), GuiSettings{});
  EXPECT_TRUE(warning.empty());
}

}  // namespace
}  // namespace attn
