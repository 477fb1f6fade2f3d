#include "engine/result.h"

namespace attn {

std::string extraKindName(ExtraKind k) {
  switch (k) {
    case ExtraKind::Matrix: return "matrix";
    case ExtraKind::Weights: return "weights";
    case ExtraKind::QueryPosition: return "query_position";
    case ExtraKind::QueryWindow: return "query_window";
    case ExtraKind::TokenValues: return "token_values";
    case ExtraKind::Scalar: return "scalar";
  }
  return "?";
}

const Extra* Result::findExtra(const std::string& name) const {
  for (const Extra& e : extras)
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace attn
