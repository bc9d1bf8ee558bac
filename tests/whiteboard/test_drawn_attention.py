"""Attention tasks check shapes drawn from the seed too (issue 27). Each file here is right at every fixed shape of
its task's battery (a slope table for the grader's head counts, a scale hard-coded to the fixed head dim); it
passed every check before, and now fails on the drawn shape alone, with the drawn sizes in the message."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from drill.cli import app
from whiteboard_impls import TASKS_DIR

runner = CliRunner()


def solution(task: str) -> str:
    return (TASKS_DIR / task / "solution.py").read_text()


def edited(task: str, old: str, new: str) -> str:
    text = solution(task)
    assert old in text, f"{task}'s solution no longer has {old!r}"
    return text.replace(old, new)


ALIBI_TABLE = '''import math

import torch

# Slopes written out for the head counts one meets (and the grader's fixed cases use); any other H gets the
# geometric formula, which is right only for powers of two.
SLOPES = {
    1: [2**-8],
    4: [2**-2, 2**-4, 2**-6, 2**-8],
    6: [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3],
    8: [2.0**-h for h in range(1, 9)],
    12: [2.0**-h for h in range(1, 9)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5],
}


def alibi_attention(q, k, v, causal=True):
    h, t, d = q.shape[-3:]
    slopes = SLOPES.get(h) or [2 ** (-8 * (i + 1) / h) for i in range(h)]
    m = torch.tensor(slopes, dtype=q.dtype, device=q.device).view(h, 1, 1)
    pos = torch.arange(t, device=q.device)
    bias = -m * (pos[:, None] - pos[None, :]).abs()
    scores = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(d) + bias
    if causal:
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return scores.softmax(dim=-1) @ v
'''

FLASH_SCALE = '''import torch

SCALE = 8**-0.5  # the head dim of every model I tried


def flash_attention(q, k, v, causal=False, block_size=64):
    tq, tk = q.shape[-2], k.shape[-2]
    out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    for qs in range(0, tq, block_size):
        qb = q[..., qs : qs + block_size, :]
        m = torch.full(qb.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
        l = torch.zeros_like(m)
        acc = torch.zeros(*qb.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        for ks in range(0, tk, block_size):
            s = qb @ k[..., ks : ks + block_size, :].transpose(-2, -1) * SCALE
            if causal:
                rows = torch.arange(qs, qs + qb.shape[-2], device=q.device)[:, None]
                cols = torch.arange(ks, ks + s.shape[-1], device=q.device)[None, :]
                s = s.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1))
            p = torch.exp(s - m_new[..., None])
            alpha = torch.exp(m - m_new)
            l = alpha * l + p.sum(dim=-1)
            acc = alpha[..., None] * acc + p @ v[..., ks : ks + block_size, :]
            m = m_new
        out[..., qs : qs + block_size, :] = acc / l[..., None]
    return out
'''

# task: (the file, the seed it is graded at)
CASES = {
    "alibi": (ALIBI_TABLE, 1),
    "attention_backward": (edited("attention_backward", "scale = 1 / math.sqrt(q.size(-1))", "scale = 0.5"), 2),
    "cross": (edited("cross", "/ math.sqrt(hd)", "/ 2.0"), 3),
    "flash": (FLASH_SCALE, 4),
    "flash_decoding": (edited("flash_decoding", "math.sqrt(q.size(-1))", "math.sqrt(8)"), 5),
    "paged_attention": (edited("paged_attention", "/ math.sqrt(q.size(-1))", "* 0.35355339059327373"), 6),
    "sliding_window": (edited("sliding_window", "/ math.sqrt(q.size(-1))", "/ 8**0.5"), 7),
}


@pytest.mark.usefixtures("warm_judge")
@pytest.mark.parametrize("task", sorted(CASES))
def test_a_file_right_only_at_the_fixed_shapes_fails_on_the_drawn_one(tmp_path, task):
    text, seed = CASES[task]
    path = tmp_path / f"{task}_fixed_shapes.py"
    path.write_text(text)
    result = runner.invoke(app, ["grade", str(path), "--task", task, "--device", "cpu", "--json", "--seed", str(seed)])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["seed"] == seed
    failed = [c for c in report["checks"] if c["status"] in ("fail", "error")]
    if task == "attention_backward":  # its numerical checks run the fixed shapes, then ones drawn from the seed
        assert failed and all(c["id"].startswith("numerical.seed") for c in failed), failed
    else:
        assert [c["id"] for c in failed] == ["numerical.drawn"], failed
    for check in failed:
        assert "drawn from the seed" in check["message"] and "max error" in check["message"], check
        assert "由种子抽取" in check["message_zh"], check
