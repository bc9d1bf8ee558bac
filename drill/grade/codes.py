"""The documented diagnosis codes: what each classic mistake is and how to fix it, in English and Chinese."""

from __future__ import annotations

from typing import NamedTuple


class Code(NamedTuple):
    message: str
    fix: str
    message_zh: str
    fix_zh: str


CODES: dict[str, Code] = {
    "scale-missing": Code(
        "The scores are not scaled: softmax(QK^T) instead of softmax(QK^T / sqrt(d)).",
        "Multiply the scores by 1/sqrt(head_dim) before the softmax.",
        "注意力分数没有缩放：算的是 softmax(QK^T) 而不是 softmax(QK^T / sqrt(d))。",
        "在 softmax 之前把分数乘以 1/sqrt(head_dim)。",
    ),
    "scale-by-d": Code(
        "The scores are divided by d instead of sqrt(d).",
        "Use head_dim ** -0.5 (or / math.sqrt(head_dim)), not / head_dim.",
        "分数除以了 d，而不是 sqrt(d)。",
        "用 head_dim ** -0.5（或 / math.sqrt(head_dim)），不要 / head_dim。",
    ),
    "scale-by-d-model": Code(
        "The scores are scaled with d_model instead of the head dimension d_model / n_heads.",
        "Scale by 1/sqrt(d_model // n_heads): each head's dot product has head_dim terms.",
        "缩放用了 d_model，而不是每个头的维度 d_model / n_heads。",
        "按 1/sqrt(d_model // n_heads) 缩放：每个头的点积只有 head_dim 项。",
    ),
    "softmax-wrong-dim": Code(
        "The softmax normalises over the queries (dim -2) instead of over the keys.",
        "Use softmax(scores, dim=-1): each query's weights over the keys must sum to 1.",
        "softmax 在查询维（dim -2）上归一化，而不是在键维上。",
        "用 softmax(scores, dim=-1)：每个查询对所有键的权重之和应为 1。",
    ),
    "mask-inverted": Code(
        "The mask is applied inverted: positions marked True (may attend) are blocked.",
        "True means 'may attend' (as in F.scaled_dot_product_attention): fill where ~mask.",
        "掩码用反了：标为 True（可以关注）的位置被屏蔽了。",
        "True 表示“可以关注”（与 F.scaled_dot_product_attention 一致）：对 ~mask 的位置填充。",
    ),
    "mask-after-softmax": Code(
        "The mask is applied after the softmax, so the remaining weights no longer sum to 1 "
        "and masked keys still shape the normaliser.",
        "Fill masked scores with -inf before the softmax.",
        "掩码在 softmax 之后才应用，剩余权重之和不再为 1，被屏蔽的键仍影响归一化。",
        "在 softmax 之前把被屏蔽的分数填为 -inf。",
    ),
    "causal-off-by-one": Code(
        "The causal mask lets position i see position i+1.",
        "Use torch.tril(torch.ones(T, T, dtype=torch.bool)) (diagonal=0): i attends to 0..i.",
        "因果掩码让位置 i 看到了位置 i+1。",
        "用 torch.tril(torch.ones(T, T, dtype=torch.bool))（diagonal=0）：i 只关注 0..i。",
    ),
    "causal-blocks-self": Code(
        "The causal mask blocks the diagonal: position i cannot attend to itself (row 0 is fully masked).",
        "Keep the diagonal: tril with diagonal=0, or triu(..., diagonal=1) for the blocked part.",
        "因果掩码屏蔽了对角线：位置 i 不能关注自己（第 0 行被完全屏蔽）。",
        "保留对角线：tril 用 diagonal=0，或用 triu(..., diagonal=1) 表示被屏蔽部分。",
    ),
    "causal-transposed": Code(
        "The causal mask is transposed: position i attends to the future i..T-1 instead of the past.",
        "Rows are queries, columns are keys: allowed = tril (lower triangle), not triu.",
        "因果掩码转置了：位置 i 关注的是未来 i..T-1 而不是过去。",
        "行是查询、列是键：允许的部分是 tril（下三角），不是 triu。",
    ),
    "unstable-softmax": Code(
        "The softmax overflows on large logits (exp of ~1e3 is inf), giving NaN.",
        "Subtract the row max before exp, or use torch.softmax which already does.",
        "softmax 在大的 logits 上溢出（exp(1e3) 为 inf），结果为 NaN。",
        "exp 之前先减去每行最大值，或直接用 torch.softmax（它已经这样做）。",
    ),
    "heads-split-without-transpose": Code(
        "The heads are split with view(B, H, T, hd) directly, which mixes time steps and features.",
        "Use view(B, T, H, hd).transpose(1, 2).",
        "拆分多头时直接 view(B, H, T, hd)，把时间步和特征混在了一起。",
        "用 view(B, T, H, hd).transpose(1, 2)。",
    ),
    "heads-merge-without-transpose": Code(
        "The heads are merged with reshape(B, T, d_model) without moving the head axis back first.",
        "Use out.transpose(1, 2).contiguous().view(B, T, d_model).",
        "合并多头时没有先把头维移回去就 reshape(B, T, d_model)。",
        "用 out.transpose(1, 2).contiguous().view(B, T, d_model)。",
    ),
    "missing-output-projection": Code(
        "The output projection is never applied: the merged heads are returned as they are.",
        "Apply the output Linear (W_o / out_proj) to the merged heads.",
        "没有应用输出投影：直接返回了合并后的多头结果。",
        "对合并后的结果再做一次输出线性层（W_o / out_proj）。",
    ),
    "qkv-order": Code(
        "q, k and v are taken from the wrong parts of the projection (the fused output is q, k, v in that order).",
        "Split the fused projection as q, k, v = qkv(x).split(d_model, dim=-1).",
        "q、k、v 取自投影的错误部分（融合投影输出的顺序是 q、k、v）。",
        "按 q, k, v = qkv(x).split(d_model, dim=-1) 切分。",
    ),
    "mask-on-queries": Code(
        "The padding mask is applied to the query axis instead of the key axis.",
        "A key-padding mask has shape [B, 1, 1, Tk]: it blanks columns (keys), not rows.",
        "填充掩码加在了查询轴上，而不是键轴上。",
        "键填充掩码的形状是 [B, 1, 1, Tk]：它屏蔽的是列（键），不是行。",
    ),
    "mutates-input": Code(
        "The code modifies its inputs in place (e.g. q *= scale or mask.logical_not_()).",
        "Use out-of-place operations: q = q * scale.",
        "代码原地修改了输入（例如 q *= scale 或 mask.logical_not_()）。",
        "使用非原地操作：q = q * scale。",
    ),
    "uses-builtin": Code(
        "The code calls torch's own attention, which the whiteboard rule forbids.",
        "Write the matmuls and the softmax yourself, or grade with --allow-builtins.",
        "代码调用了 torch 自带的注意力实现，白板规则不允许。",
        "自己写矩阵乘和 softmax，或加 --allow-builtins 评分。",
    ),
    "dropout-in-eval": Code(
        "Two identical calls give different outputs: dropout is still active (F.dropout defaults to training=True).",
        "Use nn.Dropout as a module, or pass training=self.training to F.dropout.",
        "两次相同的调用结果不同：dropout 仍在生效（F.dropout 默认 training=True）。",
        "用 nn.Dropout 模块，或给 F.dropout 传 training=self.training。",
    ),
    "wrong-output-shape": Code(
        "The output has the wrong shape.",
        "Return [..., Tq, Dv] (sdpa) or [B, T, d_model] (modules); check every transpose and view.",
        "输出形状不对。",
        "返回 [..., Tq, Dv]（sdpa）或 [B, T, d_model]（模块）；检查每个 transpose 和 view。",
    ),
    "k-v-swapped": Code(
        "k and v are swapped: the weights come from q·v and are applied to k.",
        "scores = q @ k.transpose(-2, -1); out = softmax(scores) @ v.",
        "k 和 v 交换了：权重来自 q·v，又作用在 k 上。",
        "scores = q @ k.transpose(-2, -1)；out = softmax(scores) @ v。",
    ),
    "not-implemented": Code(
        "The expected function or class is missing, or still raises NotImplementedError.",
        "Define the entry point named in docs/whiteboard.md and implement it.",
        "缺少要求的函数或类，或者它仍然抛出 NotImplementedError。",
        "按 docs/whiteboard.md 定义入口并实现它。",
    ),
}


def explain(codes) -> list:
    """One Diagnosis per distinct code, in order."""
    from drill.grade.report import Diagnosis

    return [Diagnosis(code, *CODES[code]) for code in dict.fromkeys(codes)]
