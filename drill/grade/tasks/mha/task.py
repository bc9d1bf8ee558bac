"""The ``mha`` task: ``MultiHeadAttention(d_model, n_heads)``, graded against a reference built from its own weights
(the module battery, with heads and head_dim also drawn from the seed)."""

from drill.grade.checks.drawn_heads import DrawnHeadsTask

TASK = DrawnHeadsTask("mha", causal=False)
