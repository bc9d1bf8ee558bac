"""Real public implementations, transcribed as their projects wrote them, are graded as the task they fit.

Each file in impls/correct/ named below copies a function or module from a public repository (Hugging Face,
Meta's llama, nanoGPT, llama2.c, minbpe, llm.c, Mistral, vLLM, TRL, gpt-fast, the ALiBi paper's code, the
Annotated Transformer) and adapts only the call to the contract, saying how in its docstring. That every file
in correct/ passes is test_grade_battery.py's test; here: each file says where it comes from (a URL pinned to a
commit) and what it adapted, and drill picks the intended task from the names it defines, although these files
also define helpers named like other tasks' entry points (a block's CausalSelfAttention, an MoE's FeedForward).
"""

from __future__ import annotations

import ast
import re

import pytest

from drill.grade.tasks import detect

from whiteboard_impls import IMPLS

# file stem -> (source repository, task)
PUBLIC = {
    "alibi_ofirpress": ("ofirpress/attention_with_linear_biases", "alibi"),
    "block_nanogpt": ("karpathy/nanoGPT", "block"),
    "bpe_minbpe": ("karpathy/minbpe", "bpe"),
    "causal_nanogpt_verbatim": ("karpathy/nanoGPT", "causal"),
    "dpo_loss_trl": ("huggingface/trl", "dpo_loss"),
    "gqa_hf_mixtral": ("huggingface/transformers", "gqa"),
    "grpo_trl": ("huggingface/trl", "grpo"),
    "kv_cache_meta_llama": ("meta-llama/llama", "kv_cache"),
    "layernorm_llmc": ("karpathy/llm.c", "layernorm"),
    "moe_hf_mixtral": ("huggingface/transformers", "moe"),
    "moe_mistral_inference": ("mistralai/mistral-inference", "moe"),
    "quantize_gpt_fast": ("pytorch-labs/gpt-fast", "quantize"),
    "rmsnorm_hf_llama": ("huggingface/transformers", "rmsnorm"),
    "rmsnorm_mistral_inference": ("mistralai/mistral-inference", "rmsnorm"),
    "sampling_hf_warpers": ("huggingface/transformers", "sampling"),
    "sampling_vllm": ("vllm-project/vllm", "sampling"),
    "sdpa_hf_eager": ("huggingface/transformers", "sdpa"),
    "sinusoidal_annotated_transformer": ("harvardnlp/annotated-transformer", "sinusoidal"),
    "swiglu_llama2c": ("karpathy/llama2.c", "swiglu"),
    "swiglu_mistral_inference": ("mistralai/mistral-inference", "swiglu"),
}


def _top_level_names(source: str) -> set[str]:
    return {node.name for node in ast.parse(source).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


@pytest.mark.parametrize("stem", sorted(PUBLIC))
def test_public_file_cites_a_pinned_source_and_its_adaptations(stem):
    repo, _ = PUBLIC[stem]
    doc = ast.get_docstring(ast.parse((IMPLS / "correct" / f"{stem}.py").read_text()))
    assert re.search(rf"https://github\.com/{re.escape(repo)}/blob/[0-9a-f]{{40}}/\S+", doc), doc
    assert "Adapted:" in doc


@pytest.mark.parametrize("stem", sorted(PUBLIC))
def test_public_file_is_detected_as_its_task(stem):
    names = _top_level_names((IMPLS / "correct" / f"{stem}.py").read_text())
    spec = detect(names)
    assert spec is not None and spec.name == PUBLIC[stem][1], (names, spec)
