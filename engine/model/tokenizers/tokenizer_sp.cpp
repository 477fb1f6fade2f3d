// SentencePiece's tokenizer.model, read by libsentencepiece (the library
// those files are made with; Debian's libsentencepiece-dev), for model
// folders without a tokenizer.json (engine/model/tokenizers/tokenizer_json.h).
#include "engine/error.h"
#include "engine/model/tokenizers/tokenizer_json.h"
#include "engine/model/tokenizers/tokenizer_text.h"

#include <sentencepiece_processor.h>

#include <nlohmann/json.hpp>

namespace attn {

namespace {

using nlohmann::json;

class SentencePieceTokenizer final : public Tokenizer {
 public:
  SentencePieceTokenizer(const std::string& model, const std::string& what) : what_(what) {
    const auto status = sp_.LoadFromSerializedProto(model);
    if (!status.ok()) throw InputError(what + ": not a SentencePiece model: " + status.ToString());
  }

  std::vector<int32_t> encode(const std::string& text) const override {
    std::vector<int> ids;
    const auto status = sp_.Encode(text, &ids);
    if (!status.ok()) throw InputError(what_ + ": SentencePiece could not encode the text: " + status.ToString());
    return {ids.begin(), ids.end()};
  }

  // SentencePiece's DecodeIds, ids outside the vocabulary left out.
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::vector<int> kept;
    for (const int32_t id : ids)
      if (id >= 0 && id < vocabSize()) kept.push_back(id);
    std::string out;
    if (!sp_.Decode(kept, &out).ok()) return {};
    return out;
  }

  // The piece with '▁' as a space; a byte piece <0xNN> as its byte (\xNN
  // when it is part of a character).
  std::string display(int32_t id) const override {
    if (id < 0 || id >= vocabSize()) return tok::outsideVocab(id);
    const std::string piece = sp_.IdToPiece(id);
    if (sp_.IsByte(id) && piece.size() == 6) return tok::escapeInvalidUtf8(std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16))));
    std::string out;
    for (size_t at = 0; at < piece.size();) {
      if (piece.compare(at, 3, "\xE2\x96\x81") == 0) {
        out += ' ';
        at += 3;
      } else {
        out += piece[at++];
      }
    }
    return tok::escapeInvalidUtf8(out);
  }

  int32_t vocabSize() const override { return sp_.GetPieceSize(); }
  int bosId() const { return sp_.bos_id(); }  // -1: the model has none
  int eosId() const { return sp_.eos_id(); }

  int32_t specialId(const std::string& token) const override {
    const int id = sp_.PieceToId(token);  // unk's id for a piece it does not know
    return id >= 0 && id < vocabSize() && sp_.IdToPiece(id) == token ? id : -1;
  }

 private:
  sentencepiece::SentencePieceProcessor sp_;
  std::string what_;
};

}  // namespace

HfTokenizer makeSentencePieceTokenizer(const std::string& model, const std::optional<std::string>& tokenizer_config,
                                       const std::string& what_model, const std::string& what_config, bool eos_after) {
  auto sp = std::make_unique<SentencePieceTokenizer>(model, what_model);
  HfTokenizer out;
  const auto idOf = [&](int id) { return id >= 0 && id < sp->vocabSize() ? id : -1; };
  out.bos = idOf(sp->bosId());
  out.eos = idOf(sp->eosId());
  bool add_bos = !eos_after, add_eos = eos_after;
  if (tokenizer_config) {
    json c;
    try {
      c = json::parse(*tokenizer_config);
    } catch (const json::exception& e) {
      throw InputError(what_config + ": malformed JSON: " + tok::jsonMessage(e));
    }
    if (!c.is_object()) throw InputError(what_config + ": expected a JSON object");
    // "<s>" or {"content": "<s>", …}; null: none
    const auto named = [&](const char* field, int32_t& id) {
      if (!c.contains(field)) return;
      const json& v = c.at(field);
      if (v.is_null()) {
        id = -1;
        return;
      }
      const json* content = v.is_object() && v.contains("content") ? &v.at("content") : &v;
      if (!content->is_string())
        throw InputError(what_config + ": " + field + ": expected a token string or {\"content\": …}, got " + v.dump().substr(0, 60));
      id = sp->specialId(content->get<std::string>());
      if (id < 0) throw InputError(what_config + ": " + field + ": " + tok::shown(content->get<std::string>()) + " is not a piece of " + what_model);
    };
    named("bos_token", out.bos);
    named("eos_token", out.eos);
    const auto flag = [&](const char* field, bool otherwise) {
      if (!c.contains(field) || c.at(field).is_null()) return otherwise;
      if (!c.at(field).is_boolean()) throw InputError(what_config + ": " + field + ": expected true or false, got " + c.at(field).dump());
      return c.at(field).get<bool>();
    };
    add_bos = flag("add_bos_token", add_bos);
    add_eos = flag("add_eos_token", add_eos);
  }
  if (add_bos && out.bos < 0)
    throw InputError(what_model + ": no bos piece, but " + what_config + "'s add_bos_token is true (or absent: " +
                     (eos_after ? "false" : "true") + " by default)");
  if (add_eos && out.eos < 0)
    throw InputError(what_model + ": no eos piece, but " + what_config + "'s add_eos_token is true (or absent: " +
                     (eos_after ? "true" : "false") + " by default)");
  if (add_bos) out.before = {out.bos};
  if (add_eos) out.after = {out.eos};
  out.add_bos = add_bos && !add_eos;
  out.tokenizer = std::move(sp);
  return out;
}

}  // namespace attn
