"""Diagnosis codes -> bank questions on the same concept, and the review nudges they cause.

A failing ``drill grade`` or whiteboard run is already a row of ``grade_runs``; that row is
the event. :func:`nudges` reads it back so that ``drill.review`` can make the linked questions
due now, until they are answered again. Nothing is written to ``review_state``, so the
rebuild-from-log design holds and history export/import carries the nudges for free.
Torch-free: ``drill review`` and ``drill stats`` use it.
"""

from __future__ import annotations

import json
import sqlite3

# Every id must exist in the bundled bank (tests/test_mistakes.py checks it).
CODE_QUESTIONS: dict[str, tuple[str, ...]] = {
    "scale-missing": ("attn-why-sqrt-dk", "attn-dot-product-variance", "attn-scale-factor-value"),
    "scale-by-d": ("attn-divide-by-dk", "attn-why-sqrt-dk"),
    "scale-by-d-model": ("mha-head-dim", "attn-scale-factor-value"),
    "softmax-wrong-dim": ("attn-softmax-axis", "attn-softmax-wrong-axis"),
    "mask-inverted": ("mask-hf-polarity", "mask-sdpa-vs-mha-polarity"),
    "mask-after-softmax": ("mask-before-softmax", "mask-after-softmax-renorm"),
    "causal-off-by-one": ("mask-causal-shape", "mask-causal-count"),
    "causal-blocks-self": ("mask-causal-count", "mask-causal-shape"),
    "causal-transposed": ("mask-causal-shape", "mask-causal-why-training"),
    "unstable-softmax": ("attn-softmax-saturation", "mask-fp16-neg-inf", "flash-online-softmax-numeric"),
    "heads-split-without-transpose": ("mha-reshape-without-transpose", "mha-split-merge-heads"),
    "heads-merge-without-transpose": ("mha-split-merge-heads", "mha-merged-shape"),
    "missing-output-projection": ("attn-why-separate-projections", "mha-param-count"),
    "qkv-order": ("attn-qkv-roles", "mha-wq-weight-shape"),
    "mask-on-queries": ("mask-padding-key-axis", "mask-padding-broadcast-shape"),
    "k-v-swapped": ("attn-qkv-roles", "attn-formula-steps"),
    "wrong-output-shape": ("attn-per-head-output-shape", "mha-merged-shape"),
    "causal-mask-missing": ("mask-causal-why-training", "mask-causal-shape"),
    "mask-not-bool": ("mask-hf-polarity", "mask-additive-overflow"),
    "cross-qkv-source-swapped": ("attn-cross-qkv-source", "attn-cross-attn-shapes"),
    "gqa-head-mapping": ("mha-gqa-kv-heads", "mha-gqa-k-shape"),
    "kv-cache-not-appended": ("infer-kv-cache-what", "infer-prefill-vs-decode"),
    "kv-cache-chunk-unmasked": ("mask-decode-step-shape", "infer-prefill-vs-decode"),
    "kv-cache-mask-top-left": ("mask-is-causal-alignment", "mask-decode-step-shape"),
    "flash-missing-rescale": ("flash-online-softmax", "flash-output-rescale"),
    "flash-missing-normalise": ("flash-online-softmax", "flash-output-rescale"),
    "flash-causal-block-off-by-one": ("mask-causal-tile-count", "flash-tiling"),
    "flash-tail-block-dropped": ("flash-tiling",),
    "flash-materialises-scores": ("flash-memory-scaling", "flash-why-standard-memory-bound"),
    "rope-rotation-direction": ("pos-rope-mechanism", "pos-rope-relative-proof"),
    "rope-pairing-mismatch": ("pos-rope-mechanism", "pos-rope-applied-to"),
    "rope-sin-cos-swapped": ("pos-rope-mechanism", "pos-rope-angle-table"),
    "rope-frequency-exponent": ("pos-rope-theta", "pos-rope-angle-table"),
    "block-layernorm-wrong-axis": ("block-layernorm-axis", "block-bn-vs-ln"),
    "block-post-ln": ("block-pre-vs-post-ln", "block-original-norm-placement"),
    "block-missing-residual": ("block-residual-why",),
    "dropout-in-eval": (),
    "mutates-input": (),
    "uses-builtin": (),
    "not-implemented": (),
}


def questions_for(codes) -> list[str]:
    """The linked question ids of ``codes``, in order, without repeats; unknown codes link nothing."""
    return list(dict.fromkeys(qid for code in codes for qid in CODE_QUESTIONS.get(code, ())))


def nudges(conn: sqlite3.Connection) -> dict[str, str]:
    """question id -> UTC time of the latest failing grade run whose codes link to it."""
    latest: dict[str, str] = {}
    for codes, run_at in conn.execute("SELECT codes, run_at FROM grade_runs WHERE passed = 0 AND codes != '[]'"):
        for qid in questions_for(json.loads(codes)):
            latest[qid] = max(latest.get(qid, run_at), run_at)  # UTC ISO text sorts as time; no sort of every run
    return latest
