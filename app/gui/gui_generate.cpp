// Index
//   [SECTION] Feed and requests
//   [SECTION] Panel section
//   [SECTION] Timeline and keys
//   [SECTION] Marks over the view
#include "app/gui/gui_generate.h"

#include "app/gui/gui_panels.h"
#include "app/gui/gui_timeline.h"
#include "widgets/annotations.h"
#include "widgets/primitives_imgui.h"
#include "widgets/shaded_text.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cstdio>

namespace attn {

// [SECTION] Feed and requests

void GenerationFeed::put(std::shared_ptr<const ModelOutput> o) {
  const std::lock_guard<std::mutex> lock(mutex_);
  latest_ = std::move(o);
}

std::shared_ptr<const ModelOutput> GenerationFeed::take() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(latest_, nullptr);
}

std::string generateUnavailable(const ModelState& m) {
  if (!m.scene.model) return "no model is loaded yet";
  const ModelConfig& c = modelInfo(*m.scene.model).config;
  if (!c.causal)
    return c.label + " reads the text in both directions and has no next-token head: only causal language models generate";
  return {};
}

GenerateOptions generateOptions(const GenerationState& g) {
  GenerateOptions o;
  o.max_new = g.new_tokens;
  o.top_k = g.sample ? g.top_k : 0;
  o.temperature = g.sample ? g.temperature : 1.0f;
  o.seed = static_cast<uint64_t>(g.seed);
  return o;
}

void requestGeneration(ModelState& m) {
  if (generateUnavailable(m).empty() && !m.gen.running) m.gen.requested = true;
}

void discardStaleGeneration(ModelState& m) {
  if (!m.scene.generation || m.scene.text == m.gen.text) return;
  m.scene.generation.reset();
  m.scene.generation_steps = 0;
  m.gen.timeline.playing = false;
}

// [SECTION] Panel section

namespace {

// The prompt's tokens, then the new ones in the accent colour (those past
// the timeline's step dimmed, the step's own framed), flowed over the
// panel's width. A click on a new token moves the timeline to it.
void generatedText(AppState& s, const Generation& g, const std::vector<std::string>& prompt) {
  ModelScene& sc = s.model.scene;
  const ImVec4 accent = ImGui::GetStyle().Colors[ImGuiCol_PlotHistogram];
  const ImVec4 dim = ImGui::GetStyle().Colors[ImGuiCol_TextDisabled];
  const float left = ImGui::GetCursorScreenPos().x, right = left + ImGui::GetContentRegionAvail().x;
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(0, ImGui::GetStyle().ItemSpacing.y * 0.5f));
  bool first = true;
  auto flow = [&](const std::string& text) {
    const float w = ImGui::CalcTextSize(text.c_str()).x;
    if (!first) {
      ImGui::SameLine();
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    first = false;
  };
  for (const std::string& t : prompt) {
    const std::string text = shownToken(t);
    flow(text);
    ImGui::TextColored(dim, "%s", text.c_str());
  }
  for (size_t i = 0; i < g.tokens.size(); ++i) {
    const std::string text = shownToken(g.tokens[i].token);
    flow(text);
    const int64_t step = static_cast<int64_t>(i) + 1;
    ImGui::TextColored(step <= sc.generation_steps ? accent : ImVec4(accent.x, accent.y, accent.z, 0.35f), "%s",
                       text.c_str());
    if (step == sc.generation_steps)
      ImGui::GetWindowDrawList()->AddRect(ImGui::GetItemRectMin(), ImGui::GetItemRectMax(), ImGui::GetColorU32(accent));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("new token %lld: '%s', probability %.1f%% (click: show this step)", static_cast<long long>(step),
                        text.c_str(), 100.0 * g.tokens[i].probability);
    if (ImGui::IsItemClicked() && !s.model.gen.running) sc.generation_steps = step;
  }
  ImGui::PopStyleVar();
}

}  // namespace

void generateSection(AppState& s) {
  ModelState& m = s.model;
  GenerationState& g = m.gen;
  const std::string why = generateUnavailable(m);
  const float font = ImGui::GetFontSize();
  ImGui::BeginDisabled(!why.empty() || g.running);
  if (ImGui::Button("Generate")) requestGeneration(m);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", !why.empty() ? why.c_str()
                            : g.running  ? "generating: Cancel in the status bar stops it"
                                         : "continue the text token by token with a KV cache (Ctrl+G); the views follow "
                                           "each new token and the timeline steps through them");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font * 6.5f);
  const int64_t positions = m.scene.model ? modelInfo(*m.scene.model).config.positions : 2;
  if (ImGui::InputInt("new tokens", &g.new_tokens))
    g.new_tokens = std::clamp<int>(g.new_tokens, 1, static_cast<int>(std::max<int64_t>(1, positions - 1)));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("how many tokens to add (fewer if the model ends its text); the prompt and they share the "
                      "model's %lld positions", static_cast<long long>(positions));
  ImGui::Checkbox("sample", &g.sample);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("off: greedy, the most probable token at every step;\non: draw among the top-k tokens of "
                      "softmax(logits / temperature), repeatable by the seed");
  if (g.sample) {
    ImGui::SliderInt("top-k", &g.top_k, 1, 200);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("draw among the k most probable tokens only");
    ImGui::SliderFloat("temperature", &g.temperature, 0.05f, 2.0f, "%.2f");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("below 1 sharpens the distribution, above 1 flattens it");
    ImGui::InputInt("seed", &g.seed);
    g.seed = std::max(0, g.seed);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("the same seed draws the same tokens");
  }
  const ModelOutput* o = m.output.get();
  if (!m.scene.generation || !o || !o->generation || !o->analysis) return;
  const Generation& gen = *m.scene.generation;
  const size_t prompt = gen.prompt.tokens.size();
  const std::vector<std::string> prompt_tokens(o->analysis->run.tokens.begin(),
                                               o->analysis->run.tokens.begin() + static_cast<std::ptrdiff_t>(prompt));
  if (g.running)
    ImGui::TextDisabled("generating\xE2\x80\xA6 %zu of %d new tokens", gen.tokens.size(), g.new_tokens);
  else
    ImGui::TextDisabled("%zu new tokens%s in %.2f s", gen.tokens.size(), gen.stopped_at_eos ? " (the model ended the text)" : "",
                        gen.seconds);
  generatedText(s, gen, prompt_tokens);
  if (g.running) return;
  if (ImGui::SmallButton("discard")) {
    m.scene.generation.reset();
    m.scene.generation_steps = 0;
    g.timeline.playing = false;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("back to the text's own forward pass (editing the text does this too)");
}

