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
    "causal-mask-missing": Code(
        "There is no causal mask: every position also attends to the positions after it.",
        "Before the softmax, fill scores where ~torch.tril(torch.ones(T, T, dtype=torch.bool)) with -inf.",
        "没有因果掩码：每个位置也关注到了它之后的位置。",
        "在 softmax 之前，把 ~torch.tril(torch.ones(T, T, dtype=torch.bool)) 处的分数填为 -inf。",
    ),
    "kv-cache-mask-top-left": Code(
        "The mask of a new chunk is aligned top-left: with P cached tokens, query i of the chunk sees keys "
        "0..i instead of 0..P+i.",
        "Align it bottom-right: torch.ones(T, P + T, dtype=torch.bool).tril(diagonal=P).",
        "新块的掩码按左上角对齐：缓存了 P 个 token 时，块内查询 i 只看到键 0..i，而不是 0..P+i。",
        "按右下角对齐：torch.ones(T, P + T, dtype=torch.bool).tril(diagonal=P)。",
    ),
    "kv-cache-chunk-unmasked": Code(
        "Once a cache is passed, no causal mask is applied: right for one token at a time, but inside a "
        "multi-token chunk earlier tokens see later ones.",
        "Mask every chunk of T > 1 tokens: allowed = torch.ones(T, P + T, dtype=torch.bool).tril(diagonal=P).",
        "传入缓存后就不再加因果掩码：逐个 token 解码时没问题，但在多 token 的块内，前面的 token 看到了后面的。",
        "对每个 T > 1 的块都加掩码：allowed = torch.ones(T, P + T, dtype=torch.bool).tril(diagonal=P)。",
    ),
    "kv-cache-not-appended": Code(
        "The returned cache holds only the newest chunk's keys and values, not the whole history, so the "
        "next step forgets the earlier tokens.",
        "Concatenate along the sequence axis and return the result: k = torch.cat([past_k, k], dim=-2); "
        "cache = (k, v).",
        "返回的缓存只含最新一块的键和值，而不是全部历史，下一步就丢掉了更早的 token。",
        "沿序列维拼接后返回：k = torch.cat([past_k, k], dim=-2)；cache = (k, v)。",
    ),
    "flash-missing-rescale": Code(
        "When a key block raises the running row max m, the running sum l and the accumulator are not "
        "rescaled by exp(m_old - m_new); the output is right only when there is a single key block.",
        "m_new = max(m, rowmax(S)); a = exp(m - m_new); l = a * l + rowsum(P); acc = a * acc + P @ V; m = m_new.",
        "某个键块抬高了行最大值 m 时，累计和 l 与累加器没有乘 exp(m_old - m_new) 重新缩放；只有一个键块时结果才对。",
        "m_new = max(m, rowmax(S))；a = exp(m - m_new)；l = a * l + rowsum(P)；acc = a * acc + P @ V；m = m_new。",
    ),
    "flash-missing-normalise": Code(
        "The accumulator is returned without the final division by the softmax denominator l.",
        "After the last key block, return acc / l (l per query row).",
        "返回累加器时没有在最后除以 softmax 分母 l。",
        "处理完最后一个键块后返回 acc / l（每个查询行一个 l）。",
    ),
    "flash-materialises-scores": Code(
        "The code builds a tensor as large as a whole Tq x Tk score matrix (or a full T x T mask): "
        "the memory FlashAttention's tiling exists to avoid.",
        "Loop over key/value blocks and compute one tile of scores at a time; build the causal mask per tile "
        "from the query and key positions.",
        "代码构造了和完整的 Tq x Tk 分数矩阵（或完整的 T x T 掩码）一样大的张量，而 FlashAttention 分块正是为了避免这部分内存。",
        "按键/值块循环，每次只计算一块分数；因果掩码也按块用查询和键的位置生成。",
    ),
    "flash-causal-block-off-by-one": Code(
        "With causal=True the key block on the diagonal is skipped: query block i only visits key blocks "
        "before it, so a query never sees itself (the first block sees no key at all).",
        "Visit key blocks 0..i for query block i (range(i + 1)) and mask inside the diagonal tile with "
        "key_pos <= query_pos.",
        "causal=True 时跳过了对角线上的键块：查询块 i 只访问它之前的键块，查询看不到自己（第一块根本没有键）。",
        "查询块 i 访问键块 0..i（range(i + 1)），并在对角块内用 key_pos <= query_pos 做掩码。",
    ),
    "flash-tail-block-dropped": Code(
        "The last partial block is dropped (T // block_size blocks instead of ceil(T / block_size)): "
        "when block_size does not divide T, the last positions are ignored.",
        "Loop with range(0, T, block_size) and slice [start:start + block_size]; the slice clips the last block.",
        "丢掉了最后一个不完整的块（用了 T // block_size 而不是 ceil(T / block_size)）：block_size 不整除 T 时最后几个位置被忽略。",
        "用 range(0, T, block_size) 循环并切片 [start:start + block_size]；切片会自动截断最后一块。",
    ),
    "block-post-ln": Code(
        "The block is Post-LN, x = LN(x + sublayer(x)) as in the original Transformer, instead of Pre-LN, "
        "x = x + sublayer(LN(x)) as in GPT-2 and later.",
        "x = x + attn(ln1(x)); x = x + ffn(ln2(x)): normalise each sublayer's input, not the residual stream.",
        "这是 Post-LN（原始 Transformer 的 x = LN(x + sublayer(x))），而不是 Pre-LN（GPT-2 及之后的 x = x + sublayer(LN(x))）。",
        "x = x + attn(ln1(x))；x = x + ffn(ln2(x))：归一化每个子层的输入，而不是残差流本身。",
    ),
    "block-missing-residual": Code(
        "A residual connection is missing: a sublayer's output replaces x instead of being added to it.",
        "Add both: x = x + attn(ln1(x)), then x = x + ffn(ln2(x)).",
        "缺少残差连接：子层的输出替换了 x，而不是加到 x 上。",
        "两处都要加：x = x + attn(ln1(x))，然后 x = x + ffn(ln2(x))。",
    ),
    "block-layernorm-wrong-axis": Code(
        "LayerNorm normalises over the sequence axis instead of over each token's features.",
        "Take the mean and (biased) variance over the last dim, dim=-1, keepdim=True; or use nn.LayerNorm(d_model).",
        "LayerNorm 在序列维上归一化，而不是在每个 token 的特征维上。",
        "在最后一维（dim=-1, keepdim=True）上求均值和（有偏）方差；或直接用 nn.LayerNorm(d_model)。",
    ),
    "mask-not-bool": Code(
        "The mask is not a torch.bool tensor. On a 0/1 integer mask ~mask gives -1/-2 (both non-zero), "
        "and F.scaled_dot_product_attention adds a float mask to the scores instead of selecting with it.",
        "Build the mask from comparisons (torch.arange(T) < lengths[:, None]) and combine with &: both keep torch.bool.",
        "掩码不是 torch.bool 张量。对 0/1 整数掩码取 ~ 得到 -1/-2（都非零）；"
        "F.scaled_dot_product_attention 会把浮点掩码加到分数上，而不是用它做选择。",
        "用比较运算构造掩码（torch.arange(T) < lengths[:, None]），再用 & 组合：结果保持 torch.bool。",
    ),
    "cross-qkv-source-swapped": Code(
        "q, k and v come from the wrong inputs: queries must come from x (the sequence being updated, "
        "e.g. the decoder), keys and values from context (e.g. the encoder output).",
        "q = q_proj(x); k = k_proj(context); v = v_proj(context). The output has x's length Tq, not Tk.",
        "q、k、v 取自错误的输入：查询应来自 x（被更新的序列，如解码器），键和值来自 context（如编码器输出）。",
        "q = q_proj(x)；k = k_proj(context)；v = v_proj(context)。输出长度是 x 的 Tq，而不是 Tk。",
    ),
    "gqa-head-mapping": Code(
        "Query heads use the wrong kv heads: query head h uses kv head h % n_kv_heads (k.repeat(1, g, 1, 1)) "
        "instead of h // g with g = n_heads // n_kv_heads. It is a valid model when trained from scratch, "
        "but every GQA checkpoint (LLaMA's repeat_kv) groups consecutive query heads.",
        "k = k.repeat_interleave(g, dim=1) (same for v), or "
        "k[:, :, None].expand(B, n_kv_heads, g, T, hd).reshape(B, n_heads, T, hd).",
        "查询头映射到了错误的 kv 头：查询头 h 用的是 kv 头 h % n_kv_heads（k.repeat(1, g, 1, 1)），"
        "而不是 h // g（g = n_heads // n_kv_heads）。从头训练时这仍是合法模型，"
        "但所有 GQA 权重（LLaMA 的 repeat_kv）都把相邻的查询头分为一组。",
        "k = k.repeat_interleave(g, dim=1)（v 同理），或 "
        "k[:, :, None].expand(B, n_kv_heads, g, T, hd).reshape(B, n_heads, T, hd)。",
    ),
    "rope-frequency-exponent": Code(
        "The rotation frequencies are wrong: pair i (i = 0..D/2-1) must turn by pos * base^(-2i/D).",
        "inv_freq = 1.0 / base ** (torch.arange(0, D, 2) / D): even exponents up to D, and a reciprocal.",
        "旋转频率不对：第 i 对（i = 0..D/2-1）的旋转角应为 pos * base^(-2i/D)。",
        "inv_freq = 1.0 / base ** (torch.arange(0, D, 2) / D)：指数取 0 到 D 的偶数，并取倒数。",
    ),
    "rope-rotation-direction": Code(
        "Each pair is rotated by -angle instead of +angle (the sin term has the wrong sign). q.k still depends "
        "only on m - n, but with the sign flipped: weights trained with standard RoPE see mirrored offsets.",
        "x1' = x1*cos - x2*sin, x2' = x1*sin + x2*cos; with rotate_half(x) = cat(-x2, x1): x*cos + rotate_half(x)*sin.",
        "每一对被旋转了 -角度 而不是 +角度（sin 项符号错了）。q·k 仍只依赖 m - n，"
        "但符号相反：用标准 RoPE 训练的权重会看到镜像的相对位置。",
        "x1' = x1*cos - x2*sin，x2' = x1*sin + x2*cos；用 rotate_half(x) = cat(-x2, x1) 时：x*cos + rotate_half(x)*sin。",
    ),
    "rope-sin-cos-swapped": Code(
        "cos and sin are exchanged (x*sin + rotate(x)*cos): position 0 no longer leaves x unchanged.",
        "Multiply x by cos and its rotated partner by sin; at position 0 (angle 0) the output must equal x.",
        "cos 和 sin 用反了（x*sin + rotate(x)*cos）：位置 0 不再保持 x 不变。",
        "x 乘 cos，旋转后的配对分量乘 sin；位置 0（角度为 0）时输出应等于 x。",
    ),
    "rope-pairing-mismatch": Code(
        "The angle layout does not match the pairing: rotate_half pairs dim i with i + D/2, so its angles are "
        "cat(freqs, freqs); interleaved pairs (2i, 2i+1) need freqs.repeat_interleave(2). Mixing them rotates "
        "the two halves of a pair by different angles.",
        "Use one convention throughout: rotate_half with torch.cat((freqs, freqs), -1), "
        "or interleaved pairs with freqs.repeat_interleave(2, -1).",
        "角度的排布与配对方式不一致：rotate_half 把第 i 维与第 i + D/2 维配对，角度应为 cat(freqs, freqs)；"
        "相邻配对 (2i, 2i+1) 需要 freqs.repeat_interleave(2)。混用会让同一对的两个分量转不同的角度。",
        "全程使用同一种约定：rotate_half 配 torch.cat((freqs, freqs), -1)，或相邻配对配 freqs.repeat_interleave(2, -1)。",
    ),
}


def explain(codes) -> list:
    """One Diagnosis per distinct code, in order."""
    from drill.grade.report import Diagnosis

    return [Diagnosis(code, *CODES[code]) for code in dict.fromkeys(codes)]
