"""The ``llama_block`` task: ``LlamaBlock(d_model, n_heads, n_kv_heads, ffn_dim, rope_theta=10000.0, eps=1e-6)``
and ``llama_param_count(vocab, d_model, n_layers, n_heads, n_kv_heads, ffn_dim, tied) -> int``.

The block is Hugging Face's ``LlamaDecoderLayer``: pre-norm RMSNorm, RoPE in the rotate-half layout on q and
k at positions 0..T-1, causal grouped-query attention (kv head j serves query heads j·g .. j·g + g - 1, as
``repeat_kv`` does), SwiGLU, no biases. Graded against a float64 reference built from the module's own
weights, found by Hugging Face's names (on the block, or one level down: an adapter around
``LlamaDecoderLayer`` passes) or Meta's (``attention.wq``, ``feed_forward.w1``, ``attention_norm``).
The parameter count is exact: embeddings, every layer, the final norm, the LM head unless tied.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from drill.grade.checks.common import deterministic_check, dtype_id, gradient_verdict, jacobian_check, no_mutation_check
from drill.grade.checks.compare import against_truth, expect_like, unpack
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.layouts import is_linear, submodule
from drill.text.messages import Ev

BASE = (2, 6, 4, 2, 4)  # B, T, heads, kv heads, head_dim: d_model 16, ffn_dim 24
FFN_EXTRA = 8
NAMES = (
    dict(ln1="input_layernorm", q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj",
         ln2="post_attention_layernorm", gate="mlp.gate_proj", up="mlp.up_proj", down="mlp.down_proj"),
    dict(ln1="attention_norm", q="attention.wq", k="attention.wk", v="attention.wv", o="attention.wo",
         ln2="ffn_norm", gate="feed_forward.w1", up="feed_forward.w3", down="feed_forward.w2"),
)  # fmt: skip
ACCEPTED = Ev("Hugging Face's LlamaDecoderLayer names ({hf}) or Meta's ({meta}): RMSNorm weights of size d_model, bias-free "
              "Linear layers; on the block or on one submodule of it",
              hf=", ".join(NAMES[0].values()), meta=", ".join(NAMES[1].values()))  # fmt: skip
NO_LAYOUT = Ev("skipped: no reference without a recognised layout")
PARAM_ENTRY = "llama_param_count"
LLAMA2_7B = dict(vocab=32000, d_model=4096, n_layers=32, n_heads=32, n_kv_heads=32, ffn_dim=11008, tied=False)
LLAMA3_8B = dict(vocab=128256, d_model=4096, n_layers=32, n_heads=32, n_kv_heads=8, ffn_dim=14336, tied=False)
LLAMA32_1B = dict(vocab=128256, d_model=2048, n_layers=16, n_heads=32, n_kv_heads=8, ffn_dim=8192, tied=True)


@dataclass(frozen=True)
class LlamaVariant:
    norm: str = "pre"  # pre (correct) | post: x = norm(x + f(x))
    rope_on_v: bool = False
    rope: str = "half"  # half: rotate-half (correct) | pairs: GPT-J interleaved pairs | none
    repeat: str = "interleave"  # interleave: query head h uses kv head h // g (correct) | tile: h % n_kv
    silu_on: str = "gate"  # gate (correct) | up
    residual: tuple[bool, bool] = (True, True)
    causal: bool = True
    scale: str = "sqrt"  # sqrt (correct) | none
    rms: str = "rms"  # rms (correct) | layernorm: the mean subtracted


CORRECT_BLOCK = LlamaVariant()


@dataclass(frozen=True)
class Built:
    module: object
    n_heads: int
    n_kv: int
    names: dict | None  # role -> dotted name from the block

    def params(self, dtype) -> dict[str, torch.Tensor]:
        return {role: submodule(self.module, name).weight.detach().to(dtype) for role, name in self.names.items()}

    def eps(self, role: str) -> float:
        sub = submodule(self.module, self.names[role])
        for attr in ("eps", "variance_epsilon"):
            if isinstance(getattr(sub, attr, None), float):
                return getattr(sub, attr)
        return 1e-6

    @property
    def theta(self) -> float:
        return 10000.0


def find_names(root, d: int, h: int, kv: int, hd: int, ffn: int) -> dict | None:
    def fits(role, name):
        sub = submodule(root, name)
        if role in ("ln1", "ln2"):
            w = getattr(sub, "weight", None)
            return isinstance(w, torch.Tensor) and w.shape == (d,)
        sizes = {"q": (d, h * hd), "k": (d, kv * hd), "v": (d, kv * hd), "o": (h * hd, d), "gate": (d, ffn), "up": (d, ffn), "down": (ffn, d)}
        return is_linear(sub, *sizes[role])

    for base in ("", *(f"{n}." for n, _ in root.named_children())):
        for names in NAMES:
            full = {role: base + name for role, name in names.items()}
            if all(fits(role, name) for role, name in full.items()):
                return full
    return None


def build(ctx: Context, config, dtype=torch.float32) -> Built:
    h, kv, hd = config
    d = h * hd
    module = ctx.instantiate((d, h, kv, d + FFN_EXTRA), dtype)
    return Built(module, h, kv, find_names(module, d, h, kv, hd, d + FFN_EXTRA))


def rope_tables(t: int, hd: int, theta: float, dtype):
    inv = 1.0 / theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    freqs = torch.arange(t, dtype=torch.float64)[:, None] * inv[None, :]  # [T, hd/2]
    return freqs.cos().to(dtype), freqs.sin().to(dtype)


def rope(z, cos, sin, layout: str):
    """z [B, heads, T, hd] rotated by position: rotate-half (HF Llama) or interleaved pairs (GPT-J, Meta's complex form)."""
    if layout == "none":
        return z
    if layout == "half":
        c, s = torch.cat([cos, cos], -1), torch.cat([sin, sin], -1)
        a, b = z.chunk(2, dim=-1)
        return z * c + torch.cat([-b, a], -1) * s
    a, b = z[..., 0::2], z[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], -1).flatten(-2)