// [SECTION] Timeline and keys

namespace {

int64_t newTokens(const ModelScene& sc) { return sc.generation ? static_cast<int64_t>(sc.generation->tokens.size()) : 0; }

void setStep(ModelScene& sc, int64_t step) { sc.generation_steps = std::clamp<int64_t>(step, 0, newTokens(sc)); }

}  // namespace

void generationTimeline(AppState& s) {
  ModelState& m = s.model;
  ModelScene& sc = m.scene;
  if (!sc.generation) return;
  const int64_t n = newTokens(sc), step = std::clamp<int64_t>(sc.generation_steps, 0, n);
  TimelineRow row;
  row.count = n + 1;  // 0: the prompt alone
  row.position = step;
  row.next = step + 1;
  row.at_start = step == 0;
  row.at_end = step >= n;
  row.ready = m.output_current;
  if (step == 0) {
    row.label = "the prompt alone (" + std::to_string(n) + " new tokens follow)";
  } else {
    const GeneratedToken& t = sc.generation->tokens[static_cast<size_t>(step - 1)];
    char p[32];
    std::snprintf(p, sizeof p, "%.1f%%", 100.0 * t.probability);
    row.label = "new token " + std::to_string(step) + " of " + std::to_string(n) + ": '" + shownToken(t.token) + "' (" + p + ")";
  }
  ImGui::BeginDisabled(m.gen.running);
  if (const std::optional<int64_t> to = timelineRow(m.gen.timeline, row)) setStep(sc, *to);
  ImGui::EndDisabled();
}

void generationKey(AppState& s, int key) {
  ModelState& m = s.model;
  if (!m.scene.generation || m.gen.running) return;
  if (key == GLFW_KEY_COMMA || key == GLFW_KEY_LEFT) setStep(m.scene, m.scene.generation_steps - 1);
  if (key == GLFW_KEY_PERIOD || key == GLFW_KEY_RIGHT) setStep(m.scene, m.scene.generation_steps + 1);
  if (key == GLFW_KEY_K) {
    m.gen.timeline.playing = !m.gen.timeline.playing;
    m.gen.timeline.last = ImGui::GetTime();
    if (m.gen.timeline.playing && m.scene.generation_steps >= newTokens(m.scene)) setStep(m.scene, 0);
  }
}

// [SECTION] Marks over the view

void drawGenerationMarks(const AppState& s, ImVec2 pos, ImVec2 size) {
  const ModelOutput* o = s.model.output.get();
  const MatrixPlacement& m = s.anchor;
  if (!o || !o->generation || !o->analysis || o->generation_steps < 1 || !m.valid()) return;
  const int64_t n = static_cast<int64_t>(o->analysis->run.tokens.size());
  if (m.rows != n || m.cols != n) return;  // the view's matrix is not token × token
  ImDrawList* dl = ImGui::GetForegroundDrawList();
  // The newest token is the run's last: its position on both axes (the lessons' token mark) …
  Annotation token;
  token.kind = Annotation::Kind::Token;
  token.query = n - 1;
  dl->PushClipRect(pos, ImVec2(pos.x + size.x, pos.y + size.y), true);
  Primitives prims;
  annotationPrimitives(prims, m, {token}, 1.0f, ImGui::GetFontSize(), imguiMeasure(ImGui::GetFontSize()));
  drawPrimitives(dl, prims);
  dl->PopClipRect();
  // … and its row outlined only, its weights left readable, within the matrix (it may be zoomed).
  const float t = std::clamp((m.rowY(n) - m.rowY(n - 1)) * 0.15f, 1.5f, 3.0f);
  dl->PushClipRect(ImVec2(m.x0 - t, m.y0 - t), ImVec2(m.x1 + t, m.y1 + t), true);
  dl->AddRect(ImVec2(m.x0 - t * 0.5f, m.rowY(n - 1) - t * 0.5f), ImVec2(m.x1 + t * 0.5f, m.rowY(n) + t * 0.5f),
              ImGui::GetColorU32(ImGuiCol_PlotHistogram), 0.0f, 0, t);
  dl->PopClipRect();
}

}  // namespace attn
