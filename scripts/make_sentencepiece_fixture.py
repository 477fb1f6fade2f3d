#!/usr/bin/python3
"""Trains the tiny SentencePiece model of tests/engine/model/tokenizers/tokenizer_sp_test.cpp.

Writes tests/data/sentencepiece/tokenizer.model (a BPE model of 340 pieces: 3 specials, the 256 byte pieces, the rest merges and characters,
byte fallback on, digits split, Llama 2's normalizer settings, trained on the sentences below) and
tests/data/sentencepiece/expected.json: for each test text the ids
SentencePieceProcessor.EncodeAsIds gives (no bos/eos), and the special ids.
Runs with Debian's /usr/bin/python3 and python3-sentencepiece (0.1.97, the
library libsentencepiece-dev links the engine with);
scripts/make_sentencepiece_fixture.sh installs it and calls this.
"""
import io
import json
import os

import sentencepiece as spm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "sentencepiece")

CORPUS = [
    "the cat sat on the mat",
    "the dog sat on the log",
    "a cat and a dog met on the mat",
    "hello world, hello there",
    "the quick brown fox jumps over the lazy dog",
    "numbers like 12 and 345 are split into digits",
    "attention maps show where each token looks",
    "the model reads the text one token at a time",
    "she sells sea shells by the sea shore",
    "a tokenizer turns text into pieces",
] * 20

TEXTS = [
    "the cat sat on the mat",
    "hello world",
    "Hello World",
    "   ",
    "\n",
    "tokens 2024",
    "a  b",
    "é ü 😀",
    "<s>the</s>",
    "unseen words zebra quartz",
]


def main():
    os.makedirs(OUT, exist_ok=True)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS),
        model_writer=model,
        model_type="bpe",
        vocab_size=340,
        byte_fallback=True,
        split_digits=True,
        character_coverage=1.0,
        # Llama 2's normalizer_spec: no normalization, a dummy prefix '▁',
        # whitespace kept as it is (runs of spaces, leading and trailing)
        normalization_rule_name="identity",
        add_dummy_prefix=True,
        remove_extra_whitespaces=False,
        allow_whitespace_only_pieces=True,
        num_threads=1,
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
    )
    with open(os.path.join(OUT, "tokenizer.model"), "wb") as f:
        f.write(model.getvalue())
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    expected = {
        "vocab_size": sp.get_piece_size(),
        "unk_id": sp.unk_id(),
        "bos_id": sp.bos_id(),
        "eos_id": sp.eos_id(),
        "cases": [{"text": t, "ids": sp.encode_as_ids(t), "decoded": sp.decode_ids(sp.encode_as_ids(t))} for t in TEXTS],
    }
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"make_sentencepiece_fixture.py: {sp.get_piece_size()} pieces, {len(TEXTS)} texts -> {OUT}")


if __name__ == "__main__":
    main()
