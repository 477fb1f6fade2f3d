// Adaptive computation (family "adaptive computation"): the ACT halting rule
// (Graves 2016) shared by `act` and `universal-transformer`, the Universal
// Transformer's recurrence (Dehghani et al. 2019) and GTrXL's GRU-type gate
// (Parisotto et al. 2020), callable with given weights (tests).
#pragma once

#include "engine/multi_head.h"
#include "engine/run_context.h"
#include "engine/tensor.h"

#include <cstdint>
#include <vector>

namespace attn {

// [SECTION] ACT halting (Graves 2016, §2)
//   N(t)   = min(min{n′ : Σ_{n≤n′} h_t^n ≥ 1 − ε}, M)
//   R(t)   = 1 − Σ_{n<N(t)} h_t^n
//   p_t^n  = h_t^n for n < N(t),  R(t) for n = N(t)
//   ρ_t    = N(t) + R(t)           (ponder cost of step t)
// Fed one h_t^n at a time, because a recurrent model only computes the next
// ponder step while it has not halted.
class ActHalting {
 public:
  // Throws InputError naming `what`'s ε or M when ε ∉ (0, 1) or M < 1.
  ActHalting(double eps, int64_t max_steps, const std::string& what);
  // Adds h_t^n for n = steps() + 1; true when this n is N(t) (then no more may be added).
  bool add(double h);
  bool halted() const { return halted_; }
  int64_t steps() const { return static_cast<int64_t>(p_.size()); }  // N(t) once halted
  double remainder() const { return remainder_; }                     // R(t) once halted
  const std::vector<double>& weights() const { return p_; }           // p_t^1 … p_t^N
  const std::vector<double>& halting() const { return h_; }           // h_t^1 … h_t^N as given
  double ponder() const { return static_cast<double>(steps()) + remainder_; }

 private:
  double eps_;
  int64_t max_steps_;
  double sum_ = 0;  // Σ_{n<N} h_t^n so far
  double remainder_ = 0;
  bool halted_ = false;
  std::vector<double> p_, h_;
};

// [SECTION] Universal Transformer (Dehghani et al. 2019, §2.1 and §2.2)
struct UtWeights {
  MultiHeadWeights attention;  // one block, shared by every step
  Mat w_1, w_2;                // Transition(A) = ReLU(A W_1) W_2     [d, 2d], [2d, d]
  Mat w_h;                     // halting unit h_i^t = σ((H_i^{t−1} + P_i^t) w_h + b_h)   [d, 1]
};
UtWeights makeUtWeights(int64_t d, int64_t heads, uint64_t seed);

struct UtRun {
  std::vector<Mat> states;             // H^0 = x, H^1 … H^T   [L, d] each
  std::vector<std::vector<Mat>> attention;  // step t−1: the block's weights per head [H][L, L]
  std::vector<Mat> last_scores;        // the last step's pre-softmax scores per head [H][L, L]
  std::vector<int64_t> steps;          // N_i per position
  std::vector<double> remainders;      // R_i
  Mat p;                               // [L, T] halting weights p_i^t (0 after N_i)
  Mat time_signal;                     // [T, d] time sinusoid of steps 1 … T
};

// Runs the shared block until every position has halted (ACT per position,
// ε, at most `max_steps`): A^t = LN(H^{t−1} + MHA(H^{t−1} + P^t)),
// H^t = LN(A^t + Transition(A^t)); a halted position's row is copied forward.
UtRun universalTransformer(const Mat& x, const UtWeights& w, int64_t heads, double eps, int64_t max_steps,
                           double halt_bias, const RunContext& ctx);

// [SECTION] GTrXL gate (Parisotto et al. 2020, §3.2, GRU-type gating)
struct GruGateWeights {
  Mat w_r, u_r, w_z, u_z, w_g, u_g;  // [d, d] each
};
GruGateWeights makeGruGateWeights(int64_t d, uint64_t seed);

struct GruGate {
  Mat r, z, h_hat, g;  // [L, d] each
};

// x: the residual stream, y: the sublayer's output, rows are positions:
//   r = σ(y W_r + x U_r),  z = σ(y W_z + x U_z − b_g),  ĥ = tanh(y W_g + (r ⊙ x) U_g)
//   g = (1 − z) ⊙ x + z ⊙ ĥ
GruGate gruGate(const Mat& x, const Mat& y, const GruGateWeights& w, double b_g);

}  // namespace attn
