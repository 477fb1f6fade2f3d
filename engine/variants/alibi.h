// ALiBi's per-head slopes (engine/variants/alibi.cpp), exposed for the
// engine tests, which check them against the paper's numbers.
#pragma once

#include <cstdint>
#include <vector>

namespace attn {

// m_1 … m_H: 2^(−8h/H) for H a power of two; otherwise the slopes of the
// largest power of two n < H, then every other slope of 2n (Press et al. 2022).
std::vector<double> alibiSlopes(int64_t heads);

}  // namespace attn
