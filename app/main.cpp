// attnlab: the GUI by default, and the headless commands of the contract.
//   attnlab                      GUI with the default scene (the embedded model)
//   attnlab gui|list|compute|render|bench|model|lesson ...
// Exit status: 0 done, 2 bad usage or bad input (one line on stderr), 1 internal error.
#include "app/bench/bench.h"
#include "app/cli/cli.h"
#include "app/gui/gui.h"
#include "app/export/model_kinds.h"
#include "app/model/embedded_model.h"
#include "app/model/model_scene.h"
#include "engine/error.h"
#include "widgets/views/view.h"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace {

// CLI11 prints multi-line help on usage errors; the contract wants one clear line.
int usageError(const CLI::Error& e, const std::string& cmd) {
  std::cerr << "attnlab" << (cmd.empty() ? "" : " " + cmd) << ": " << e.what()
            << " (see 'attnlab" << (cmd.empty() ? "" : " " + cmd) << " --help')\n";
  return 2;
}

// A file the command writes: its folder must exist and be writable, checked
// before any work, so a failed write never follows a finished one (the
// figure written, its --describe refused).
const CLI::Validator kWritableFile(
    [](std::string& path) -> std::string {
      const std::filesystem::path folder = std::filesystem::path(path).parent_path();
      const std::string f = folder.empty() ? "." : folder.string();
      std::error_code ec;
      if (!std::filesystem::is_directory(f, ec) || access(f.c_str(), W_OK) != 0)
        return path + ": could not write there (folder missing or not writable)";
      return "";
    },
    "FILE");

}  // namespace

