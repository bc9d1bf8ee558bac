"""Real-world conventions grade without edits (config objects, names by role, forward(query, key, value, mask),
aliased projections), and a file that fits no convention gets one message with both signatures."""

from __future__ import annotations

import pytest
import torch

from drill.grade.battery import run_battery
from drill.grade.checks.conventions import plan
from drill.grade.precheck import entry_hint
from drill.grade.user import wire
from whiteboard_impls import IMPLS, mutant

P = "POSITIONAL_OR_KEYWORD"


@pytest.mark.parametrize(
    ("init", "expected"),
    [
        ([("d_model", P, False), ("n_heads", P, False)], ((12, 3), {}, "contract")),
        ([("h", P, False), ("d_model", P, False), ("dropout", P, True)], ((), {"h": 3, "d_model": 12}, "by name")),  # default kept
        ([("h", P, False), ("d_model", P, False), ("dropout", P, False)], ((), {"h": 3, "d_model": 12, "dropout": 0.0}, "by name")),
        ([("embed_dim", P, False), ("num_heads", P, False)], ((12, 3), {}, "contract")),
        ([("num_heads", P, False), ("embed_dim", P, False)], ((), {"num_heads": 3, "embed_dim": 12}, "by name")),
        ([("a", P, False), ("b", P, False)], ((12, 3), {}, "contract")),  # names drill cannot read: the contract's order
    ],
)
def test_constructor_plan(init, expected):
    got = plan(init, None, {"d_model": 12, "n_heads": 3})
    assert (got.args, got.kwargs, got.style) == expected


def test_config_plan_carries_both_conventions():
    got = plan([("config", P, False)], [("x", P, False)], {"d_model": 12, "n_heads": 3, "max_seq_len": 16})
    assert got.style == "config object" and not got.qkv_forward
    fields = dict(got.args[0].fields)
    assert fields["n_embd"] == fields["hidden_size"] == 12 and fields["n_head"] == fields["num_attention_heads"] == 3
    assert fields["block_size"] == 16 and fields["dropout"] == 0.0 and fields["num_key_value_heads"] == 3


def test_qkv_forward_is_recognised():
    fwd = [("query", P, False), ("key", P, False), ("value", P, False), ("mask", P, True)]
    assert plan(None, fwd, {"d_model": 12, "n_heads": 3}).qkv_forward
    assert not plan(None, [("x", P, False), ("mask", P, True)], {"d_model": 12, "n_heads": 3}).qkv_forward


def test_config_travels_as_a_namespace_and_is_refused_in_replies():
    header, buffers = wire.encode((wire.Config((("n_embd", 12), ("dropout", 0.0))),))
    (config,) = wire.build(header["value"], [], recipes=True)
    assert config.n_embd == 12 and config.dropout == 0.0
    with pytest.raises(wire.WireError, match="recipe outside a request"):
        wire.build(header["value"], [])
    with pytest.raises(wire.WireError):
        wire.build({"$config": [["__class__", 1], ["not an identifier", 2]]}, [], recipes=True)
    with pytest.raises(TypeError):
        wire.encode(wire.Config((("tensor", torch.zeros(1)),)))


@pytest.mark.parametrize("name", ["causal_nanogpt_config", "mha_hf_config", "mha_annotated_linears", "mha_aliased_projections"])
def test_real_world_style_passes_and_says_how_it_was_built(name):
    report = run_battery(IMPLS / "correct" / f"{name}.py")
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status in ("fail", "error")]
    contract = next(c for c in report.checks if c.id == "load.contract")
    wanted = {"causal_nanogpt_config": "config object", "mha_hf_config": "config object",
              "mha_annotated_linears": "forward(x, x, x, mask)", "mha_aliased_projections": "as the contract says"}  # fmt: skip
    assert wanted[name] in contract.message


def test_mismatch_is_said_once_with_both_signatures():
    report = run_battery(mutant("contract-mismatch__1.py"))
    failing = [c for c in report.checks if c.status in ("fail", "error")]
    assert [c.id for c in failing] == ["load.contract"]
    message = failing[0].message
    assert "expected MultiHeadAttention(d_model, n_heads) with forward(x, mask=None)" in message
    assert "your file defines MultiHeadAttention(d_model, n_heads, n_layers)" in message
    assert "n_layers" in message and [d.code for d in report.diagnosis] == ["contract-mismatch"]


def test_near_miss_entry_name_is_suggested(tmp_path):
    path = tmp_path / "annotated.py"
    path.write_text((IMPLS / "correct" / "mha_annotated_linears.py").read_text().replace("class MultiHeadAttention", "class MultiHeadedAttention"))
    report = run_battery(path, task="mha")
    assert "did you mean the mha task's MultiHeadAttention?" in report.checks[0].message
    report = run_battery(path)
    assert "it defines MultiHeadedAttention: did you mean the mha task's MultiHeadAttention?" in report.checks[0].message


def test_entry_hint_needs_a_whole_name_match():
    wanted = [("mha", "MultiHeadAttention"), ("sdpa", "scaled_dot_product_attention")]
    assert entry_hint({"attention": "function", "clones": "function"}, wanted) == "; it defines attention, clones"
    assert "the sdpa task's scaled_dot_product_attention" in entry_hint({"scaled_dot_product_attn": "function"}, wanted)


def test_a_fault_in_drills_reference_code_is_drills_not_the_users(monkeypatch):
    from drill.grade.layouts import Layout
    from drill.grade.remote import InternalError

    monkeypatch.setattr(Layout, "params", lambda self, module: {})  # the old KeyError: 'W_q.weight', inside layouts.py
    with pytest.raises(InternalError, match="KeyError in check"):
        run_battery(IMPLS / "correct" / "mha_separate_wq.py")


def test_a_config_field_drill_does_not_provide_is_one_contract_failure(tmp_path):
    path = tmp_path / "needs_n_layer.py"
    source = (IMPLS / "correct" / "causal_nanogpt_config.py").read_text()
    path.write_text(source.replace("self.n_head = config.n_head", "self.n_head = config.n_head\n        self.n_layer = config.n_layer"))
    report = run_battery(path)
    assert [c.id for c in report.checks if c.status in ("fail", "error")] == ["load.contract"]
    assert "no attribute 'n_layer'" in report.checks[0].message and "the config carries d_model, n_embd" in report.checks[0].message
