#include "tests/engine_reference.h"

#include "engine/error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <unistd.h>

namespace attn::ref {

DMat fromMat(const Mat& m) {
  DMat d(m.rows(), m.cols());
  for (int64_t i = 0; i < m.rows(); ++i)
    for (int64_t j = 0; j < m.cols(); ++j) d(i, j) = m(i, j);
  return d;
}

DMat matmul(const DMat& x, const DMat& y) {
  if (x.cols != y.rows) throw std::logic_error("ref::matmul: shapes");
  DMat z(x.rows, y.cols);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < y.cols; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < x.cols; ++k) acc += x(i, k) * y(k, j);
      z(i, j) = acc;
    }
  return z;
}

DMat transpose(const DMat& x) {
  DMat t(x.cols, x.rows);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.cols; ++j) t(j, i) = x(i, j);
  return t;
}

DMat matmulT(const DMat& x, const DMat& y) { return matmul(x, transpose(y)); }

DMat cols(const DMat& x, int64_t first, int64_t n) {
  DMat z(x.rows, n);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < n; ++j) z(i, j) = x(i, first + j);
  return z;
}

DMat softmaxRows(const DMat& s, const DMat& mask) {
  DMat w(s.rows, s.cols);
  for (int64_t i = 0; i < s.rows; ++i) {
    auto allowed = [&](int64_t j) { return mask.rows == 0 || mask(i, j) != 0.0; };
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < s.cols; ++j)
      if (allowed(j)) mx = std::max(mx, s(i, j));
    if (std::isinf(mx)) continue;
    double sum = 0;
    for (int64_t j = 0; j < s.cols; ++j)
      if (allowed(j)) sum += (w(i, j) = std::exp(s(i, j) - mx));
    for (int64_t j = 0; j < s.cols; ++j) w(i, j) /= sum;
  }
  return w;
}

double maxAbs(const DMat& x) {
  double m = 0;
  for (double v : x.a) m = std::max(m, std::abs(v));
  return m;
}

DMat layerNorm(const DMat& x, double eps) {
  DMat out(x.rows, x.cols);
  for (int64_t i = 0; i < x.rows; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < x.cols; ++j) mean += x(i, j);
    mean /= static_cast<double>(x.cols);
    for (int64_t j = 0; j < x.cols; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
    var /= static_cast<double>(x.cols);
    for (int64_t j = 0; j < x.cols; ++j) out(i, j) = (x(i, j) - mean) / std::sqrt(var + eps);
  }
  return out;
}

DMat sinusoidal(int64_t length, int64_t d) {
  DMat pe(length, d);
  for (int64_t pos = 0; pos < length; ++pos)
    for (int64_t i = 0; 2 * i < d; ++i) {
      const double angle = static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(d));
      pe(pos, 2 * i) = std::sin(angle);
      if (2 * i + 1 < d) pe(pos, 2 * i + 1) = std::cos(angle);
    }
  return pe;
}

DMat causalMask(int64_t lq, int64_t lk) {
  DMat m(lq, lk);
  for (int64_t i = 0; i < lq; ++i)
    for (int64_t j = 0; j < lk; ++j) m(i, j) = j <= i + (lk - lq) ? 1.0 : 0.0;
  return m;
}

HeadRef attendHead(const DMat& q, const DMat& k, const DMat& v, double scale, const DMat& mask) {
  HeadRef h;
  h.scores = matmulT(q, k);
  for (double& s : h.scores.a) s *= scale;
  h.weights = softmaxRows(h.scores, mask);
  h.out = matmul(h.weights, v);
  return h;
}

