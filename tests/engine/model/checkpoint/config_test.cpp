// config.json as parseConfig reads it (engine/model/checkpoint/config.h): an
// unknown architecture, sizes that do not fit, values out of range, fields
// not implemented, broken or missing JSON, each refused in one line naming the
// file and the field.
#include "engine/model/model.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace attn::config_test {
namespace {

using test::TinyModel;

TEST(ModelErrors, ConfigProblems) {
  test::TempDir dir;
  const TinyModel tm = test::writeTinyModel(dir.path);
  test::setConfigField(tm, "architectures", R"(["MambaForCausalLM"])");
  test::expectHas(test::loadError(dir.path), {"config.json", "architecture 'MambaForCausalLM' is not supported"});
  test::setConfigField(tm, "architectures", R"(["GPT2LMHeadModel"])");
  test::setConfigField(tm, "n_head", "3");
  test::expectHas(test::loadError(dir.path), {"config.json", "heads (3) must divide the model width (8)"});
  test::setConfigField(tm, "n_head", R"("two")");
  test::expectHas(test::loadError(dir.path), {"config.json", "field 'n_head' must be an integer from 1 to"});
  // A lying config is refused before its sizes drive a loop or an allocation.
  test::setConfigField(tm, "n_head", "2");
  test::setConfigField(tm, "n_layer", "1000000000000000000");
  test::expectHas(test::loadError(dir.path), {"config.json", "field 'n_layer' must be an integer from 1 to 1024"});
  test::setConfigField(tm, "n_layer", "18446744073709551615");
  test::expectHas(test::loadError(dir.path), {"config.json", "field 'n_layer' must be an integer from 1 to 1024"});
  test::setConfigField(tm, "n_layer", "2");
  test::setConfigField(tm, "layer_norm_epsilon", "1e300");
  test::expectHas(test::loadError(dir.path), {"config.json", "field 'layer_norm_epsilon' must be a number between 0 and 1"});
  test::setConfigField(tm, "layer_norm_epsilon", "1e-5");
  test::setConfigField(tm, "activation_function", R"("relu")");
  test::expectHas(test::loadError(dir.path), {"config.json", "field 'activation_function' is 'relu'"});
  std::ofstream(dir / "config.json") << "{\"n_layer\": 2,";
  test::expectHas(test::loadError(dir.path), {"config.json", "not valid JSON"});
  fs::remove(dir / "config.json");
  test::expectHas(test::loadError(dir.path), {"config.json", "missing"});
}

}  // namespace
}  // namespace attn::config_test
