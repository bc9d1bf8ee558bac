"""The ``mha`` task: ``MultiHeadAttention(d_model, n_heads)``, graded against a reference built from its own weights."""

from drill.grade.checks.module import ModuleTask

TASK = ModuleTask("mha", causal=False)
