#include "app/shared/input_options.h"

#include "engine/error.h"

namespace attn {

void addInputFlags(CLI::App& cmd, InputOptions& o) {
  cmd.add_option("--seed", o.seed, "Seed for synthetic inputs and generated weights")->capture_default_str();
  cmd.add_option("--length", o.length, "L: query (target) length of synthetic input")->capture_default_str();
  cmd.add_option("--source-length", o.source_length, "S: source length for cross-attention (default L+4)");
  cmd.add_option("--dim", o.dim, "d: model dimension")->capture_default_str();
  cmd.add_option("--heads", o.heads, "h: number of heads (must divide d)")->capture_default_str();
  cmd.add_option("--preset", o.preset, "Synthetic structure: gaussian, clustered, positional, repeated")
      ->capture_default_str();
  cmd.add_option("--text", o.text, "Text input: whitespace tokens with deterministic embeddings (a model: the text it reads)")
      ->check(nonEmptyText("the default text"));
  cmd.add_option("--source-text", o.source_text, "Source text for cross-attention variants")
      ->check(nonEmptyText("the default source text"));
  cmd.add_option("--x", o.x, "X.npy [L, d] input sequence, projected by the variant");
  cmd.add_option("--q", o.q, "Q.npy projected queries, used as they are: [Lq, d] (split into --heads) or [H, Lq, d_head]");
  cmd.add_option("--k", o.k, "K.npy projected keys: [Lk, d] or [H, Lk, d_head]");
  cmd.add_option("--v", o.v, "V.npy projected values: [Lk, d] or [H, Lk, d_head]");
}

CLI::Validator nonEmptyText(const std::string& left_out) {
  return CLI::Validator(
      [left_out](const std::string& text) { return text.empty() ? "empty (leave the flag out for " + left_out + ")" : std::string(); },
      "TEXT");
}

void addTruncateFlag(CLI::App& cmd, bool& truncate) {
  cmd.add_flag("--truncate", truncate, "Cut a text longer than the model's positions to the tokens that fit (else it is refused)");
}

Inputs resolveInputs(const InputOptions& o) {
  if (!o.x.empty() || !o.q.empty() || !o.k.empty() || !o.v.empty()) {
    // Whether h divides d is checked by the variants that split into heads.
    return makeFromFiles(o.x, o.q, o.k, o.v, o.heads, o.seed);
  }
  if (!o.text.empty()) return makeFromText(o.text, o.source_text, o.dim, o.heads, o.seed);
  SyntheticSpec s;
  s.seed = o.seed;
  s.length = o.length;
  s.source_length = o.source_length;
  s.dim = o.dim;
  s.heads = o.heads;
  s.preset = presetFromName(o.preset);
  return makeSynthetic(s);
}

Params resolveParams(const VariantInfo& info, const std::vector<std::string>& sets) {
  Params p = Params::defaults(info.params);
  for (const std::string& kv : sets) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--set: expected KEY=VALUE, got '" + kv + "'");
    p.set(info.params, kv.substr(0, eq), kv.substr(eq + 1));
  }
  return p;
}

}  // namespace attn
