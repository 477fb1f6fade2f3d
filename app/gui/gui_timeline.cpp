#include "app/gui/gui_timeline.h"

#include "engine/error.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

const ParamSpec* specOf(const VariantInfo& info, const std::string& key) {
  for (const ParamSpec& p : info.params)
    if (p.key == key) return &p;
  return nullptr;
}

// The parameter's value as a step: an int, or the first of a float list (z).
int64_t paramPosition(const VariantInfo& info, const Params& params, const std::string& key) {
  const ParamSpec* spec = specOf(info, key);
  if (!spec || !params.has(key)) return 0;
  switch (spec->type) {
    case ParamType::Int: return params.getInt(key);
    case ParamType::Float: return static_cast<int64_t>(std::floor(params.getFloat(key)));
    case ParamType::FloatList: {
      const std::vector<double>& v = params.getFloatList(key);
      return v.empty() ? 0 : static_cast<int64_t>(std::floor(v.front()));
    }
    default: return 0;
  }
}

}  // namespace

ActiveTimeline activeTimeline(const AppState& s, const Result& r) {
  ActiveTimeline t;
  const int64_t stage = s.view.params.stage;
  if (s.view.view->steps == ViewSteps::Stages && !r.stages.empty()) {
    t.kind = ActiveTimeline::Kind::Stage;
    t.count = static_cast<int64_t>(r.stages.size());
    t.position = std::clamp<int64_t>(stage, 0, t.count - 1);
    t.label = stage < 0 ? "all stages" : r.stages[static_cast<size_t>(t.position)].title;
    return t;
  }
  if (s.view.view->steps == ViewSteps::Extras) {
    for (const Extra& e : r.extras) {
      if (e.kind == ExtraKind::Weights && e.slice_axis != "head" && e.value.rank() == 3 && e.value.shape[0] > 0) {
        t.kind = ActiveTimeline::Kind::Slice;
        t.count = e.value.shape[0];
        t.position = std::clamp<int64_t>(stage, 0, t.count - 1);
        t.label = e.slice_axis + " " + std::to_string(t.position + 1) + " of " + std::to_string(t.count);
        return t;
      }
      if (e.kind == ExtraKind::Curves && e.stepwise && !e.value.shape.empty() && e.value.shape.back() > 0) {
        t.kind = ActiveTimeline::Kind::Reveal;
        t.count = e.value.shape.back();
        t.position = std::clamp<int64_t>(stage, 0, t.count - 1);
        t.label = stage < 0 ? "every step" : (e.col_axis.empty() ? "x" : e.col_axis) + " = " + std::to_string(t.position);
        return t;
      }
    }
  }
  const VariantInfo* info = findVariant(r.variant);
  if (!r.timeline.param.empty() && r.timeline.count > 1 && info && s.view.view->steps != ViewSteps::None) {
    t.kind = ActiveTimeline::Kind::Param;
    t.param = r.timeline.param;
    t.count = r.timeline.count;
    t.position = std::clamp<int64_t>(paramPosition(*info, s.scene.params, t.param), 0, t.count - 1);
    const ParamSpec* spec = specOf(*info, t.param);
    t.label = t.position < static_cast<int64_t>(r.timeline.labels.size())
                  ? r.timeline.labels[static_cast<size_t>(t.position)]
                  : (spec ? spec->symbol : t.param) + " = " + std::to_string(t.position);
  }
  return t;
}

void setTimelinePosition(AppState& s, const ActiveTimeline& t, int64_t position) {
  const int64_t p = std::clamp<int64_t>(position, 0, std::max<int64_t>(0, t.count - 1));
  if (t.kind != ActiveTimeline::Kind::Param) {
    s.view.params.stage = static_cast<int>(p);
    s.view.scroll_to_played = true;
    return;
  }
  const VariantInfo* info = findVariant(s.scene.variant);
  if (!info) return;
  try {
    const bool recorded = sameScene(s.scene, s.committed);
    s.scene.params.set(info->params, t.param, std::to_string(p));
    if (recorded) s.committed = s.scene;  // a step of the process is not an undo step
  } catch (const InputError& e) {
    s.status = e.what();
    s.status_is_error = true;
  }
}

