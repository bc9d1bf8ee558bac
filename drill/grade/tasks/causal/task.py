"""The ``causal`` task: ``CausalSelfAttention(d_model, n_heads, max_seq_len)``, graded against a reference
built from its own weights, with the causal mask its own."""

from drill.grade.checks.module import ModuleTask

TASK = ModuleTask("causal", causal=True)
