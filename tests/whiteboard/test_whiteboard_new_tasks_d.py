"""Whiteboard V, group D: an encoder_layer session in a real pseudo-terminal (a pre-LN save is named, the
post-LN solution passes), and real public code through the grader: Hugging Face's BertLayer and
LlamaDecoderLayer behind thin adapters, LlamaForCausalLM's own parameter count, and the 1F1B simulation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from drill.whiteboard import catalog

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = catalog.get("encoder_layer").solution.read_text()
PRE_LN = SOLUTION.replace(
    "        x = self.norm1(x + self.attn(x, key_padding_mask))\n        return self.norm2(x + self.fc2(F.gelu(self.fc1(x))))\n",
    "        x = x + self.attn(self.norm1(x), key_padding_mask)\n        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))\n",
)

HF_BERT = '''import torch
from torch import nn
from transformers import BertConfig
from transformers.models.bert.modeling_bert import BertLayer


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, ffn_dim, eps=1e-12):
        super().__init__()
        config = BertConfig(hidden_size=d_model, num_attention_heads=n_heads, intermediate_size=ffn_dim, layer_norm_eps=eps,
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, hidden_act="gelu")
        config._attn_implementation = "eager"  # the judge refuses torch's fused attention kernels
        self.layer = BertLayer(config)

    def forward(self, x, key_padding_mask):
        additive = (~key_padding_mask)[:, None, None, :].to(x.dtype) * torch.finfo(x.dtype).min
        out = self.layer(x, attention_mask=additive)
        return out[0] if isinstance(out, tuple) else out
'''

HF_LLAMA = '''import torch
from torch import nn
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding


class LlamaBlock(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, ffn_dim, rope_theta=10000.0, eps=1e-6):
        super().__init__()
        config = LlamaConfig(hidden_size=d_model, num_attention_heads=n_heads, num_key_value_heads=n_kv_heads,
                             intermediate_size=ffn_dim, rope_theta=rope_theta, rms_norm_eps=eps)
        config._attn_implementation = "eager"
        self.layer = LlamaDecoderLayer(config, layer_idx=0)
        self.rotary = LlamaRotaryEmbedding(config)

    def forward(self, x):
        T = x.shape[1]
        positions = torch.arange(T, device=x.device)[None]
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        mask = torch.zeros(T, T, dtype=x.dtype, device=x.device).masked_fill(future, torch.finfo(x.dtype).min)[None, None]
        out = self.layer(x, attention_mask=mask, position_ids=positions, position_embeddings=self.rotary(x, positions))
        return out[0] if isinstance(out, tuple) else out


def llama_param_count(vocab, d_model, n_layers, n_heads, n_kv_heads, ffn_dim, tied):
    config = LlamaConfig(vocab_size=vocab, hidden_size=d_model, num_hidden_layers=n_layers, num_attention_heads=n_heads,
                         num_key_value_heads=n_kv_heads, intermediate_size=ffn_dim, tie_word_embeddings=tied)
    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    return sum(p.numel() for p in model.parameters())
'''


def save(path: Path, text: str) -> None:
    path.write_text(text)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))  # a distinct mtime even on coarse clocks


def test_encoder_layer_session_names_pre_ln_then_passes(tmp_path, drill_home):
    assert PRE_LN != SOLUTION
    target = tmp_path / "enc.py"
    env = {**os.environ, "DRILL_HOME": str(drill_home), "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    child = pexpect.spawn(sys.executable, ["-m", "drill", "whiteboard", "encoder_layer", "--file", str(target)],
                          cwd=str(tmp_path), env=env, encoding="utf-8", timeout=180, dimensions=(50, 200))  # fmt: skip
    try:
        child.expect("Template written")
        assert "def forward(self, x, key_padding_mask)" in target.read_text()
        child.expect("not implemented yet")
        save(target, PRE_LN)
        child.expect("encoder-pre-ln")
        save(target, SOLUTION)
        child.expect("PASSED")
        child.expect("Solved encoder_layer")
        child.expect("any other key ends")
        child.send("\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    listing = subprocess.run([sys.executable, "-m", "drill", "tasks", "--json"], env=env, capture_output=True, text=True, check=True)
    row = next(t for t in json.loads(listing.stdout) if t["id"] == "encoder_layer")
    assert (row["status"], row["track"], row["level"]) == ("passed", "building blocks", "L2")

@pytest.mark.slow  # CI's second run: pytest -m slow

def test_hugging_face_bert_layer_passes_as_is(tmp_path):
    pytest.importorskip("transformers")
    from drill.grade.battery import run_battery

    path = tmp_path / "hf_bert.py"
    path.write_text(HF_BERT)
    report = run_battery(path, task="encoder_layer", device="cpu")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status in ("fail", "error")]
    assert "attention.self.query" in next(c for c in report.checks if c.id == "load.layout").message

@pytest.mark.slow  # CI's second run: pytest -m slow

def test_a_bert_layer_with_the_mask_on_the_queries_is_named(tmp_path):
    pytest.importorskip("transformers")
    from drill.grade.battery import run_battery

    path = tmp_path / "hf_bert_queries.py"
    path.write_text(HF_BERT.replace("[:, None, None, :]", "[:, None, :, None]"))
    report = run_battery(path, task="encoder_layer", device="cpu")
    assert not report.passed and [d.code for d in report.diagnosis] == ["mask-on-queries"]

@pytest.mark.slow  # CI's second run: pytest -m slow

def test_hugging_face_llama_decoder_layer_and_its_count_pass_as_is(tmp_path):
    pytest.importorskip("transformers")
    from drill.grade.battery import run_battery

    path = tmp_path / "hf_llama.py"
    path.write_text(HF_LLAMA)
    report = run_battery(path, task="llama_block", device="cpu")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status in ("fail", "error")]
    assert "6,738,415,616" in next(c for c in report.checks if c.id == "numerical.llama2-7b-params").message

@pytest.mark.slow  # CI's second run: pytest -m slow

def test_a_llama_layer_with_tiled_kv_heads_is_named(tmp_path):
    pytest.importorskip("transformers")
    from drill.grade.battery import run_battery

    tiled = HF_LLAMA.replace("        T = x.shape[1]\n", "        T = x.shape[1]\n        import transformers.models.llama.modeling_llama as m\n"
                             "        m.repeat_kv = lambda h, n: h.repeat(1, n, 1, 1)\n")  # fmt: skip
    path = tmp_path / "hf_llama_tiled.py"
    path.write_text(tiled)
    report = run_battery(path, task="llama_block", device="cpu")
    assert not report.passed and [d.code for d in report.diagnosis] == ["llama-gqa-repeat-order"]


def test_pipeline_simulation_names_the_deadlock_and_the_in_flight_limit():
    from drill.grade.tasks.pipeline_1f1b.task import reference, simulate

    gpipe = [[("F", i) for i in range(6)] + [("B", i) for i in range(6)] for _ in range(4)]
    assert simulate(gpipe, 4).in_flight == [6, 6, 6, 6]
    backward_first = [[("B", 0), ("F", 0)]]  # one stage: B 0 waits on its own F 0, listed after it
    assert simulate(backward_first, 1).stuck == (0, ("B", 0), (0, "F", 0))
    sim = simulate(reference(4, 8), 4)
    assert sim.in_flight == [4, 3, 2, 1] and sim.makespan == (8 + 4 - 1) * 3  # the bubble (p-1)/(m+p-1), by hand