def rms_norm(z, w, eps, how: str = "rms"):
    if how == "layernorm":
        z = z - z.mean(-1, keepdim=True)
    return z * torch.rsqrt(z.pow(2).mean(-1, keepdim=True) + eps) * w


def reference(built: Built, x, dtype, variant: LlamaVariant = CORRECT_BLOCK, steps: list | None = None):
    """The block from the module's weights in ``dtype``, with the mistake ``variant`` models; ``steps`` collects
    the named intermediates (for the trace)."""
    p = built.params(dtype)
    x = x.to(dtype)
    b, t, d = x.shape
    h, kv = built.n_heads, built.n_kv
    hd, g = p["q"].shape[0] // h, h // kv
    cos, sin = rope_tables(t, hd, built.theta, dtype)
    note = steps.append if steps is not None else (lambda item: None)

    def attn(z):
        q = F.linear(z, p["q"]).view(b, t, h, hd).transpose(1, 2)
        k = F.linear(z, p["k"]).view(b, t, kv, hd).transpose(1, 2)
        v = F.linear(z, p["v"]).view(b, t, kv, hd).transpose(1, 2)
        note(("q", q)), note(("k", k)), note(("v", v))
        q, k = rope(q, cos, sin, variant.rope), rope(k, cos, sin, variant.rope)
        if variant.rope_on_v:
            v = rope(v, cos, sin, variant.rope)
        note((Ev("q after RoPE"), q)), note((Ev("k after RoPE"), k))
        if variant.repeat == "interleave":
            k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
        else:
            k, v = k.repeat(1, g, 1, 1), v.repeat(1, g, 1, 1)
        note((Ev("k repeated"), k)), note((Ev("v repeated"), v))
        scores = q @ k.transpose(-2, -1)
        scaled = scores / math.sqrt(hd) if variant.scale == "sqrt" else scores
        masked = scaled.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf")) if variant.causal else scaled
        weights = torch.softmax(masked, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(b, t, h * hd)
        for item in (("scores", scores), ("scaled", scaled), ("masked", masked), ("weights", weights), (Ev("merged heads"), out)):
            note(item)
        return F.linear(out, p["o"])

    def mlp(z):
        gate, up = F.linear(z, p["gate"]), F.linear(z, p["up"])
        hidden = F.silu(gate) * up if variant.silu_on == "gate" else gate * F.silu(up)
        note(("gate", gate)), note(("up", up)), note(("silu(gate)·up", hidden))
        return F.linear(hidden, p["down"])

    sublayers = ((attn, "ln1", variant.residual[0], Ev("attention output"), Ev("residual stream after attention")),
                 (mlp, "ln2", variant.residual[1], Ev("mlp output"), Ev("residual stream after mlp")))
    for sublayer, role, keep, output, stream in sublayers:
        skip = x if keep else 0
        if variant.norm == "post":
            x = rms_norm(skip + sublayer(x), p[role], built.eps(role), variant.rms)
        else:
            normed = rms_norm(x, p[role], built.eps(role), variant.rms)
            note((f"{role}(x)", normed))
            out = sublayer(normed)
            note((output, out))
            x = skip + out
            note((stream, x))
    return x


def forward(ctx: Context, module, x):
    return unpack(ctx.call(module, x))[0]


def inputs(ctx: Context, b: int, t: int, d: int, offset: int, dtype=torch.float64):
    return ctx.randn(b, t, d, gen=ctx.generator(offset), dtype=dtype)


def layout_check(ctx: Context):
    built = build(ctx, BASE[2:])
    if built.names is None:
        return outcome("fail", Ev("unrecognised LlamaBlock layout; accepted: {accepted}", accepted=ACCEPTED))
    biased = [n for role, n in built.names.items() if role not in ("ln1", "ln2") and submodule(built.module, n).bias is not None]
    if biased:
        if len(biased) == 1:
            return outcome("fail", Ev("{names} has a bias: LLaMA's projections are bias-free", names=biased[0]))
        return outcome("fail", Ev("{names} have biases: LLaMA's projections are bias-free", names=", ".join(biased)))
    return outcome("pass", Ev("{code}", code=", ".join(built.names.values())))


def shape_check(ctx: Context, config, non_contiguous: bool = False):
    b, t, h, kv, hd = config
    built = build(ctx, (h, kv, hd))
    x = inputs(ctx, b, t, h * hd, 10, torch.float32)
    if non_contiguous:
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
    out = forward(ctx, built.module, x)
    problem = expect_like(out, x.shape, x)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape}", shape=list(out.shape)))


