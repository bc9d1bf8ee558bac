"""The ``causal`` task: ``CausalSelfAttention(d_model, n_heads, max_seq_len)``, graded against a reference
built from its own weights, with the causal mask its own (heads and head_dim also drawn from the seed)."""

from drill.grade.checks.drawn_heads import DrawnHeadsTask

TASK = DrawnHeadsTask("causal", causal=True)
