"""drill grade --trace on the tasks added after the first ones: each task's correct fixtures trace
clean, and one of its own mutants (drill/grade/tasks/<task>/mutants/) is named at the line of its bug.

The trace runs on the real user side (a forked process), as in a grade.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from traced import the_line, trace, zh
from whiteboard_impls import correct_files
from zh_text import english_words

ROOT = Path(__file__).parents[2]
TASK_DIR = ROOT / "drill" / "grade" / "tasks"

# (task, mutant file, the text of the line its bug is on, the step the trace expects there; ...: any)
MUTANTS = [
    ("sinusoidal", "sinusoidal-sin-cos-swapped__1.py", "pe[:, 0::2] = torch.cos(pos * div_term)", "output"),
    ("sinusoidal", "sinusoidal-position-offset__1.py", "torch.arange(1, T + 1", "positions"),
    ("flash_decoding", "flash-decoding-merge-unnormalised__1.py", "return (torch.exp(lse", "output"),
    ("flash_decoding", "flash-decoding-plain-average__1.py", "return sum(partials)", "p·v, chunk 4"),
    ("paged_attention", "paged-garbage-nan__1.py", "v = v_cache[block_table]", "values of every slot (past the context: 0)"),
    ("paged_attention", "paged-context-unmasked__1.py", "k, v = k_cache[blocks].flatten(0, 1)", None),
    ("linear_attention", "linear-attention-normaliser-missing__1.py", "return torch.einsum(", "output"),
    ("linear_attention", "linear-attention-eps-ignored__1.py", "return num / (den + 1e-6)", "output"),
    ("attention_backward", "attn-backward-scale-missing__2.py", "return ds @ k * scale, ds.transpose(-2, -1) @ q, dv", "dK"),
    ("attention_backward", "attn-backward-softmax-jacobian__2.py", "ds = p * (1 - p) * dp", ...),
    ("dpo_loss", "dpo-beta-outside-logsigmoid__1.py", "loss = -beta * F.logsigmoid(logits)", "z = β·margin"),
    ("quantize", "quant-255-not-127__1.py", "/ 255", "scale = absmax / 127"),
    ("quantize", "quant-truncation__1.py", "q = torch.clamp(w / safe, -127, 127)", "q"),  # an int8 step, compared exactly
    ("mla", "mla-scale-by-latent__1.py", "math.sqrt(c_kv.size(-1))", "scaled"),
    ("moe", "moe-weights-not-normalised__2.py", "weights = F.softmax(top_logits, dim=0)", "routing weights"),
    ("paged_attention", "paged-index-swapped__1.py", "blk, slot = block_table[b, t % bs], t // bs", None),  # it raises there
    # alpha is set in __init__ (no torch op): the line named is where the wrong scale meets the tensors
    ("lora", "lora-scale-alpha__1.py", "return self.base(x) + self.scaling", "(α/r)·B(A(x))"),
]
# the fixtures some of whose steps only feed others (keys padded to whole chunks, one token of a recurrence, one row, inside an expert): clean, not every line named
PARTLY_NAMED = {"flash_decoding_vectorised", "paged_attention_batched", "linear_attention_recurrent", "quantize_loop_rows", "moe_dense_mask",
                "moe_token_loop",
                "quantize_gpt_fast",  # aminmax and the clamped min/max only feed the scale
                "moe_hf_mixtral", "moe_mistral_inference", "moe_router_float32_hf"}  # in-place renormalising and reshapes feed the weights
OUTPUT_STEP = {"attention_backward": "dQ", "quantize": "q"}  # the step the (first) returned value is named, where not "output"
TASKS_HERE = sorted({m[0] for m in MUTANTS})


def fixtures(task: str) -> list[Path]:
    return [TASK_DIR / task / "solution.py"] + correct_files(task)


CLEAN = [(task, path) for task in TASKS_HERE for path in fixtures(task)]


@pytest.mark.parametrize("task, path", CLEAN, ids=[f"{t}-{p.parent.name}-{p.stem}" for t, p in CLEAN])
def test_a_correct_file_traces_clean_and_every_line_names_a_step(task, path):
    found = trace(path, task)
    assert found["first_divergence"] is None, found["first_divergence"]
    data = [row for row in found["trace"] if row["status"] != "aux"]
    assert data and all(row["status"] in ("match", "feeds") for row in data), found["trace"]
    assert any(r["match"] == OUTPUT_STEP.get(task, "output") for r in data)
    if path.stem in PARTLY_NAMED:
        return
    for line in {row["line"] for row in data}:
        assert any(r["match"] for r in data if r["line"] == line), (line, found["trace"])


@pytest.mark.parametrize("task, name, text, expected", MUTANTS, ids=[m[1].removesuffix(".py") for m in MUTANTS])
def test_a_mutant_is_named_at_the_line_of_its_bug(task, name, text, expected):
    path = TASK_DIR / task / "mutants" / name
    found = trace(path, task)["first_divergence"]
    assert found is not None and found["line"] == the_line(path, text), found
    assert expected is ... or found["expected"] == expected, found
    assert english_words(zh(found["message"])) == [], zh(found["message"])


# rule breaks the trace names on the small input: an assignment into an input, a task's own builtin
RULES = [
    ("rope", "mutates-input__rope.py", "x[..., 0::2] = even * cos - odd * sin", "assigns into an input"),
    ("layernorm", "uses-builtin-layernorm__1.py", "return F.layer_norm(", "builtin `F.layer_norm / nn.LayerNorm`"),
    ("softmax", "uses-builtin-softmax__1.py", "return x.log_softmax(dim=dim).exp()", "builtin `log_softmax`"),
    ("grad_clip", "uses-builtin-clip-grad__1.py", "return clip_grad_norm_(", "builtin `torch.nn.utils.clip_grad_norm_`"),
]


@pytest.mark.parametrize("task, name, text, said", RULES, ids=[m[1].removesuffix(".py") for m in RULES])
def test_a_rule_break_is_named_at_its_line(task, name, text, said):
    path = TASK_DIR / task / "mutants" / name
    line = next(n for n, code in enumerate(path.read_text().splitlines(), 1) if text in code)
    found = trace(path, task)["first_divergence"]
    assert found is not None and found["line"] == line and said in found["message"], found
    assert english_words(zh(found["message"])) == [], zh(found["message"])