int main(int argc, char** argv) {
  using namespace attn;
  CLI::App app{"AttnLab: attention mechanisms, computed and drawn live"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", std::string("attnlab ") + ATTNLAB_VERSION);

  GuiOptions gui;
  std::string gui_size;
  CLI::App* gui_cmd = app.add_subcommand("gui", "Open the interactive window");
  gui_cmd->add_option("--variant", gui.scene.variant, "Variant to open (see 'attnlab list')");
  gui_cmd->add_option("--set", gui.scene.sets, "Parameter KEY=VALUE (repeatable)");
  gui_cmd->add_option("--view", gui.scene.view,
                      "Initial view: " + viewNames() + " (variants); in the model workspace, by the model's kind: " +
                          modelViewsHelp());
  gui_cmd->add_option("--model", gui.scene.model,
                      "Open a model: a Hugging Face folder or its .safetensors file, or shipped:NAME (shipped:default, "
                      "shipped:t5-toy, shipped:vit-shapes)");
  gui_cmd->add_option("--attention", gui.scene.attention,
                      "Open attention from a file: a folder `model run` or attnlab.save wrote, or a .npy, .npz or "
                      ".safetensors array [L, L], [heads, L, L] or [layers, heads, Lq, Lk] (--q, --k: its queries and keys)");
  gui_cmd->add_option("--tokens", gui.scene.tokens, "With --attention: the tokens, a JSON list or one per line (default: the folder's tokens.json, else positions)");
  gui_cmd->add_option("--corrupted", gui.scene.corrupted,
                      "Text models: the patching view's corrupted prompt, of as many tokens as the text")
      ->check(nonEmptyText("no corrupted prompt"));
  gui_cmd->add_option("--target", gui.scene.target, "Encoder–decoder models: the decoder's text (default: the model's own translation)")
      ->check(nonEmptyText("the model's own translation"));
  addTruncateFlag(*gui_cmd, gui.scene.truncate);
  gui_cmd->add_option("--image", gui.scene.image, "Vision models: the picture (default: a shipped model's first example)");
  gui_cmd->add_option("--pattern", gui.scene.pattern, "Pattern view: the variant applied to the focused head (its --set values)");
  gui_cmd->add_option("--text-b", gui.scene.text_b, "Compare view: run B's text (default: the text, run on --model-b)")
      ->check(nonEmptyText("run A's text"));
  gui_cmd->add_option("--model-b", gui.scene.model_b, "Compare view: run B's checkpoint, of the model's shape (default: the model)");
  gui_cmd->add_option("--layer", gui.scene.layer, "Model workspace: the focused layer");
  gui_cmd->add_option("--head", gui.scene.head, "Model workspace: the focused head");
  gui_cmd->add_option("--query", gui.scene.query, "Model workspace: the query token of the Q/K and text views and the predictions");
  gui_cmd->add_option("--key", gui.scene.key, "Model workspace: the key token of the Q/K view");
  gui_cmd->add_option("--screenshot", gui.screenshot, "Save the last frame as PNG (with --frames)")->check(kWritableFile);
  gui_cmd->add_option("--describe", gui.describe,
                      "With --screenshot: write what the view's layout held (panels, titles, colour ranges, strongest "
                      "cells, the texts drawn) as JSON")
      ->check(kWritableFile);
  gui_cmd->add_option("--frames", gui.frames, "Exit after N frames, printing median and worst frame time");
  gui_cmd->add_option("--size", gui_size, "Window size WxH");
  gui_cmd->add_flag("--hide-panel", gui.hide_panel, "Start with the side panel hidden (Tab shows it)");
  gui_cmd->add_option("--scale", gui.scale, "Colour scale: auto (log from 512 keys on), linear, log, power or percentile")
      ->capture_default_str();
  gui_cmd->add_option("--lesson", gui.lesson, "Open a lesson (see 'attnlab lesson list'), by name or as a .json file");
  gui_cmd->add_option("--step", gui.step, "The lesson's step to open at, from 0");
  gui_cmd->add_flag("--present", gui.present, "Presentation mode: no panel or menus, larger text, narration as captions (F5)");
  gui_cmd->add_option("--generate", gui.generate, "Model workspace: generate N new tokens (greedy) from the text");
  gui_cmd->add_option("--generate-step", gui.generate_step,
                      "With --generate: the timeline at new token S (0: the prompt alone; default: the last)");
  gui_cmd->add_option("--keys", gui.keys, "Keys pressed one a frame after the first result, e.g. Right,Right,Left")
      ->delimiter(',');
  addInputFlags(*gui_cmd, gui.scene.input);

  bool list_json = false, list_kinds = false;
  CLI::App* list_cmd = app.add_subcommand("list", "List variants, their parameters and views");
  list_cmd->add_flag("--json", list_json, "Machine-readable listing");
  list_cmd->add_flag("--kinds", list_kinds, "List the model kinds and their views instead (with --json: machine-readable)");

  ComputeOptions compute;
  CLI::App* compute_cmd = app.add_subcommand("compute", "Compute a variant and write .npy files and meta.json");
  compute_cmd->add_option("name", compute.variant, "Variant name")->required();
  compute_cmd->add_option("--set", compute.sets, "Parameter KEY=VALUE (repeatable)");
  compute_cmd->add_option("--out", compute.out_dir, "Output folder")->required();
  compute_cmd->add_flag("--no-weights", compute.no_weights, "Do not write weights.npy (nor, for sparse results, weights_indptr/indices/values.npy)");
  compute_cmd->add_flag("--compare", compute.compare,
                        "Also compare with full causal attention: compare.json, compare/mass_kept.npy, compare/kl.npy");
  addInputFlags(*compute_cmd, compute.input);

  RenderOptions render;
  CLI::App* render_cmd = app.add_subcommand("render", "Draw a view to PNG, SVG or PDF (no display needed)");
  render_cmd->add_option("name", render.variant, "Variant name (not with --model / --default-model)");
  render_cmd->add_option("--model", render.model,
                         "Render a model's view: a Hugging Face folder or .safetensors file, or shipped:NAME (shipped:default, "
                         "shipped:t5-toy, shipped:vit-shapes)");
  render_cmd->add_flag("--default-model", render.default_model, "Render a view of the embedded default model");
  render_cmd->add_option("--attention", render.attention,
                         "Render attention from a file: a folder `model run` or attnlab.save wrote, or a .npy, .npz or "
                         ".safetensors array [L, L], [heads, L, L] or [layers, heads, Lq, Lk] (--q, --k: its queries and keys)");
  render_cmd->add_option("--tokens", render.tokens, "With --attention: the tokens, a JSON list or one per line (default: the folder's tokens.json, else positions)");
  render_cmd->add_option("--layer", render.layer, "Model views: the layer (rollout: up to it)")->capture_default_str();
  render_cmd->add_option("--key", render.key, "Model qk view: the key token (default: the query's strongest key)");
  render_cmd->add_option("--pattern", render.pattern, "Model pattern view: the variant applied to the head");
  render_cmd->add_option("--summary", render.summary,
                         "Model view of a model too large for a thumbnail per head: the measure each head's cell shows "
                         "(sink, previous-token, induction, entropy, distance)")
      ->capture_default_str();
  render_cmd->add_flag("--value-weighted", render.value_weighted,
                       "Text models: each map as α_ij ‖v_j W_O‖, rows scaled to sum 1 (Kobayashi et al. 2020), in the "
                       "head views and rollout");
  render_cmd->add_option("--corrupted", render.corrupted,
                         "Text models, --view patching: the corrupted prompt, of as many tokens as the text")
      ->check(nonEmptyText("no corrupted prompt"));
  render_cmd->add_option("--shade-by", render.shade_by,
                         "Model text view: the attention that shades each token, from --query: head (--layer, --head), "
                         "layer (the layer's mean over heads) or rollout (through --layer)")
      ->capture_default_str();
  render_cmd->add_option("--target", render.target,
                         "Encoder–decoder models (T5, BART): the decoder's text (default: the model's own translation)")
      ->check(nonEmptyText("the model's own translation"));
  render_cmd->add_option("--attention-of", render.attention_of,
                         "Encoder–decoder models' model view: the attention its grid shows (encoder, decoder or cross; "
                         "default cross)");
  addTruncateFlag(*render_cmd, render.truncate);
  render_cmd->add_option("--text-b", render.text_b, "Model compare view: run B's text (default: --text, run on --model-b)")
      ->check(nonEmptyText("run A's text"));
  render_cmd->add_option("--model-b", render.model_b,
                         "Model compare view: run B's checkpoint, of the same layers, heads and vocabulary as --model (a "
                         "fine-tune; default: --model)");
  render_cmd->add_option("--image", render.image,
                         "Vision models (ViT): the picture (default: a shipped model's first example); the picture view's "
                         "token is --query (0 [CLS], 1 + patch)");
  render_cmd->add_option("--set", render.sets, "Parameter KEY=VALUE (repeatable)");
  render_cmd->add_option("--view", render.view,
                         viewNames() + "; with a model, by its kind (the first is the default): " + modelViewsHelp());
  render_cmd->add_option("--out", render.out, "FILE.png, FILE.svg, FILE.pdf, or FILE.html (a model's interactive page)")->required();
  render_cmd->add_option("--format", render.format,
                         "png, svg, pdf, or html: one offline page of every head of a model (--model, --default-model, "
                         "--attention) to hover, zoom and sort in any browser (default: --out's extension)");
  render_cmd->add_option("--max-bytes", render.max_bytes, "html: refuse a page larger than this")->capture_default_str();
  render_cmd->add_option("--size", render.size,
                         "Figure size: WxH (pixels for PNG, points for SVG/PDF), or column (3.5 in), two-column (7 in) "
                         "or slide (16:9): their height follows the content, their PNG is 300 dpi")
      ->capture_default_str();
  render_cmd->add_option("--font-size", render.font_size, "Size of labels and ticks (points for SVG/PDF, pixels for PNG; "
                                                          "default: from the figure's size)");
  render_cmd->add_option("--head", render.head, "Head shown by the heatmap, image and compare views")->capture_default_str();
  render_cmd->add_option("--query", render.query, "Query pixel of the image view (default: the middle of the image's full rows, or of the query block there); "
                         "a model's qk and text views: the query token (default: the last)");
  render_cmd->add_option("--colormap", render.colormap, "viridis, magma, blues, gray or coolwarm")
      ->capture_default_str();
  render_cmd->add_option("--scale", render.scale,
                         "Colour scale of the weights: auto (log from 512 keys on), linear, log (three decades), power "
                         "(w^gamma) or percentile (top clipped)")
      ->capture_default_str();
  render_cmd->add_option("--gamma", render.gamma, "Exponent of --scale power")->capture_default_str();
  render_cmd->add_option("--percentile", render.percentile, "Clip of --scale percentile")->capture_default_str();
  render_cmd->add_option("--title", render.title, "Figure title (default: variant and head; \"\" for none)");
  render_cmd->add_flag("--dark", render.dark, "Dark background");
  render_cmd->add_option("--describe", render.describe,
                         "Also write what the view's layout holds (panels, titles, colour ranges, strongest cells) as JSON")
      ->check(kWritableFile);
  addInputFlags(*render_cmd, render.input);
  // --heads means two things: a variant's number of heads, and the heads a long text's page keeps whole.
  render_cmd->remove_option(render_cmd->get_option("--heads"));
  render_cmd->add_option("--heads", render.heads,
                         "A variant: h, the number of heads (must divide d; default 4). A page (--format html) over 1,024 "
                         "tokens, which holds every head pooled: the heads it keeps whole too, layer:head pairs such as 0:3,5:1");

  CLI::App* model_cmd = app.add_subcommand(
      "model", "Real checkpoints (see 'attnlab model families'): describe one, run it on text, or generate");
  model_cmd->require_subcommand(1);
  std::string model_path = kDefaultModelPath;
  const std::string path_help = "Model folder, a .safetensors file beside config.json, or shipped:NAME (default: shipped:default, "
                                "the embedded model)";
  bool model_json = false;
  bool families_markdown = false;
  CLI::App* model_families_cmd =
      model_cmd->add_subcommand("families", "List the model families AttnLab reads, with their architectures");
  model_families_cmd->add_flag("--json", model_json, "Machine-readable listing");
  model_families_cmd->add_flag("--markdown", families_markdown, "As docs/models.md's table");
  CLI::App* model_info_cmd = model_cmd->add_subcommand("info", "Print the model's summary and tensor table");
  model_info_cmd->add_option("path", model_path, path_help);
  model_info_cmd->add_flag("--json", model_json, "Machine-readable summary");
  ModelRunCliOptions model_run;
  CLI::App* model_run_cmd = model_cmd->add_subcommand(
      "run", "Run the model on text; write tokens.json, attention.npy, attention_pooled.npy, attention_pooled_max.npy, "
             "heads.json, hidden.npy and meta.json");
  model_run_cmd->add_option("path", model_run.path, path_help);
  CLI::Option* run_text =
      model_run_cmd->add_option("--text", model_run.text, "Text to tokenize and run (default: the text the model opens on)")
          ->check(nonEmptyText("the text the model opens on"));
  model_run_cmd->add_option("--text-file", model_run.text_file, "Read the text from this file (UTF-8)")->excludes(run_text);
  model_run_cmd->add_option("--maps", model_run.maps,
                            "Maps to write: all (attention.npy [layers, heads, L, L], written as it is computed), "
                            "pooled (attention_pooled.npy only), none, layer:head pairs such as 0:3,5:1, or auto "
                            "(all when they fit in memory, else pooled)")
      ->capture_default_str();
  model_run_cmd->add_option("--out", model_run.out_dir, "Output folder")->required();
  addTruncateFlag(*model_run_cmd, model_run.truncate);
  model_run_cmd->add_option("--top-k", model_run.top_k, "Predictions per position (models with an LM head)")
      ->capture_default_str();
  model_run_cmd->add_option("--target", model_run.target,
                            "Encoder–decoder models (T5, BART): the decoder's text, read after decoder_start_token_id "
                            "(teacher forcing; default: the model's own greedy translation); writes encoder_attention.npy, "
                            "decoder_attention.npy, cross_attention.npy, encoder_hidden.npy and decoder_hidden.npy")
      ->check(nonEmptyText("the model's own translation"));
  CLI::Option* run_image = model_run_cmd->add_option(
      "--image", model_run.image,
      "Vision models (ViT): a PNG or JPEG picture, resized, rescaled and normalised as the folder's "
      "preprocessor_config.json says; writes attention.npy [layers, heads, 1 + P, 1 + P], hidden.npy, pixel_values.npy");
  model_run_cmd->add_option("--pixels", model_run.pixels, "Vision models: pixel values as given, float32 .npy [3, H, W]")
      ->excludes(run_image);
  model_run_cmd->add_option("--predict-at", model_run.predict_at,
                            "Positions to predict at: all, last, or a list such as 0,7,12 (the LM head runs on these only)")
      ->capture_default_str();

  ModelGenerateCliOptions model_gen;
  CLI::App* model_gen_cmd = model_cmd->add_subcommand(
      "generate", "Generate text with a KV cache; write tokens.json, each new token's attention (attention.npy "
                  "[steps, layers, heads, L_max] with lengths.npy), prompt_attention.npy and meta.json");
  model_gen_cmd->add_option("path", model_gen.path,
                            "Model folder (a causal family with an LM head, or an encoder–decoder: T5, BART), or "
                            "shipped:NAME (default: shipped:default, the embedded model)");
  model_gen_cmd->add_option("--text", model_gen.text,
                            "The prompt (encoder–decoder: the source; default: the text the model opens on)")
      ->check(nonEmptyText("the text the model opens on"));
  model_gen_cmd->add_option("--out", model_gen.out_dir, "Output folder")->required();
  model_gen_cmd->add_option("--max-new", model_gen.max_new, "New tokens to generate")->capture_default_str();
  CLI::Option* greedy = model_gen_cmd->add_flag("--greedy", model_gen.greedy, "Take the most probable token (the default)");
  model_gen_cmd->add_option("--top-k", model_gen.top_k, "Sample among the K most probable tokens")->excludes(greedy);
  model_gen_cmd->add_option("--temperature", model_gen.temperature, "Sampling temperature τ: softmax(logits / τ)")
      ->capture_default_str();
  model_gen_cmd->add_option("--seed", model_gen.seed, "Sampling seed")->capture_default_str();
  model_gen_cmd->add_flag("--truncate", model_gen.truncate, "Cut a prompt longer than the positions left");

  // Which heads matter: five commands that share their inputs (app/cli/cli_interventions.cpp).
  struct InterventionCommand {
    const char* name;
    const char* help;
  };
  static const InterventionCommand kInterventionCommands[] = {
      {"ablate", "Zero or mean-ablate heads (their output before W_O); write ablate.json: the target token's logit and "
                 "probability before and after, and the top tokens"},
      {"importance", "Ablate every head alone, each pass resumed at its layer; write importance.npy [layers, heads] "
                     "(Δ log p of the target) and importance.json with the heads ranked"},
      {"patch", "Activation patching from the clean text into the corrupted one (same number of tokens): each head's "
                "output and each layer's residual at each position; write patch_*.npy, restored_*.npy and patch.json"},
      {"lens", "Logit lens: each layer's residual stream through the final norm and the unembedding; write lens.json "
               "(top tokens per layer and position) and lens.npy (the probability of the model's own top token)"},
      {"attribute", "Direct logit attribution: the target's logit split into the embeddings, every head, every MLP and "
                    "the biases; write attribute.json and attribution_heads.npy [layers, heads]"},
  };
  InterventionCliOptions intervention;
  std::vector<CLI::App*> intervention_cmds;
  for (const InterventionCommand& ic : kInterventionCommands) {
    CLI::App* cmd = model_cmd->add_subcommand(ic.name, ic.help);
    intervention_cmds.push_back(cmd);
    cmd->add_option("path", intervention.path, path_help);
    CLI::Option* text = cmd->add_option("--text", intervention.text, "The text (default: the text the model opens on)")
                            ->check(nonEmptyText("the text the model opens on"));
    cmd->add_option("--text-file", intervention.text_file, "Read the text from this file (UTF-8)")->excludes(text);
    cmd->add_option("--out", intervention.out_dir, "Output folder")->required();
    addTruncateFlag(*cmd, intervention.truncate);
    if (std::string(ic.name) == "lens") {
      cmd->add_option("--top-k", intervention.top_k, "Tokens per layer and position")->capture_default_str();
      continue;
    }
    cmd->add_option("--position", intervention.position,
                    "Where the target token is predicted, from 0 (negative: from the end; default −1, the last)")
        ->capture_default_str();
    CLI::Option* token = cmd->add_option("--token", intervention.token,
                                         "The target token as text, one token of the vocabulary (default: the model's "
                                         "own top prediction at --position)");
    cmd->add_option("--token-id", intervention.token_id, "The target token's id")->excludes(token);
    if (std::string(ic.name) == "ablate") {
      cmd->add_option("--heads", intervention.heads, "The heads to ablate, layer:head pairs from 0 such as 0:3,5:1")
          ->required();
      cmd->add_option("--top-k", intervention.top_k, "Top tokens listed before and after")->capture_default_str();
    }
    if (std::string(ic.name) == "ablate" || std::string(ic.name) == "importance")
      cmd->add_option("--mode", intervention.mode,
                      "zero, or mean (the head's mean output over every position of the text, later ones included)")
          ->capture_default_str();
    if (std::string(ic.name) == "patch") {
      CLI::Option* corrupted =
          cmd->add_option("--corrupted", intervention.corrupted, "The corrupted text, of as many tokens as --text");
      cmd->add_option("--corrupted-file", intervention.corrupted_file, "Read the corrupted text from this file")
          ->excludes(corrupted);
    }
  }

  ModelCompareCliOptions model_cmp;
  CLI::App* model_cmp_cmd = model_cmd->add_subcommand(
      "compare", "Compare two runs of a text model (two prompts, or a model and its fine-tune): write diff.npy "
                 "[layers, heads, n, n] (A − B on the n aligned tokens) and js.json (each head's Jensen–Shannon "
                 "divergence, the heads ranked, the alignment)");
  model_cmp_cmd->add_option("path", model_cmp.path, path_help);
  model_cmp_cmd->add_option("--text", model_cmp.text, "Run A's text (default: the text the model opens on)")
      ->check(nonEmptyText("the text the model opens on"));
  model_cmp_cmd->add_option("--text-b", model_cmp.text_b,
                            "Run B's text (default: run A's); texts of different tokens are aligned by token")
      ->check(nonEmptyText("run A's text"));
  model_cmp_cmd->add_option("--model-b", model_cmp.model_b,
                            "Run B's checkpoint, of the same layers, heads and vocabulary (a fine-tune; default: PATH)");
  model_cmp_cmd->add_option("--out", model_cmp.out_dir, "Output folder")->required();
  addTruncateFlag(*model_cmp_cmd, model_cmp.truncate);

  bool lesson_json = false;
  CLI::App* lesson_cmd = app.add_subcommand("lesson", "Guided lessons: list them, or export one as a handout");
  lesson_cmd->require_subcommand(1);
  CLI::App* lesson_list_cmd = lesson_cmd->add_subcommand("list", "List the lessons: name, title, steps, variants, summary");
  lesson_list_cmd->add_flag("--json", lesson_json, "Machine-readable listing");
  LessonExportOptions lesson_export;
  CLI::App* lesson_export_cmd =
      lesson_cmd->add_subcommand("export", "Write a handout PDF: one page per step with its figure, narration and formula");
  lesson_export_cmd->add_option("name", lesson_export.name, "Lesson name, or a lesson .json file")->required();
  lesson_export_cmd->add_option("--out", lesson_export.out, "Output .pdf")->required();
  lesson_export_cmd->add_option("--size", lesson_export.size, "Page size WxH in points (default A4 landscape)")
      ->capture_default_str();

  BenchOptions bench;
  CLI::App* bench_cmd = app.add_subcommand("bench", "Benchmark the engine and print a table");
  bench_cmd->add_flag("--json", bench.json, "Print the same data as JSON");
  bench_cmd->add_option("--only", bench.only, "Run one section (multi_head, ..., llama)");
  bench_cmd->add_option("--write-llama-checkpoint", bench.write_llama_checkpoint,
                        "Write the llama section's TinyLlama-1.1B-shaped random BF16 checkpoint (2.2 GB) into DIR and exit");
  bench_cmd->add_option("--llama-checkpoint", bench.llama_checkpoint,
                        "llama and llama_threads sections: run on DIR (from --write-llama-checkpoint) instead of writing a temporary one");
  bench_cmd->add_option("--llama-fresh", bench.llama_fresh,
                        "One load and forward of the llama section on DIR, as a JSON line (the cold figure: run it in a "
                        "fresh process)");
  bench_cmd->add_option("--llama-tokens", bench.llama_tokens,
                        "With --llama-fresh: the forward's length (128: every map, then a 9-token generation; longer: "
                        "pooled maps)")
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string cmd;
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      cmd += (cmd.empty() ? "" : " ") + sub->get_name();
    }
    return usageError(e, cmd);
  }

  try {
    if (*list_cmd) return list_kinds ? cmdListKinds(list_json) : cmdList(list_json);
    if (*compute_cmd) return cmdCompute(compute);
    if (*render_cmd) return cmdRender(argc, argv, render);
    if (*bench_cmd) return cmdBench(bench);
    if (*model_families_cmd) return cmdModelFamilies(model_json, families_markdown);
    if (*model_info_cmd) return cmdModelInfo(model_path, model_json);
    if (*model_run_cmd) return cmdModelRun(model_run);
    if (*model_gen_cmd) return cmdModelGenerate(model_gen);
    for (CLI::App* cmd : intervention_cmds)
      if (*cmd) {
        intervention.what = cmd->get_name();
        return cmdModelIntervention(intervention);
      }
    if (*model_cmp_cmd) return cmdModelCompare(model_cmp);
    if (*lesson_list_cmd) return cmdLessonList(lesson_json);
    if (*lesson_export_cmd) return cmdLessonExport(argc, argv, lesson_export);
    if (*gui_cmd) {
      bool variant_flags = !gui.scene.variant.empty() || !gui.scene.sets.empty();
      for (const CLI::Option* o : gui_cmd->get_options())
        for (const char* f : {"--seed", "--length", "--source-length", "--dim", "--heads", "--preset", "--text",
                              "--source-text", "--x", "--q", "--k", "--v"})
          if (o->check_name(f) && o->count() > 0) {
            gui.scene.input_given = true;
            variant_flags = variant_flags || std::string(f) != "--text";
          }
      // The model workspace unless only the variant workspace's flags say otherwise.
      gui.scene.model_workspace = !gui.scene.model.empty() || !gui.scene.pattern.empty() || !gui.scene.attention.empty() || !variant_flags;
      if (!gui_size.empty()) std::tie(gui.width, gui.height) = parseSize(gui_size, "--size");
      if (gui.frames < 0) throw InputError("--frames: expected a non-negative number of frames");
      if (!gui.screenshot.empty() && gui.frames <= 0)
        throw InputError("--screenshot: needs --frames N (N ≥ 1) to know when to capture");
      if (gui.step < 0) throw InputError("--step: expected a step number ≥ 0");
      if (gui.lesson.empty() && gui.step > 0) throw InputError("--step: needs --lesson NAME");
      if (gui.generate < 0) throw InputError("--generate: expected a number of new tokens ≥ 1");
      if (gui.generate > 0 && (!gui.scene.model_workspace || !gui.lesson.empty()))
        throw InputError("--generate: needs the model workspace (no --variant, --set, synthetic input or --lesson)");
      if (gui.generate > 0 && !gui.scene.attention.empty())
        throw InputError("--generate: needs a model; attention from a file (--attention) has no model to generate with");
      if (gui.generate_step != -1 && gui.generate == 0) throw InputError("--generate-step: needs --generate N");
      if (gui.generate_step < -1 || gui.generate_step > gui.generate)
        throw InputError("--generate-step: expected 0 to the --generate count " + std::to_string(gui.generate) +
                         ", got " + std::to_string(gui.generate_step));
      validateScene(gui.scene);
      if (!gui.scene.attention.empty())  // read before any window opens: bad input is one line
        gui.attention = readAttention({gui.scene.attention, gui.scene.tokens, gui.scene.input.q, gui.scene.input.k});
    }
    return runGui(gui);
  } catch (const InputError& e) {
    std::cerr << "attnlab: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attnlab: internal error: " << e.what() << "\n";
    return 1;
  }
}
