#!/usr/bin/python3
"""Two SentencePiece Unigram tokenizers in tokenizer.json form, for the tests.

Trains a small Unigram model with Debian's python3-sentencepiece, nmt_nfkc
normalisation (whose precompiled charsmap is the one real T5 folders carry),
on a corpus of several scripts, and writes it the two ways transformers'
converters write such models:

  OUT/unigram_t5/tokenizer.json      as T5 folders carry it: the Precompiled
      normalizer alone, WhitespaceSplit then Metaspace (add_prefix_space),
      no byte fallback, "$A </s>", <extra_id_N> added tokens; and the model
      itself as OUT/unigram_t5/spiece.model
  OUT/unigram_modern/tokenizer.json  as current converters write it:
      Precompiled, Strip (right), Replace(" {2,}" → "▁"), Metaspace
      (prepend_scheme "always"), byte fallback (<0x00> … <0xFF>)

tests/tokenizer_unigram_expected.js then records the ids Hugging Face's
`tokenizers` (npm) gives on them. Usage: unigram_reference.py OUT_DIR
"""
import base64
import io
import json
import os
import sys

import sentencepiece as spm

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Attention is all you need; attention maps show where each token looks.",
    "Café, déjà vu, naïve façade, crème brûlée and the Zürich Straße.",
    "El niño comió piñas en la mañana. ¿Dónde está la estación?",
    "Le chat est assis sur le tapis, et le chien dort.",
    "Die Katze sitzt auf der Matte und der Hund schläft.",
    "東京は日本の首都です。注意機構は面白い。",
    "北京欢迎你，机器翻译很有用。",
    "한국어 문장도 조금 있습니다.",
    "Числа: 1, 22, 333, 4444 и 55555.",
    "In 2024 there were 365 days, 12 months and 52 weeks.",
    "Emoji: 🙂 😀 🚀 ✨ and hearts ❤️ in a sentence.",
    "Translate English to German: the house is wonderful.",
    "summarize: encoder-decoder models attend from the target to the source.",
    "question: what is the capital of France? context: Paris is the capital.",
    "Ｆｕｌｌｗｉｄｔｈ letters and ①②③ circled digits, the ﬁ ligature and ㎏.",
]

EXTRA_IDS = 3


def read_fields(data):
    """The (field number, wire type, value) of one protobuf message, in order."""
    i, out = 0, []

    def varint():
        nonlocal i
        shift = v = 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v

    while i < len(data):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            out.append((field, wire, varint()))
        elif wire == 1:
            out.append((field, wire, data[i:i + 8]))
            i += 8
        elif wire == 2:
            n = varint()
            out.append((field, wire, data[i:i + n]))
            i += n
        elif wire == 5:
            out.append((field, wire, data[i:i + 4]))
            i += 4
        else:
            raise ValueError("wire type %d" % wire)
    return out


def charsmap(model_proto):
    """ModelProto.normalizer_spec (3).precompiled_charsmap (2)."""
    for field, wire, value in read_fields(model_proto):
        if field == 3 and wire == 2:
            for f, w, v in read_fields(value):
                if f == 2 and w == 2:
                    return bytes(v)
    raise ValueError("no precompiled_charsmap")


def train(byte_fallback):
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS * 20), model_writer=out, model_type="unigram", vocab_size=420,
        normalization_rule_name="nmt_nfkc", character_coverage=0.9995, pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
        byte_fallback=byte_fallback, hard_vocab_limit=False, minloglevel=2)
    return out.getvalue()


def special(i, content):
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def tokenizer_json(model_proto, t5):
    sp = spm.SentencePieceProcessor(model_proto=model_proto)
    vocab = [[sp.id_to_piece(i), sp.get_score(i)] for i in range(sp.get_piece_size())]
    added = [special(0, "<pad>"), special(1, "</s>"), special(2, "<unk>")]
    if t5:
        for n in range(EXTRA_IDS - 1, -1, -1):
            added.append(special(len(vocab), "<extra_id_%d>" % n))
            vocab.append(["<extra_id_%d>" % n, 0.0])
    precompiled = {"type": "Precompiled",
                   "precompiled_charsmap": base64.b64encode(charsmap(model_proto)).decode("ascii")}
    if t5:
        normalizer = precompiled
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"}, {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True}]}
    else:
        normalizer = {"type": "Sequence", "normalizers": [
            precompiled, {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "▁"}]}
        pre_tokenizer = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": normalizer, "pre_tokenizer": pre_tokenizer,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 2, "vocab": vocab, "byte_fallback": not t5},
    }


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: unigram_reference.py OUT_DIR")
    for name, t5 in (("unigram_t5", True), ("unigram_modern", False)):
        folder = os.path.join(sys.argv[1], name)
        os.makedirs(folder, exist_ok=True)
        model = train(byte_fallback=not t5)
        with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tokenizer_json(model, t5), f, ensure_ascii=False)
        if t5:  # the SentencePiece model itself, as T5 folders carry it beside tokenizer.json
            with open(os.path.join(folder, "spiece.model"), "wb") as f:
                f.write(model)


if __name__ == "__main__":
    main()