def numerical_check(ctx: Context, config, offset: int, dtype=torch.float32, scale: float = 1.0):
    b, t, h, kv, hd = config
    built = build(ctx, (h, kv, hd), dtype)
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    x = scale * inputs(ctx, b, t, h * hd, offset)
    # float64 inputs are judged at float32's tolerance: Hugging Face computes RMSNorm and the RoPE table in float32 whatever the dtype
    truth, same = reference(built, x.to(dtype), torch.float64), reference(built, x, torch.float32 if dtype == torch.float64 else dtype)
    out = forward(ctx, built.module, x.to(dtype))
    label = Ev("output ({dtype}, B={b} T={t} heads={h} kv_heads={kv} head_dim={hd})", dtype=str(dtype)[6:], b=b, t=t, h=h, kv=kv, hd=hd)
    return against_truth([(label, out, truth, same)])


def causal_check(ctx: Context):
    built = build(ctx, (3, 1, 4), torch.float64)
    x = inputs(ctx, 2, 5, 12, 50).requires_grad_()
    return jacobian_check(ctx, lambda z: forward(ctx, built.module, z), x)


def gradient_check(ctx: Context):
    built = build(ctx, BASE[2:])
    if built.names is None:
        return outcome("skip", NO_LAYOUT)
    x = inputs(ctx, *BASE[:2], BASE[2] * BASE[4], 30)
    return gradient_verdict(ctx, [x], torch.float32, lambda leaf: forward(ctx, built.module, leaf),
                            lambda leaf, precision: reference(built, leaf, precision), names=("x",))  # fmt: skip


def param_count_of(ctx: Context, entry, config: dict) -> int:
    value = ctx.call(entry, *config.values())
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_floating_point():
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise WrongShape(Ev("{entry} returned {type}, not an int", entry=PARAM_ENTRY, type=type(value).__name__))
    return value


def param_count(vocab, d_model, n_layers, n_heads, n_kv_heads, ffn_dim, tied, variant: str = "") -> int:
    hd = d_model // n_heads
    kv = d_model if variant == "kv-as-q" else n_kv_heads * hd
    attn = 2 * d_model * d_model + 2 * d_model * kv
    norms = 0 if variant == "no-norms" else 2 * d_model
    layer = attn + (2 if variant == "two-matrix-ffn" else 3) * d_model * ffn_dim + norms
    head = vocab * d_model if (tied if variant == "tied-inverted" else not tied) else 0
    final = 0 if variant in ("no-norms", "no-final-norm") else d_model
    return vocab * d_model + n_layers * layer + final + head


PARAM_MISTAKES = {
    "kv-as-q": "llama-params-kv-heads-ignored",
    "tied-inverted": "llama-params-lm-head",
    "no-norms": "llama-params-norms-missing",
    "no-final-norm": "llama-params-norms-missing",
    "two-matrix-ffn": "llama-params-two-matrix-ffn",
}


def param_check(ctx: Context, name: str, config: dict):
    entry = ctx.user.entry(PARAM_ENTRY)
    if entry is None:
        return outcome("fail", Ev("the file defines no {entry}(vocab, d_model, n_layers, n_heads, n_kv_heads, ffn_dim, tied)", entry=PARAM_ENTRY))
    got, expected = param_count_of(ctx, entry, config), param_count(**config)
    if got == expected:
        return outcome("pass", Ev("{name}: {expected:,} parameters, exact", name=name, expected=expected))
    codes = [code for variant, code in PARAM_MISTAKES.items() if got == param_count(**config, variant=variant)]
    return outcome("fail", Ev("{name} ({config}): expected {expected:,}, got {got:,} ({diff:+,})", name=name,
                              config=", ".join(f"{k}={v}" for k, v in config.items()), expected=expected, got=got, diff=got - expected),
                   *codes[:1])  # fmt: skip


