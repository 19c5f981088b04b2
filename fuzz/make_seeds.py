#!/usr/bin/env python3
"""Writes the generated seed inputs of fuzz/corpus/op_call/, op_meta/ and plugin_desc/.

The schema seeds (schema_parser/, op_define/) are schemas of the registry, copied as text. These
two targets read binary inputs, so their seeds are made here, deterministically: rerunning the
script rewrites the same files. Regression inputs (regression-*) are not touched.

    fuzz/make_seeds.py
"""
import os
import random

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(bytes(data))


def op_call_seeds(target="op_call", count=40):
    # FuzzedDataProvider takes integers from the end of the input: the last two bytes pick the
    # op (as a number modulo the number of ops), the front feeds tensor data and choices.
    rng = random.Random(14)
    for i in range(count):
        pick = i * 65536 // count
        body = [rng.randrange(256) for _ in range(rng.choice([32, 96, 256]))]
        write(target, "seed-%02d" % i, body + [pick & 0xFF, pick >> 8])


# plugin_desc: bytes in the order fuzz_plugin.c reads them. Sensible choices: 1 (init goes on),
# 5 (true struct_size), 6 (the sensible string), 3 (the sensible version).
GOOD_HEAD = [1, 5, 6, 6, 3, 3, 3]
PLUGIN_DESC_SEEDS = {
    "privateuse1-register-ok": GOOD_HEAD + [1, 4, 6, 1, 1],
    "cpu-register-ok": GOOD_HEAD + [1, 1, 0, 1, 0],
    "init-error": [0, 3, 6],
    "init-error-code-ok": [0, 0, 6],
    "wrong-major": [1, 5, 6, 6, 0, 3, 3, 1, 4, 6, 1, 1],
    "newer-minor-needed": [1, 5, 6, 6, 3, 3, 0, 1, 4, 6, 1, 1],
    "struct-size-zero": [1, 0, 6, 6, 3, 3, 3, 1, 4, 6, 1, 1],
    "struct-size-huge": [1, 4] + [0xFF] * 8 + [6, 6, 3, 3, 3, 1, 4, 6, 1, 1],
    "empty-name": [1, 5, 0, 6, 3, 3, 3, 1, 4, 6, 1, 1],
    "honest-name": [1, 5, 1, 5] + list(b"myplg") + [6, 3, 3, 3, 1, 4, 6, 1, 1],
    "meta-device": GOOD_HEAD + [1, 7, 6, 1, 1],
    "device-type-random": GOOD_HEAD + [0] + [0x80, 0, 0, 0, 0, 0, 0, 7] + [6, 1, 1],
    "privateuse-no-name": GOOD_HEAD + [1, 4, 0, 1, 1],
    "register-null": GOOD_HEAD + [1, 4, 6, 0, 1],
    "register-error": GOOD_HEAD + [1, 4, 6, 2, 0, 3, 6],
    # register_fuzzed: 4 steps; each: keep-out?, action, then the action's fields.
    "register-kernel": GOOD_HEAD + [1, 4, 6, 3, 1, 4,
                                    1, 0, 5, 0, 6, 1, 3, 1, 1, 6, 0,
                                    1, 0, 5, 2, 6, 1, 3, 1, 1, 6, 1,
                                    0, 0, 5, 1, 6, 1, 1, 1, 1, 6,
                                    1, 0, 5, 0, 6, 1, 3, 0, 0, 6, 0],
    "register-op-define": GOOD_HEAD + [1, 4, 6, 3, 1, 2, 1, 1, 0, 6, 0, 1, 1, 1, 6, 1],
    "register-device": GOOD_HEAD + [1, 4, 6, 3, 1, 2,
                                    1, 2, 0, 5, 4, 1, 0,
                                    1, 2, 0x55, 5, 4, 2, 1],
    "register-fallback": GOOD_HEAD + [1, 4, 6, 3, 0, 2, 1, 3, 4, 1, 6, 0, 3, 1, 0, 6, 1],
}


def plugin_desc_seeds():
    for name, data in PLUGIN_DESC_SEEDS.items():
        write("plugin_desc", "seed-" + name, data)


if __name__ == "__main__":
    op_call_seeds()
    op_call_seeds("op_meta")  # the same generator, reading Meta tensors of any shape
    plugin_desc_seeds()
