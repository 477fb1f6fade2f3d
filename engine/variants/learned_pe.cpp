// Learned (absolute) positional embeddings (Gehring et al. 2017; the
// Transformer's alternative in Vaswani et al. 2017, §3.5): a trained table
// PE [L, d], one row per position, e.g. GPT-2's wpe. Shown like the
// sinusoids: the table itself and its similarity PE·PEᵀ.
//
// The file decides L and d. The table is what the user asked to see; the
// input's L is usually just the default, and cutting or refusing a table
// (GPT-2's has 1024 rows) would hide it. When the file has as many rows as
// the input has tokens, the rows are labelled with the input's tokens;
// otherwise with positions "p0", "p1", ... To look at the first n positions
// only, save the first n rows.
#include "engine/error.h"
#include "engine/npy.h"
#include "engine/variants/positional_encoding.h"

namespace attn {

VariantInfo makeLearnedPeVariant() {
  return positionVariant(
      "learned-pe", "Learned positional embeddings",
      "PE = a trained table [L, d] loaded from a .npy file;  shown: PE·PEᵀ",
      "Gehring et al. 2017; Vaswani et al. 2017, §3.5",
      {{.key = "pe", .symbol = "PE", .type = ParamType::File,
        .help = "The .npy table of learned position embeddings, one row per position (it decides L and d)",
        .def = std::string(), .file_shape = "[L, d]"}},
      [](const Inputs& in, const Params& p, const RunContext& ctx) {
        const std::string& path = p.getString("pe");
        if (path.empty())
          throw InputError("parameter 'pe': learned-pe needs a .npy file of shape [L, d] (--set pe=FILE.npy)");
        const Array a = readNpy(path, "pe");
        if (a.rank() != 2 || a.shape[0] == 0 || a.shape[1] == 0)
          throw InputError(path + " (pe): expected a non-empty 2-D array [L, d], got shape " + a.shapeString());
        checkInputMagnitude(a.data, path + " (pe)");
        const Mat pe = a.toMat(path + " (pe)");
        ctx.check();
        const bool same_length = pe.rows() == static_cast<int64_t>(in.tokens.size());
        Result r = positionEncodingResult(pe, same_length ? in.tokens : positionTokens(pe.rows(), "p"), "learned-pe");
        r.inputs["pe"] = pe;
        return r;
      });
}

}  // namespace attn