def drawn_config(ctx: Context):
    rng = random.Random(ctx.seed * 1000 + 700)
    h = rng.choice([3, 5, 6])
    kv = rng.choice([k for k in (1, 3, h) if h % k == 0 and k != h] or [1])
    return (rng.randint(1, 3), rng.randint(5, 11), h, kv, rng.choice([2, 6]))


@dataclass(frozen=True)
class Probe:
    built: Built
    x: torch.Tensor

    def user(self, ctx: Context):
        return forward(ctx, self.built.module, self.x.clone())

    def expected(self, variant):
        variant = variant if isinstance(variant, LlamaVariant) else CORRECT_BLOCK
        return reference(self.built, self.x, torch.float64, variant)


HYPOTHESES = (
    ("llama-post-norm", LlamaVariant(norm="post")),
    ("llama-rope-on-v", LlamaVariant(rope_on_v=True)),
    ("llama-rope-interleaved", LlamaVariant(rope="pairs")),
    ("llama-rope-missing", LlamaVariant(rope="none")),
    ("llama-gqa-repeat-order", LlamaVariant(repeat="tile")),
    ("swiglu-silu-on-up", LlamaVariant(silu_on="up")),
    ("llama-missing-residual", LlamaVariant(residual=(False, True))),
    ("llama-missing-residual", LlamaVariant(residual=(True, False))),
    ("llama-missing-residual", LlamaVariant(residual=(False, False))),
    ("causal-mask-missing", LlamaVariant(causal=False)),
    ("scale-missing", LlamaVariant(scale="none")),
    ("llama-layernorm-not-rms", LlamaVariant(rms="layernorm")),
)


class LlamaBlockTask:
    name = "llama_block"

    def checks(self, ctx: Context) -> list[CheckDef]:
        defs = [
            CheckDef("load.layout", "rules", partial(layout_check, ctx)),
            CheckDef("shape.base", "shape", partial(shape_check, ctx, BASE)),
            CheckDef("shape.t1", "shape", partial(shape_check, ctx, (3, 1, 2, 1, 6))),
            CheckDef("shape.non-contiguous", "shape", partial(shape_check, ctx, BASE, True)),
        ]
        for dtype in ctx.dtypes:
            prefix = dtype_id("numerical", dtype)
            defs += [CheckDef(f"{prefix}.seed{i}", "numerical", partial(numerical_check, ctx, BASE, 100 + i, dtype)) for i in range(2)]
        x = inputs(ctx, *BASE[:2], BASE[2] * BASE[4], 600, torch.float32)

        def no_mutation():
            module = build(ctx, BASE[2:]).module
            return no_mutation_check(ctx, lambda: forward(ctx, module, x), {"x": x})

        def deterministic():
            module = build(ctx, BASE[2:]).module
            return deterministic_check(lambda: forward(ctx, module, x.clone()))

        return defs + [
            CheckDef("numerical.mha", "numerical", partial(numerical_check, ctx, (2, 5, 3, 3, 4), 110)),
            CheckDef("numerical.mqa-float64", "numerical", partial(numerical_check, ctx, (2, 7, 3, 1, 6), 120, torch.float64)),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, drawn_config(ctx), 130)),
            CheckDef("numerical.llama2-7b-params", "numerical", partial(param_check, ctx, Ev("{model}", model="Llama-2-7B"), LLAMA2_7B)),
            CheckDef("numerical.llama3-8b-params", "numerical", partial(param_check, ctx, Ev("{model} (GQA)", model="Llama-3-8B"), LLAMA3_8B)),
            CheckDef("numerical.llama32-1b-params", "numerical", partial(param_check, ctx, Ev("{model} (tied)", model="Llama-3.2-1B"), LLAMA32_1B)),
            CheckDef("mask-leak.jacobian", "mask-leak", partial(causal_check, ctx)),
            CheckDef("gradient.x", "gradient", partial(gradient_check, ctx)),
            CheckDef("stability.large-inputs", "stability", partial(numerical_check, ctx, (2, 5, 2, 1, 8), 140, torch.float32, 30.0)),
            CheckDef("robustness.no-mutation", "robustness", no_mutation),
            CheckDef("robustness.deterministic", "robustness", deterministic),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        try:
            built = build(ctx, (4, 2, 6), torch.float64)
        except Exception:  # noqa: BLE001 - a module that cannot be built gives no evidence
            return []
        if built.names is None:
            return []
        return [Probe(built, 1.5 * inputs(ctx, 2, 7, 24, 1100))]

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = LlamaBlockTask()