MultiHeadRef multiHead(const DMat& xq, const DMat& xkv, const Result& r, int64_t heads, const DMat& mask) {
  const int64_t d = xq.cols, dk = d / heads;
  const DMat q = matmul(xq, fromMat(recorded(r, "w_q")));
  const DMat k = matmul(xkv, fromMat(recorded(r, "w_k")));
  const DMat v = matmul(xkv, fromMat(recorded(r, "w_v")));
  MultiHeadRef m;
  DMat concat(xq.rows, d);
  for (int64_t h = 0; h < heads; ++h) {
    m.heads.push_back(attendHead(cols(q, h * dk, dk), cols(k, h * dk, dk), cols(v, h * dk, dk),
                                 1 / std::sqrt(static_cast<double>(dk)), mask));
    for (int64_t i = 0; i < xq.rows; ++i)
      for (int64_t j = 0; j < dk; ++j) concat(i, h * dk + j) = m.heads.back().out(i, j);
  }
  m.out = matmul(concat, fromMat(recorded(r, "w_o")));
  return m;
}

DMat scores(const std::string& kind, const DMat& s, const DMat& h, const Result& r, double beta) {
  const int64_t lq = s.rows, lk = h.rows, d = s.cols;
  DMat out(lq, lk);
  if (kind == "additive") {
    // v_aᵀ tanh(W_a [s_t; h_i]) with the concatenation written out.
    const DMat w_a = fromMat(recorded(r, "w_a")), v_a = fromMat(recorded(r, "v_a"));
    for (int64_t t = 0; t < lq; ++t)
      for (int64_t i = 0; i < lk; ++i) {
        double acc = 0;
        for (int64_t a = 0; a < w_a.rows; ++a) {
          double z = 0;
          for (int64_t k = 0; k < 2 * d; ++k) z += w_a(a, k) * (k < d ? s(t, k) : h(i, k - d));
          acc += v_a(a, 0) * std::tanh(z);
        }
        out(t, i) = acc;
      }
    return out;
  }
  if (kind == "general") return matmulT(matmul(s, fromMat(recorded(r, "w_a"))), h);
  if (kind == "location") return matmulT(s, fromMat(recorded(r, "w_a")));
  out = matmulT(s, h);
  for (int64_t t = 0; t < lq; ++t)
    for (int64_t i = 0; i < lk; ++i) {
      if (kind == "scaled-dot") out(t, i) /= std::sqrt(static_cast<double>(d));
      if (kind == "cosine") {
        double ns = 0, nh = 0;
        for (int64_t k = 0; k < d; ++k) ns += s(t, k) * s(t, k), nh += h(i, k) * h(i, k);
        out(t, i) = ns > 0 && nh > 0 ? beta * out(t, i) / std::sqrt(ns * nh) : 0.0;
      }
    }
  if (kind != "dot" && kind != "scaled-dot" && kind != "cosine") throw std::logic_error("ref::scores: " + kind);
  return out;
}

void expectClose(const Mat& got, const DMat& want, double tol, const std::string& what) {
  ASSERT_EQ(got.rows(), want.rows) << what;
  ASSERT_EQ(got.cols(), want.cols) << what;
  double worst = 0;
  int64_t wi = 0, wj = 0;
  for (int64_t i = 0; i < want.rows; ++i)
    for (int64_t j = 0; j < want.cols; ++j) {
      const double e = std::abs(static_cast<double>(got(i, j)) - want(i, j));
      if (!(e <= worst)) worst = e, wi = i, wj = j;  // NaN counts as worst
    }
  EXPECT_LE(worst, tol) << what << ": worst error at (" << wi << ", " << wj << "): got " << got(wi, wj)
                        << ", want " << want(wi, wj);
}

namespace {

// max |a(i, j) − b(i, j)| over rows × cols entries; NaN as soon as one is NaN.
template <class A, class B>
double maxAbsDiffOf(int64_t rows, int64_t cols, const A& a, const B& b) {
  double worst = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double e = std::abs(static_cast<double>(a(i, j)) - static_cast<double>(b(i, j)));
      if (!(e <= worst)) worst = e;  // NaN stays
      if (std::isnan(worst)) return worst;
    }
  return worst;
}

std::string shapeOf(int64_t rows, int64_t cols) { return std::to_string(rows) + " × " + std::to_string(cols); }

}  // namespace

