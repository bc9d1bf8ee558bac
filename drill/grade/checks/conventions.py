"""Call the user's module the way the codebases candidates learn from define it.

The contract says ``MultiHeadAttention(d_model, n_heads)`` and ``forward(x, mask=None)``; nanoGPT and
minGPT take one ``config`` (``n_embd``, ``n_head``, ``block_size``, ``dropout``, ``bias``), Hugging Face
a config with ``hidden_size``, ``num_attention_heads``, ``num_key_value_heads``, and the Annotated
Transformer ``MultiHeadedAttention(h, d_model, dropout)`` with ``forward(query, key, value, mask)``.
From the signatures the user side reports (inspect.signature), :func:`plan` decides how to build and
call the module; a signature it cannot map is the contract, called positionally, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from drill.grade.user.wire import Config
from drill.text.messages import Ev

# Parameter names each role goes by in the common codebases.
ROLE_NAMES = {
    "d_model": ("d_model", "embed_dim", "hidden_size", "n_embd", "n_embed", "dim", "d", "emb_dim", "model_dim",
                "embedding_dim", "d_embed", "hidden", "width"),
    "n_heads": ("n_heads", "num_heads", "h", "n_head", "heads", "nhead", "num_attention_heads", "n_attention_heads", "head_num"),
    "max_seq_len": ("max_seq_len", "block_size", "max_len", "seq_len", "max_position_embeddings", "context_length", "n_ctx",
                    "max_seq_length", "max_length", "context_size", "n_positions", "max_positions"),
    "n_kv_heads": ("n_kv_heads", "num_kv_heads", "num_key_value_heads", "kv_heads", "n_kv_head", "n_kv", "num_kv", "n_groups",
                   "num_groups", "num_kv_groups"),
    "d_ff": ("d_ff", "ff_dim", "intermediate_size", "dim_feedforward", "ffn_dim", "d_mlp", "mlp_dim", "d_inner", "n_inner",
             "hidden_dim", "d_hidden", "ff_hidden", "ffn_hidden"),
}  # fmt: skip
# Dropout arguments: set to 0 only when required (the call cannot be made without them).
OFF = ("dropout", "p", "attn_dropout", "dropout_p", "attn_pdrop", "resid_pdrop", "pdrop", "dropout_rate", "attention_dropout",
       "resid_dropout", "drop", "drop_p", "p_drop")  # fmt: skip
CONFIG_NAMES = ("config", "cfg", "conf", "args", "params", "hparams", "model_args", "configs", "c", "opt", "hp")
QKV_NAMES = (("query", "key", "value"), ("q", "k", "v"), ("queries", "keys", "values"))
MASK_NAMES = ("mask", "attn_mask", "attention_mask", "key_padding_mask", "src_mask")
CONFIG = "config object"  # shown as is: a Plan's style, a key never shown


@dataclass(frozen=True)
class Plan:
    """How to build the user's module and call its forward."""

    args: tuple
    kwargs: dict
    style: str  # "contract", "by name" or CONFIG
    qkv_forward: bool = False  # forward(query, key, value, mask): self-attention is forward(x, x, x, mask)

    def describe(self) -> Ev:
        if self.style == "contract":
            text = Ev("called as the contract says")
        elif self.style == CONFIG:
            text = Ev("from a config object (nanoGPT / Hugging Face names)")
        else:
            text = Ev("with arguments by name: {args}", args=", ".join(f"{k}={v!r}" for k, v in self.kwargs.items()))
        return Ev("{how}; forward(query, key, value, mask) called as forward(x, x, x, mask)", how=text) if self.qkv_forward else text

    def style_call(self) -> Ev:
        """How drill called the constructor, for a message."""
        if self.style == CONFIG:
            return Ev("from a config object")
        shown = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return Ev("as ({args})", args=", ".join(shown))


def role_of(name: str) -> str | None:
    lowered = name.lower()
    return next((role for role, names in ROLE_NAMES.items() if lowered in names), None)


def config_object(values: dict) -> Config:
    """One object that satisfies nanoGPT's, minGPT's and Hugging Face's attribute names at once."""
    d, h = values["d_model"], values["n_heads"]
    kv = values.get("n_kv_heads", h)
    t = values.get("max_seq_len", 16)
    fields = {
        "d_model": d, "n_embd": d, "hidden_size": d, "dim": d, "embed_dim": d, "n_embed": d,
        "n_heads": h, "n_head": h, "num_attention_heads": h, "num_heads": h,
        "n_kv_heads": kv, "num_key_value_heads": kv, "n_kv_head": kv, "num_kv_heads": kv,
        "max_seq_len": t, "block_size": t, "max_position_embeddings": t, "n_positions": t, "n_ctx": t,
        "head_dim": d // h,
        "dropout": 0.0, "attn_pdrop": 0.0, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attention_dropout": 0.0,
        "hidden_dropout": 0.0, "bias": True, "attention_bias": True, "rope_theta": 10000.0,
        "layer_norm_epsilon": 1e-5, "layer_norm_eps": 1e-5, "norm_eps": 1e-5,
    }  # fmt: skip
    if "d_ff" in values:
        for name in ("d_ff", "intermediate_size", "n_inner", "ffn_dim", "hidden_dim", "dim_feedforward"):
            fields[name] = values["d_ff"]
    return Config(tuple(fields.items()))


def plan(init_params, forward_params, values: dict) -> Plan:
    """``values``: the contract's arguments by role, in contract order (d_model, n_heads, ...).

    ``init_params`` / ``forward_params``: [(name, kind, has_default)] from the user side, or None."""
    contract = tuple(values.values())
    qkv = _qkv_forward(forward_params)
    if not init_params:
        return Plan(contract, {}, "contract", qkv)
    params = [p for p in init_params if p[1] not in ("VAR_POSITIONAL", "VAR_KEYWORD")]
    required = [p for p in params if not p[2]]
    if len(required) == 1 and role_of(required[0][0]) is None and (
        required[0][0].lower() in CONFIG_NAMES or len(values) > 1
    ):
        return Plan((config_object(values),), {}, CONFIG, qkv)
    kwargs, used, extra = {}, set(), False
    for name, kind, has_default in params:
        role = role_of(name)
        if role in values and role not in used and kind != "POSITIONAL_ONLY":
            kwargs[name], used = values[role], used | {role}
        elif role == "max_seq_len" and not has_default and kind != "POSITIONAL_ONLY":
            kwargs[name], extra = 16, True
        elif name.lower() in OFF and not has_default and kind != "POSITIONAL_ONLY":
            kwargs[name], extra = 0.0, True  # a default is left alone: dropout applied in eval mode must still show
        elif not has_default:
            return Plan(contract, {}, "contract", qkv)  # a required argument drill cannot name: the contract's order
    in_order = [role_of(p[0]) for p in params[: len(values)]] == list(values)
    if used != set(values) or (in_order and not extra):
        return Plan(contract, {}, "contract", qkv)
    return Plan((), kwargs, "by name", qkv)  # shown as is


def _qkv_forward(params) -> bool:
    if not params:
        return False
    names = tuple(p[0].lower() for p in params[:3] if p[1] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD"))
    return names in QKV_NAMES and not any(p[2] for p in params[:3])


def contract_text(entry: str, values: dict, forward: str) -> Ev:
    return Ev("{entry}({args}) with forward({forward})", entry=entry, args=", ".join(values), forward=forward)
