"""What ``drill grade --trace`` compares the user's linear_attention against (causal, eps = 0.25 so that a
hard-coded eps shows): elu, φ = elu + 1 of q and k, the outer products φ(k_j) v_jᵀ, their prefix sums S_i and
z_i, the numerator φ(q_i)·S_i, the denominator φ(q_i)·z_i, plus eps, the output. A T × T product has no
step here: the quadratic route is named where it starts."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from drill.grade.trace_match import Case
from drill.text.messages import Ev

B, H, T, D, DV, EPS = 2, 3, 5, 4, 6, 0.25  # no two sizes equal


def case(ctx) -> Case:
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(B, H, T, d, generator=gen, dtype=torch.float64) for d in (D, D, DV))
    fq, fk = F.elu(q) + 1, F.elu(k) + 1
    outer = fk[..., :, None] * v[..., None, :]  # [B, H, T, D, Dv]
    state, z = outer.cumsum(-3), fk.cumsum(-2)
    num = torch.einsum("...td,...tde->...te", fq, state)
    den = (fq * z).sum(-1, keepdim=True)
    steps = [("q", q), ("k", k), ("v", v), ("elu(q)", F.elu(q)), ("φ(q) = elu(q) + 1", fq), ("elu(k)", F.elu(k)),
             ("φ(k) = elu(k) + 1", fk), ("φ(k_j) v_jᵀ", outer), ("S_i = Σ_{j≤i} φ(k_j) v_jᵀ", state),
             ("z_i = Σ_{j≤i} φ(k_j)", z), (Ev("numerator φ(q_i)·S_i"), num), ("φ(q_i) * z_i", fq * z),
             (Ev("denominator φ(q_i)·z_i"), den), (Ev("denominator + eps"), den + EPS), ("output", num / (den + EPS))]  # fmt: skip
    return Case(ctx.entry, (q, k, v), steps, kwargs={"causal": True, "eps": EPS})
