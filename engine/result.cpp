#include "engine/result.h"

#include "engine/mat_pool.h"

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
    case ExtraKind::Picture: return "picture";
    case ExtraKind::Data: return "data";
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
  int64_t bad = 0;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) reduction(+ : bad) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(data[i])) {
      ++bad;
      continue;
    }
    lo = std::min(lo, data[i]);
    hi = std::max(hi, data[i]);
  }
  if (lo > hi) return {0.0f, 0.0f, bad};  // empty or all non-finite
  return {lo, hi, bad};
}

bool Result::rowsAreTokens(const Extra& e) const {
  return e.value.rank() >= 2 && e.value.shape[e.value.rank() - 2] == queries() && e.row_axis != "position";
}

const Extra* Result::firstExtra(ExtraKind kind) const {
  for (const Extra& e : extras)
    if (e.kind == kind) return &e;
  return nullptr;
}

void Result::computeStats() {
  ValueStats all{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  auto add = [&all](const float* data, int64_t n) {
    if (n == 0) return;
    const ValueStats s = ValueStats::of(data, n);
    all.non_finite += s.non_finite;
    if (s.non_finite == n) return;  // no finite value: no range to merge
    all.min = std::min(all.min, s.min);
    all.max = std::max(all.max, s.max);
  };
  for (const Mat& w : weights) add(w.data(), w.size());
  if (weights.empty())
    for (const SparseRows& s : sparse) add(s.values.data(), static_cast<int64_t>(s.values.size()));
  weights_stats = all.min <= all.max ? all : ValueStats{0.0f, 0.0f, all.non_finite};
  for (Extra& e : extras) e.stats = ValueStats::of(e.value.data.data(), e.value.size());
}

std::string Result::firstNonFinite(bool scan_all) const {
  if (weights_stats.non_finite > 0) return "weights";
  for (const Extra& e : extras)
    if (e.stats.non_finite > 0) return "extras/" + e.name;
  if (!output.allFinite()) return "output";
  if (!scan_all) return "";
  auto finite = [](const float* data, size_t n) { return std::all_of(data, data + n, [](float v) { return std::isfinite(v); }); };
  for (const Mat& w : weights)  // dense copies beside a sparse result
    if (!w.allFinite()) return "weights";
  for (const Mat& s : scores)
    if (!s.allFinite()) return "scores";
  if (!mask.allFinite()) return "mask";
  for (const SparseRows& s : sparse)
    if (!finite(s.values.data(), s.values.size())) return "weights (sparse)";
  for (const Stage& st : stages)
    if (!finite(st.matrix.values.data(), st.matrix.values.size())) return "stage '" + st.title + "'";
  for (const auto& [name, m] : inputs)
    if (!m.allFinite()) return "inputs/" + name;
  return "";
}

std::shared_ptr<const Result> shareResult(Result r, const std::shared_ptr<MatPool>& pool) {
  if (!pool) return std::make_shared<const Result>(std::move(r));
  // The deleter holds the pool, so it outlives every result that returns to it.
  return std::shared_ptr<const Result>(new Result(std::move(r)), [pool](Result* p) {
    for (std::vector<Mat>* list : {&p->weights, &p->scores})
      for (Mat& m : *list) pool->give(std::move(m));
    delete p;
  });
}

}  // namespace attn
