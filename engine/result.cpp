#include "engine/result.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

std::string extraKindName(ExtraKind k) {
  switch (k) {
    case ExtraKind::Matrix: return "matrix";
    case ExtraKind::Weights: return "weights";
    case ExtraKind::QueryPosition: return "query_position";
    case ExtraKind::QueryWindow: return "query_window";
    case ExtraKind::TokenValues: return "token_values";
    case ExtraKind::Scalar: return "scalar";
    case ExtraKind::HeadValues: return "head_values";
    case ExtraKind::Curves: return "curves";
    case ExtraKind::QueryGroup: return "query_group";
    case ExtraKind::TokenCategories: return "token_categories";
    case ExtraKind::CategoryValues: return "category_values";
    case ExtraKind::Points: return "points";
    case ExtraKind::Stacked: return "stacked";
  }
  return "?";
}

const Extra* Result::findExtra(const std::string& name) const {
  for (const Extra& e : extras)
    if (e.name == name) return &e;
  return nullptr;
}

ValueStats ValueStats::of(const float* data, int64_t n) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(data[i])) continue;
    lo = std::min(lo, data[i]);
    hi = std::max(hi, data[i]);
  }
  if (lo > hi) return {};  // empty or all non-finite
  return {lo, hi};
}

const Extra* Result::firstExtra(ExtraKind kind) const {
  for (const Extra& e : extras)
    if (e.kind == kind) return &e;
  return nullptr;
}

void Result::computeStats() {
  ValueStats all{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  auto add = [&all](const float* data, int64_t n) {
    const ValueStats s = ValueStats::of(data, n);
    all.min = std::min(all.min, s.min);
    all.max = std::max(all.max, s.max);
  };
  for (const Mat& w : weights) add(w.data(), w.size());
  if (weights.empty())
    for (const SparseRows& s : sparse) add(s.values.data(), static_cast<int64_t>(s.values.size()));
  weights_stats = all.min <= all.max ? all : ValueStats{};
  for (Extra& e : extras) e.stats = ValueStats::of(e.value.data.data(), e.value.size());
}

}  // namespace attn
