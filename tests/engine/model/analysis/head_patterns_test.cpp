// A variant's pattern applied to a real head (engine/model/analysis/head_patterns.h):
// the head's own projections go in untouched and the mass each pattern keeps
// equals a loop over the head's map.
#include "engine/model/analysis/head_patterns.h"
#include "engine/model/model.h"

#include "tests/model_fixture.h"
#include "tests/test_support.h"

#include <gtest/gtest.h>

namespace attn::head_patterns_test {
namespace {

using test::TinyModel;

TEST(HeadPatterns, MassKeptAgainstLoop) {
  test::TempDir dir;
  test::writeTinyModel(dir.path);
  const auto m = loadModel(filesOnDisk(dir.path.string()));
  const ModelRun run = runModel(*m, "the fox ran");
  const std::vector<const VariantInfo*> vs = headPatternVariants();
  ASSERT_FALSE(vs.empty());
  for (const VariantInfo* v : vs) {
    Params p = Params::defaults(v->params);
    if (v->name == "local-1d") p.set(v->params, "l_q", "2");
    const HeadPattern hp = applyPatternToHead(*v, p, run, 1, 1);
    const Mat& real = run.attention[1][1];
    EXPECT_EQ(hp.real, real);
    // The head's own projections went in untouched (no seeded W).
    EXPECT_EQ(hp.result.inputs.count("w_q"), 0u) << v->name;
    EXPECT_EQ(hp.result.inputs.at("q"), run.q[1].middleCols(4, 4)) << v->name;
    ASSERT_TRUE(hp.result.isSparse()) << v->name;
    const SparseRows& s = hp.result.sparse[0];
    double mean = 0;
    for (int64_t i = 0; i < real.rows(); ++i) {
      double kept = 0;
      for (int64_t e = s.indptr[i]; e < s.indptr[i + 1]; ++e) kept += real(i, s.indices[e]);
      EXPECT_NEAR(hp.mass_kept(0, i), kept, 1e-6) << v->name;
      mean += kept;
    }
    EXPECT_NEAR(hp.mass_kept_mean, mean / static_cast<double>(real.rows()), 1e-6) << v->name;
  }
  EXPECT_THROW(applyPatternToHead(*vs[0], Params::defaults(vs[0]->params), run, 2, 0), InputError);
  EXPECT_THROW(applyPatternToHead(variantOrThrow("multi-head"), Params::defaults(variantOrThrow("multi-head").params),
                                  run, 0, 0),
               InputError);
}

}  // namespace
}  // namespace attn::head_patterns_test
