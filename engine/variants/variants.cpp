// The list of variants (variants.def), which the registry's look-ups and runs
// read through variants().
#include "engine/registry.h"

namespace attn {

#define VARIANT(make) VariantInfo make();
#include "engine/variants/variants.def"
#undef VARIANT

const std::vector<VariantInfo>& variants() {
  static const std::vector<VariantInfo> all = {
#define VARIANT(make) make(),
#include "engine/variants/variants.def"
#undef VARIANT
  };
  return all;
}

}  // namespace attn