double maxAbsDiff(const MatRef& a, const MatRef& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    ADD_FAILURE() << "maxAbsDiff: the arrays' shapes differ: " << shapeOf(a.rows(), a.cols()) << " and "
                  << shapeOf(b.rows(), b.cols());
    return std::numeric_limits<double>::quiet_NaN();
  }
  return maxAbsDiffOf(a.rows(), a.cols(), a, b);
}

double maxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) {
    ADD_FAILURE() << "maxAbsDiff: the vectors' lengths differ: " << a.size() << " and " << b.size();
    return std::numeric_limits<double>::quiet_NaN();
  }
  auto at = [](const std::vector<double>& v) { return [&v](int64_t i, int64_t) { return v[static_cast<size_t>(i)]; }; };
  return maxAbsDiffOf(static_cast<int64_t>(a.size()), 1, at(a), at(b));
}

double scaledTol(const DMat& want, double rel) { return rel * std::max(1.0, maxAbs(want)); }

Inputs givenQkv(const Mat& q, const Mat& k, const Mat& v) {
  Inputs in;
  in.q = q;
  in.k = k;
  in.v = v;
  in.x = q;
  in.tokens = positionTokens(q.rows(), "t");
  in.source_tokens = positionTokens(k.rows(), "s");
  in.heads = 1;
  in.projected = true;  // as makeFromMatrices: given q, k, v are used as they are
  return in;
}

Inputs gaussianInputs(uint64_t seed, int64_t lq, int64_t lk, int64_t d, int64_t heads) {
  SyntheticSpec spec;
  spec.seed = seed;
  spec.length = lq;
  spec.source_length = lk;
  spec.dim = d;
  spec.heads = heads;
  spec.preset = Preset::Gaussian;
  return makeSynthetic(spec);
}

Result run(const std::string& name, const Inputs& in, const std::map<std::string, std::string>& set,
           const RunContext& ctx) {
  const VariantInfo& info = variantOrThrow(name);
  Params p = Params::defaults(info.params);
  for (const auto& [k, v] : set) p.set(info.params, k, v);
  return runVariant(info, in, p, ctx);
}

void expectInputError(const std::function<void()>& f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "expected InputError mentioning '" << needles.at(0) << "'";
  } catch (const InputError& e) {
    for (const std::string& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << "message: " << e.what() << "\nmissing: " << n;
  }
}

const Mat& recorded(const Result& r, const std::string& symbol) {
  const auto it = r.inputs.find(symbol);
  if (it == r.inputs.end()) throw std::logic_error(r.variant + " did not record input '" + symbol + "'");
  return it->second;
}

const Array& extra(const Result& r, const std::string& name) {
  const Extra* e = r.findExtra(name);
  if (!e) throw std::logic_error(r.variant + " has no extra '" + name + "'");
  return e->value;
}

Mat asMat(const Array& a) {
  if (a.rank() == 1) return Eigen::Map<const Mat>(a.data.data(), 1, a.shape[0]);
  return a.toMat("ref::asMat");
}

Mat slice(const Array& a, int64_t first) {
  if (a.rank() != 3 || first >= a.shape[0]) throw std::logic_error("ref::slice: expected a rank-3 array");
  const int64_t n = a.shape[1] * a.shape[2];
  return Eigen::Map<const Mat>(a.data.data() + first * n, a.shape[1], a.shape[2]);
}

TempPath::TempPath(const std::string& stem) {
  static int counter = 0;
  path = std::filesystem::temp_directory_path() /
         ("attnlab-engine-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" + stem);
}

TempPath::~TempPath() {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

ScopedEnv::ScopedEnv(const char* k, const char* value) : key(k) {
  if (const char* o = std::getenv(k)) had = true, old = o;
  setenv(k, value, 1);
}

ScopedEnv::~ScopedEnv() {
  if (had) setenv(key.c_str(), old.c_str(), 1);
  else unsetenv(key.c_str());
}

}  // namespace attn::ref
