"""What of a Chinese trace message is still English: the words outside code spans that are not code or math."""

from __future__ import annotations

import re

# words a Chinese ML engineer writes as they are: names of ops, dtypes, values, the contract's own terms
TERMS = {"inf", "nan", "NaN", "bool", "int8", "int64", "float32", "float64", "softmax", "query", "key", "transpose", "view",
         "reshape", "masked_fill", "torch", "head_dim", "d_model", "log", "exp", "sqrt", "max", "min", "sum", "mean", "cos",
         "sin", "eps", "lse", "top", "token", "value", "logits", "logit", "True", "False", "None", "bfloat16", "float16",
         "int32", "RMSNorm", "Adam", "AdamW", "zygote", "drill", "nanoGPT", "Hugging", "Face", "vLLM",
         "CDF", "UTF", "MiB", "GiB", "dtype", "autograd", "aten"}  # fmt: skip

# names the reference's steps share with the code that computes them (a trace shows them as they are: ✓ scaled)
STEP_NAMES = {"scores", "scaled", "masked", "weights", "output", "logits", "weight", "bias", "context", "lengths", "positions",
              "slopes", "margin", "scale", "gate", "nll", "absmax", "grad", "exp", "log", "sum", "max", "min", "cos", "sin",
              "elu", "silu", "sigmoid", "softmax", "round", "rms", "std", "eps", "base", "freq"}  # fmt: skip


def english_words(text: str) -> list[str]:
    """ASCII words of 3+ letters left once code spans (`x`), shapes ([2, 3]), op names (x.y_z()) and Python's own
    exception text ("抛出了 RuntimeError：…", which Python wrote) are removed."""
    text = re.sub(r"抛出了 \w+(：.*)?", "抛出了", text)
    text = re.sub(r"`[^`]*`|\[[^\]]*\]", " ", text)
    words = re.findall(r"(?<![\w.])[A-Za-z][A-Za-z_]{2,}(?![\w(])", text)
    return [w for w in words if w not in TERMS and not re.fullmatch(r"[a-z]+_[a-z_]+|__\w+__", w)]