namespace {

// Forward from "every step" (stage −1) starts at the first; a parameter is always at a step.
int64_t nextPosition(const AppState& s, const ActiveTimeline& t) {
  return s.view.params.stage < 0 && t.kind != ActiveTimeline::Kind::Param ? 0 : t.position + 1;
}

}  // namespace

void timelineKey(AppState& s, const Result& r, int key) {
  const ActiveTimeline t = activeTimeline(s, r);
  if (t.kind == ActiveTimeline::Kind::None || t.count < 2) return;
  if (key == GLFW_KEY_COMMA) setTimelinePosition(s, t, t.position - 1);
  if (key == GLFW_KEY_PERIOD) setTimelinePosition(s, t, nextPosition(s, t));
  if (key == GLFW_KEY_K) {
    s.view.timeline.playing = !s.view.timeline.playing;
    s.view.timeline.last = ImGui::GetTime();
  }
}

void timelineControl(AppState& s, const Result& r) {
  const ActiveTimeline t = activeTimeline(s, r);
  TimelineState& tl = s.view.timeline;
  if (t.kind == ActiveTimeline::Kind::None || t.count < 2) {
    tl.playing = false;
    return;
  }
  // Stage −1 ("every step") sits before the first step; a parameter is always at one.
  const bool placed = s.view.params.stage >= 0 || t.kind == ActiveTimeline::Kind::Param;
  TimelineRow row;
  row.count = t.count;
  row.position = t.position;
  row.next = nextPosition(s, t);
  row.at_start = t.position == 0 && placed;
  row.at_end = t.position >= t.count - 1 && placed;
  row.ready = t.kind != ActiveTimeline::Kind::Param || s.output_current;  // a parameter step waits for its result
  row.label = t.label;
  if (const std::optional<int64_t> to = timelineRow(tl, row)) setTimelinePosition(s, t, *to);
}

std::optional<int64_t> timelineRow(TimelineState& tl, const TimelineRow& row) {
  std::optional<int64_t> to;
  const double now = ImGui::GetTime();
  // Playing: one step per 1/speed seconds once the shown step is ready; stops at the end.
  if (tl.playing && now - tl.last >= 1.0 / kTimelineSpeeds[tl.speed] && row.ready) {
    if (row.at_end) {
      tl.playing = false;
    } else {
      to = row.next;
      tl.last = now;
    }
  }
  ImGui::PushID("timeline");
  auto button = [](const char* label, const char* tip, bool enabled) {
    ImGui::BeginDisabled(!enabled);
    const bool pressed = ImGui::Button(label);
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", tip);
    ImGui::SameLine();
    return pressed;
  };
  if (button("\xE2\x87\xA4", "first step", !row.at_start)) to = 0;
  if (button("\xE2\x86\x90##back", "step back (,)", !row.at_start)) to = row.position - 1;
  if (button(tl.playing ? "\xE2\x80\x96" : "\xE2\x96\xB6", tl.playing ? "pause (K)" : "play the steps (K)", true)) {
    tl.playing = !tl.playing;
    tl.last = now;
    if (tl.playing && row.at_end) to = 0;  // play again from the start
  }
  if (button("\xE2\x86\x92##forward", "step forward (.)", !row.at_end)) to = row.next;
  if (button("\xE2\x87\xA5", "last step", !row.at_end)) to = row.count - 1;
  int shown = static_cast<int>(row.position);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
  if (ImGui::SliderInt("##position", &shown, 0, static_cast<int>(row.count - 1), "")) to = shown;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4.5f);
  const char* speeds[] = {"0.5\xC3\x97", "1\xC3\x97", "2\xC3\x97", "4\xC3\x97"};
  ImGui::Combo("##speed", &tl.speed, speeds, 4);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("playback speed (steps per second)");
  ImGui::SameLine();
  ImGui::TextUnformatted(row.label.c_str());
  ImGui::PopID();
  return to;
}

}  // namespace attn
