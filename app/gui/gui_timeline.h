// The one step control of every process a view can play: first, back,
// play/pause, forward, last, a slider and the speed. What it steps depends
// on the view and the result: the walkthrough's stages (LSH: hash, sort,
// chunk, attend), a Weights extra over its own steps (the Universal
// Transformer), a stepwise curve drawn up to a step (ACT's running sum
// against 1 − ε), or the parameter the result names as its process
// (Result::timeline: Transformer-XL's segment τ, LSH's round, the adaptive
// span's z), recomputed at each step. Lessons set the same position.
#pragma once

#include "app/gui/gui_state.h"

#include <cstdint>
#include <optional>
#include <string>

namespace attn {

inline constexpr float kTimelineSpeeds[] = {0.5f, 1.0f, 2.0f, 4.0f};  // steps per second

struct ActiveTimeline {
  enum class Kind { None, Stage, Slice, Reveal, Param } kind = Kind::None;
  int64_t count = 0, position = 0;
  std::string param;  // Param: the parameter stepped
  std::string label;  // what position is ("stage (c) …", "step 3 of 8", "τ = 2")
};

// What the current view of `r` plays, if anything.
ActiveTimeline activeTimeline(const AppState& s, const Result& r);

// Moves the timeline to `position` (clamped): the view's stage, or the
// parameter (recomputed; not an undo step of its own).
void setTimelinePosition(AppState& s, const ActiveTimeline& t, int64_t position);

// The timeline's keys: ',' back, '.' forward, K play or pause.
void timelineKey(AppState& s, const Result& r, int key);

// Draws the control on one line when the view has a timeline, and advances
// it while playing (a parameter step waits for its result).
void timelineControl(AppState& s, const Result& r);

// The control's row for any process of `count` positions: first, back,
// play/pause, forward, last, a slider, the speed and `label`. `next` is the
// step forward goes to; playing advances once `ready` (the step shown is
// computed) and stops at the end. Returns the position asked for, if any.
struct TimelineRow {
  int64_t count = 0, position = 0, next = 0;
  bool at_start = false, at_end = false;
  bool ready = true;
  std::string label;
};
std::optional<int64_t> timelineRow(TimelineState& tl, const TimelineRow& row);

}  // namespace attn
