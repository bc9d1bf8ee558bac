"""The ``encoder_layer`` task: a BERT-style post-LN ``EncoderLayer(d_model, n_heads, ffn_dim, eps=1e-12)``.

``forward(x, key_padding_mask)``: x [B, T, d_model], the mask bool [B, T], True = a real token that may be
attended. x = LN1(x + attn(x)); x = LN2(x + W2 gelu(W1 x)), GELU in its exact (erf) form, as BERT
(Devlin et al. 2019) and Hugging Face's ``BertLayer``. Graded against a float64 reference built from the
module's own weights: its submodules are found by name (see ACCEPTED), Hugging Face's BERT names too, on
the layer itself or one level down (an adapter around ``BertLayer``). Padded positions' outputs count:
their queries attend to the real keys, as in BERT, so masking the queries instead of the keys shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from itertools import permutations

import torch
import torch.nn.functional as F
from torch import nn

from drill.grade.checks.common import deterministic_check, dtype_id, gradient_verdict, no_mutation_check
from drill.grade.checks.compare import LEAK_THRESHOLD, against_truth, expect_like, expect_shape, moved, unpack
from drill.grade.checks.module import PROJECTION_HYPOTHESES
from drill.grade.context import CheckDef, Context, outcome
from drill.grade.layouts import ACCEPTED as ATTN_ACCEPTED
from drill.grade.layouts import Layout, find_layout, is_linear, submodule
from drill.grade.reference import CORRECT, Variant, attention, merge_heads, split_heads
from drill.text.messages import Ev

BASE = (2, 6, 3, 4)  # B, T, heads, head_dim: d_model 12, ffn_dim 20
FFN_EXTRA = 8  # the grader builds EncoderLayer(d_model, n_heads, d_model + 8): ffn_dim never equals d_model
ATTN_NAMES = ("self_attn", "attn", "attention", "mha", "self_attention")
LN_NAMES = (("norm1", "ln1", "ln_1", "attn_norm", "attention_norm", "self_attn_layer_norm", "layernorm1"),
            ("norm2", "ln2", "ln_2", "ffn_norm", "final_layer_norm", "output_norm", "layernorm2"))  # fmt: skip
FFN_NAMES = ("ffn", "mlp", "ff", "feed_forward")
FFN_PAIRS = (("fc1", "fc2"), ("linear1", "linear2"), ("w1", "w2"), ("up", "down"), ("dense1", "dense2"))
BERT = dict(qkv=("attention.self.query", "attention.self.key", "attention.self.value"), out="attention.output.dense",
            ln1="attention.output.LayerNorm", fc1="intermediate.dense", fc2="output.dense", ln2="output.LayerNorm")  # fmt: skip
ACCEPTED = Ev(
    "Hugging Face BertLayer names ({bert}); or attention named {attn} (or on the layer itself) with {accepted}, "
    "LayerNorms named {ln1} and {ln2}, and an FFN as Linear pairs {pairs} or nn.Sequential(Linear, GELU, Linear) named {ffn}; "
    "all on the layer or on one submodule of it",
    bert=", ".join((*BERT["qkv"], *(BERT[k] for k in ("out", "ln1", "fc1", "fc2", "ln2")))), attn="/".join(ATTN_NAMES),
    accepted=ATTN_ACCEPTED, ln1="/".join(LN_NAMES[0]), ln2="/".join(LN_NAMES[1]), pairs=", ".join("/".join(p) for p in FFN_PAIRS),
    ffn="/".join(FFN_NAMES),
)  # fmt: skip
NO_LAYOUT = Ev("skipped: no reference without a recognised layout")


@dataclass(frozen=True)
class EncoderVariant:
    """A layer-level mistake on top of an attention mistake (``attn``)."""

    attn: Variant = CORRECT
    norm: str = "post"  # post (correct): LN(x + f(x)) | pre: x + f(LN(x)) | inside: x + LN(f(x))
    causal: bool = False  # a causal mask besides the padding
    activation: str = "gelu"  # gelu (exact, correct) | gelu-tanh | relu
    residual: tuple[bool, bool] = (True, True)  # around attention, around the FFN


CORRECT_LAYER = EncoderVariant()
TANH = EncoderVariant(activation="gelu-tanh")
ACTIVATIONS = {"gelu": F.gelu, "gelu-tanh": partial(F.gelu, approximate="tanh"), "relu": F.relu}


@dataclass(frozen=True)
class EncoderLayout:
    attn: Layout  # dotted names from the layer
    ln1: str
    ln2: str
    fc1: str
    fc2: str

    def describe(self) -> Ev:
        return Ev("attention {attn}, {ln1}, {fc1} -> GELU -> {fc2}, {ln2}", attn=self.attn.describe(), ln1=self.ln1, fc1=self.fc1,
                  fc2=self.fc2, ln2=self.ln2)  # fmt: skip

    def names(self) -> tuple[str, ...]:
        return (*self.attn.qkv, self.attn.out, self.fc1, self.fc2, self.ln1, self.ln2)


def _prefixed(layout: Layout, prefix: str) -> Layout:
    return Layout(tuple(prefix + n for n in layout.qkv), prefix + layout.out)


def _layout_at(root: nn.Module, base: str, d: int, ffn: int) -> EncoderLayout | None:
    def norm(name):
        sub = submodule(root, base + name)
        w, b = getattr(sub, "weight", None), getattr(sub, "bias", None)
        return isinstance(w, torch.Tensor) and isinstance(b, torch.Tensor) and w.shape == b.shape == (d,)

    def linear(name, i, o):
        return is_linear(submodule(root, base + name), i, o)

    if all(linear(n, d, d) for n in (*BERT["qkv"], BERT["out"])) and linear(BERT["fc1"], d, ffn) and linear(BERT["fc2"], ffn, d):
        if norm(BERT["ln1"]) and norm(BERT["ln2"]):
            return EncoderLayout(_prefixed(Layout(BERT["qkv"], BERT["out"]), base),
                                 *(base + BERT[k] for k in ("ln1", "ln2", "fc1", "fc2")))  # fmt: skip
    ln1 = next((n for n in LN_NAMES[0] if norm(n)), None)
    ln2 = next((n for n in LN_NAMES[1] if norm(n)), None)
    fc = None
    for box in ("", *(f"{n}." for n in FFN_NAMES)):
        sub = submodule(root, (base + box).rstrip(".")) if base + box else root
        if isinstance(sub, nn.Sequential):
            linears = [n for n, c in sub.named_children() if isinstance(c, nn.Linear)]
            if len(linears) == 2 and linear(box + linears[0], d, ffn) and linear(box + linears[1], ffn, d):
                fc = (box + linears[0], box + linears[1])
        for a, b in FFN_PAIRS:
            if fc is None and linear(box + a, d, ffn) and linear(box + b, ffn, d):
                fc = (box + a, box + b)
    if not (ln1 and ln2 and fc):
        return None
    for name in (*ATTN_NAMES, ""):
        sub = submodule(root, (base + name).rstrip(".")) if base + name else root
        found = find_layout(sub, d) if isinstance(sub, nn.Module) else None
        if found:
            return EncoderLayout(_prefixed(found, base + (f"{name}." if name else "")), base + ln1, base + ln2, base + fc[0], base + fc[1])
    return None


def find_encoder_layout(root: nn.Module, d: int, ffn: int) -> EncoderLayout | None:
    """The layout on the layer itself, else on one of its direct submodules (an adapter's wrapped layer)."""
    for base in ("", *(f"{n}." for n, _ in root.named_children())):
        found = _layout_at(root, base, d, ffn)
        if found:
            return found
    return None


@dataclass(frozen=True)
class Built:
    module: object
    n_heads: int
    layout: EncoderLayout | None

    def params(self, dtype) -> dict[str, torch.Tensor]:
        found = {}
        for name in self.layout.names():
            sub = submodule(self.module, name)
            for p in ("weight", "bias"):
                if isinstance(getattr(sub, p, None), torch.Tensor):
                    found[f"{name}.{p}"] = getattr(sub, p).detach().to(dtype)
        return found

    def eps(self, name: str) -> float:
        return getattr(submodule(self.module, name), "eps", 1e-12)


def build(ctx: Context, d_model: int, n_heads: int, dtype=torch.float32) -> Built:
    module = ctx.instantiate((d_model, n_heads, d_model + FFN_EXTRA), dtype)
    return Built(module, n_heads, find_encoder_layout(module, d_model, d_model + FFN_EXTRA))


def reference(built: Built, x, mask, dtype, variant: EncoderVariant = CORRECT_LAYER, params=None):
    """The post-LN layer from the module's weights, with the mistake ``variant`` models."""
    p = params if params is not None else built.params(dtype)
    lay, h = built.layout, built.n_heads
    x = x.to(dtype)
    b, t, d = x.shape

    def linear(z, name):
        return F.linear(z, p[f"{name}.weight"], p.get(f"{name}.bias"))

    def ln(z, name):
        return F.layer_norm(z, z.shape[-1:], p[f"{name}.weight"], p[f"{name}.bias"], built.eps(name))

    def attn(z):
        projected = lay.attn.project_qkv(z, p)
        q, k, v = (split_heads(projected[i], h, d // h, variant.attn) for i in variant.attn.order)
        allowed = mask.to(z.device)[:, None, None, :].expand(b, 1, t, t)
        if variant.causal:
            allowed = allowed & torch.ones(t, t, dtype=torch.bool, device=z.device).tril()
        out, _ = attention(q, k, v, allowed, variant.attn, d_model=d)
        merged = merge_heads(out, variant.attn)
        return lay.attn.project_out(merged, p) if variant.attn.out_proj else merged

    def ffn(z):
        return linear(ACTIVATIONS[variant.activation](linear(z, lay.fc1)), lay.fc2)

    for sublayer, name, keep in ((attn, lay.ln1, variant.residual[0]), (ffn, lay.ln2, variant.residual[1])):
        skip = x if keep else 0
        if variant.norm == "pre":
            x = skip + sublayer(ln(x, name))
        elif variant.norm == "inside":
            x = skip + ln(sublayer(x), name)
        else:
            x = ln(skip + sublayer(x), name)
    return x


def forward(ctx: Context, module, x, mask):
    return unpack(ctx.call(module, x, mask))[0]


def padding(lengths, t: int, left: bool = False) -> torch.Tensor:
    """[B, T] bool, True = real: the first (or, left-padded, the last) lengths[b] tokens of each sample."""
    pos = torch.arange(t)[None, :]
    n = torch.tensor(lengths)[:, None]
    return pos >= t - n if left else pos < n


def inputs(ctx: Context, config, offset: int, dtype=torch.float64):
    b, t, h, hd = config
    gen = ctx.generator(offset)
    x = ctx.randn(b, t, h * hd, gen=gen, dtype=dtype)
    lengths = [max(1, t - (i * 2) % t) for i in range(b)]
    return x, padding(lengths, t, left=offset % 2 == 1).to(ctx.device)


def layout_check(ctx: Context):
    built = build(ctx, BASE[2] * BASE[3], BASE[2])
    if built.layout is None:
        return outcome("fail", Ev("unrecognised encoder layer layout; accepted: {accepted}", accepted=ACCEPTED))
    return outcome("pass", built.layout.describe())


def shape_check(ctx: Context, config, non_contiguous: bool = False):
    b, t, h, hd = config
    built = build(ctx, h * hd, h)
    x, mask = inputs(ctx, config, 10, torch.float32)
    if non_contiguous:
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
    out = forward(ctx, built.module, x, mask)
    problem = expect_like(out, x.shape, x)
    return outcome("fail", problem) if problem else outcome("pass", Ev("output {shape}", shape=list(out.shape)))


def numerical_check(ctx: Context, config, offset: int, dtype=torch.float32, scale: float = 1.0, full: bool = False):
    b, t, h, hd = config
    built = build(ctx, h * hd, h, dtype)
    if built.layout is None:
        return outcome("skip", NO_LAYOUT)
    x, mask = inputs(ctx, config, offset)
    x = scale * x
    if full:
        mask = torch.ones_like(mask)
    truth = reference(built, x.to(dtype), mask, torch.float64)
    same = reference(built, x, mask, dtype)
    out = forward(ctx, built.module, x.to(dtype), mask)
    if full:
        what = Ev("output ({dtype}, no padding, B={b} T={t} heads={h})", dtype=str(dtype)[6:], b=b, t=t, h=h)
    else:
        what = Ev("output ({dtype}, B={b} T={t} heads={h})", dtype=str(dtype)[6:], b=b, t=t, h=h)
    verdict = against_truth([(what, out, truth, same)])
    if verdict.status == "fail" and against_truth([(what, out, reference(built, x.to(dtype), mask, torch.float64, TANH), same)]).status == "pass":
        verdict.codes.append("encoder-gelu-approximate")  # 1e-4 from the exact form: too close for the hypotheses' 1e-3
    return verdict


def padding_leak_check(ctx: Context):
    """float64: changing a padded token's input must not move any real token's output."""
    built = build(ctx, BASE[2] * BASE[3], BASE[2], torch.float64)
    x, mask = inputs(ctx, BASE, 20)
    base = forward(ctx, built.module, x.clone(), mask)
    expect_shape(base, x.shape)
    x2 = x.clone()
    x2[~mask] += 5 * ctx.randn(int((~mask).sum()), x.shape[-1], gen=ctx.generator(21), dtype=torch.float64)
    change = moved(forward(ctx, built.module, x2, mask), base)  # [B, T]
    leaked = (change > LEAK_THRESHOLD) & mask
    if leaked.any():
        s, i = (int(n) for n in leaked.nonzero()[0])
        return outcome("fail", Ev("changing sample {s}'s padded tokens moved its real token {i} by {change:.3g} (float64): "
                                  "a padded key must get no attention", s=s, i=i, change=change[s, i].item()))  # fmt: skip
    future = x.clone()
    future[:, -1] += 5 * ctx.randn(x.shape[-1], gen=ctx.generator(22), dtype=torch.float64)  # a random direction: LN removes a shift
    reach = moved(forward(ctx, built.module, future, mask), base)[:, 0]
    if mask[:, 0].any() and mask[:, -1].any() and (reach[mask[:, 0] & mask[:, -1]] <= LEAK_THRESHOLD).any():
        return outcome("fail", Ev("changing the last token does not move the first one: an encoder attends in both "
                                  "directions (is there a causal mask?)"), "encoder-causal-mask")  # fmt: skip
    return outcome("pass", Ev("padded keys get no attention; every real token sees every real token (float64)"))


def gradient_check(ctx: Context):
    built = build(ctx, BASE[2] * BASE[3], BASE[2])
    if built.layout is None:
        return outcome("skip", NO_LAYOUT)
    x, mask = inputs(ctx, BASE, 30)
    return gradient_verdict(ctx, [x], torch.float32, lambda leaf: forward(ctx, built.module, leaf, mask),
                            lambda leaf, precision: reference(built, leaf, mask, precision), names=("x",))  # fmt: skip


def large_check(ctx: Context):
    """float32 inputs of ~30: attention scores in the thousands, where a softmax without the max shift overflows."""
    return numerical_check(ctx, (2, 5, 2, 6), 40, torch.float32, scale=30.0)


@dataclass(frozen=True)
class Probe:
    built: Built
    x: torch.Tensor
    mask: torch.Tensor

    def user(self, ctx: Context):
        return forward(ctx, self.built.module, self.x.clone(), self.mask.clone())

    def expected(self, variant):
        variant = variant if isinstance(variant, EncoderVariant) else EncoderVariant(attn=variant)
        return reference(self.built, self.x, self.mask, torch.float64, variant)


def hypotheses() -> list[tuple[str, EncoderVariant]]:
    attn = [*PROJECTION_HYPOTHESES, ("mask-on-queries", Variant(mask="transposed"))]
    attn += [("k-v-swapped" if o == (0, 2, 1) else "qkv-order", Variant(order=o)) for o in permutations(range(3)) if o != (0, 1, 2)]
    found = [(code, EncoderVariant(attn=v)) for code, v in attn]
    found += [
        ("encoder-pre-ln", EncoderVariant(norm="pre")),
        ("encoder-ln-before-residual", EncoderVariant(norm="inside")),
        ("encoder-causal-mask", EncoderVariant(causal=True)),
        ("encoder-gelu-approximate", EncoderVariant(activation="relu")),
        ("encoder-gelu-approximate", TANH),  # within 1e-3 of the exact form: never "explains", but confirms the check's code
        ("encoder-missing-residual", EncoderVariant(residual=(False, True))),
        ("encoder-missing-residual", EncoderVariant(residual=(True, False))),
        ("encoder-missing-residual", EncoderVariant(residual=(False, False))),
    ]
    return found


HYPOTHESES = hypotheses()


class EncoderLayerTask:
    name = "encoder_layer"

    def checks(self, ctx: Context) -> list[CheckDef]:
        b, t, h = ctx.sizes(700, (1, 4), (5, 11), (1, 5))
        drawn = (b, t, h, ctx.sizes(701, (2, 7), avoid=(b, t, h))[0])
        defs = [
            CheckDef("load.layout", "rules", partial(layout_check, ctx)),
            CheckDef("shape.base", "shape", partial(shape_check, ctx, BASE)),
            CheckDef("shape.t1", "shape", partial(shape_check, ctx, (3, 1, 2, 5))),
            CheckDef("shape.non-contiguous", "shape", partial(shape_check, ctx, BASE, True)),
        ]
        for dtype in ctx.dtypes:
            prefix = dtype_id("numerical", dtype)
            defs += [CheckDef(f"{prefix}.seed{i}", "numerical", partial(numerical_check, ctx, BASE, 100 + i, dtype)) for i in range(2)]
        x, mask = inputs(ctx, BASE, 600, torch.float32)

        def no_mutation():
            module = build(ctx, BASE[2] * BASE[3], BASE[2]).module
            return no_mutation_check(ctx, lambda: forward(ctx, module, x, mask), {"x": x, "key_padding_mask": mask})

        def deterministic():
            module = build(ctx, BASE[2] * BASE[3], BASE[2]).module
            return deterministic_check(lambda: forward(ctx, module, x.clone(), mask.clone()))

        return defs + [
            CheckDef("numerical.float64", "numerical", partial(numerical_check, ctx, (3, 7, 2, 5), 110, torch.float64)),
            CheckDef("numerical.no-padding", "numerical", partial(numerical_check, ctx, (2, 5, 3, 2), 120, torch.float32, 1.0, True)),
            CheckDef("numerical.drawn", "numerical", partial(numerical_check, ctx, drawn, 130)),
            CheckDef("mask-leak.padding", "mask-leak", partial(padding_leak_check, ctx)),
            CheckDef("gradient.x", "gradient", partial(gradient_check, ctx)),
            CheckDef("stability.large-inputs", "stability", partial(large_check, ctx)),
            CheckDef("robustness.no-mutation", "robustness", no_mutation),
            CheckDef("robustness.deterministic", "robustness", deterministic),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        try:
            built = build(ctx, 10, 2, torch.float64)
        except Exception:  # noqa: BLE001 - a module that cannot be built gives no evidence
            return []
        if built.layout is None:
            return []
        found = []
        for offset, (b, t) in ((1100, (3, 7)), (1101, (2, 5))):
            x = 1.5 * ctx.randn(b, t, 10, gen=ctx.generator(offset), dtype=torch.float64)
            found.append(Probe(built, x, padding([t - 2 * i for i in range(b)], t, left=offset % 2 == 1)))
        return found

    def hypotheses(self, ctx: Context):
        return HYPOTHESES


TASK = EncoderLayerTask()
