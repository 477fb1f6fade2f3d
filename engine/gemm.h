// The one matrix product the engine's hot paths use: OpenBLAS's sgemm on
// row-major float matrices (the OpenMP build, so it shares the engine's
// threads: inside a parallel region it runs on the calling thread alone).
// On this machine kind it runs ~1.5× Eigen's GEMM (bench: the GEMM rates).
// A large product is always cut into tiles that depend on its shape alone,
// one single-threaded sgemm each, spread across the OpenMP threads (run one
// after another inside a caller's parallel loop), so every entry's arithmetic
// is the same at any thread count (OpenBLAS's own split is not: gemm.cpp).
#pragma once

#include "engine/tensor.h"

namespace attn {

// out = alpha · a · op(b) + beta · out, op(b) = bᵀ when `b_transposed`.
// Blocks of row-major matrices (middleRows, middleCols) are fine: their
// outer strides are passed on. `out` must already have its shape.
void gemm(const MatRef& a, const MatRef& b, bool b_transposed, float alpha, float beta, Eigen::Ref<Mat> out);

// The same product as one sgemm on the calling thread, never cut into tiles:
// for a caller whose parallel loop already splits the work (a tile of a
// model's weights, a block of attention rows), so each sgemm packs its
// operands once. Deterministic by shape, as gemm() is, but its bits may
// differ from gemm()'s on the same shape.
void gemmOnce(const MatRef& a, const MatRef& b, bool b_transposed, float alpha, float beta, Eigen::Ref<Mat> out);

// a · b into a new matrix.
Mat product(const MatRef& a, const MatRef& b);

}  // namespace attn
