"""The judge's evidence (``Check.message``, written in English by each check) in Chinese, for ``--lang zh``.

Checks keep writing one English message; this table reads it back. Each rule is a regular expression over a
whole message and a Chinese template with the same named groups. Messages are built from parts ("call 2 (T=5):
dq: max error 0.6 at [0, 2] (allowed 2e-05)"), so translation is recursive: a group named ``M…`` is translated
again, ``C…`` is code (names, shown in backticks), ``F…`` a list of torch's own functions, and any other group
(numbers, shapes, ids, Python's own text) is copied. A message no rule fits is split where its parts meet
(``; ``, the first ``: ``, a trailing ``(…)``, ``, ``) and each part is translated; a ``name=value`` part is code.
Nothing matched anywhere: the English comes back unchanged. Torch-free: the parent process reads reports too.
"""

from __future__ import annotations

import re
from functools import lru_cache

NUM = r"[-+]?(?:\d[\d.]*(?:e[-+]?\d+)?|inf|nan|NaN)"
SHAPE = r"\[[^\]]*\]"

# fmt: off
TABLE: list[tuple[str, str]] = [
    # --- the tolerance rule, shapes and dtypes (tolerance.py, checks/compare.py, checks/common.py) ---
    (r"max error (?P<e>%N) at (?P<at>%S) \(allowed (?P<a>%N)\)", "最大误差 {e}，位于 {at}（允许 {a}）"),
    (r"max error (?P<e>%N) \(allowed (?P<a>%N)\)", "最大误差 {e}（允许 {a}）"),
    (r"max error (?P<e>%N) against the (?P<d>\w+) reference", "与 {d} 参考实现相比最大误差 {e}"),
    (r"(?P<C>\w+) max error (?P<e>%N) against the (?P<d>\w+) reference", "{C} 与 {d} 参考实现相比最大误差 {e}"),
    (r"(?P<v>NaN|-?inf) at (?P<at>%S) where the reference is finite \((?P<n>\d+) values non-finite where the reference is finite\)",
     "{at} 处为 {v}，参考值却是有限的（共 {n} 个这样的值）"),
    (r"(?P<v>NaN|-?inf) at (?P<at>%S) where the reference is finite", "{at} 处为 {v}，参考值却是有限的"),
    (r"(?P<M>.+?) has shape (?P<s>%S), expected (?P<e>%S)", "{M}的形状是 {s}，应为 {e}"),
    (r"(?P<M>.+?) dtype is (?P<d>[\w.]+), the input's is (?P<e>[\w.]+)", "{M}的 dtype 是 {d}，输入的是 {e}"),
    (r"(?P<M>.+?) dtype is (?P<d>[\w.]+), expected (?P<e>[\w.]+)", "{M}的 dtype 是 {d}，应为 {e}"),
    (r"(?P<M>.+?) is on (?P<d>\S+), the input is on (?P<e>\S+)", "{M}在 `{d}` 上，输入却在 `{e}` 上"),
    (r"returned an empty tuple", "返回了空元组"),
    (r"returned (?P<C>\w+), not a tensor", "返回的是 {C}，不是张量"),
    (r"returned an object of its own, not a tensor", "返回的是它自己定义的对象，不是张量"),
    (r"(?P<M>(?:masked )?(?:output|weights)) at q (?P<q>%S), k (?P<k>%S), v (?P<v>%S)", "{M}（q {q}，k {k}，v {v}，由种子抽取的形状）"),
    (r"(?P<M>(?:masked )?output) at B=(?P<b>\d+), T=(?P<t>\d+)", "{M}（B={b}，T={t}，由种子抽取）"),
    (r"a configuration drawn from the seed", "由种子抽取的一组配置"),
    (r"drawn from the seed", "由种子抽取"),
    (r"(?P<h>\d+) heads? of (?P<d>\d+)", "{h} 个头，每头 {d} 维"),
    (r"finite, max error (?P<e>%N)", "结果有限，最大误差 {e}"),
    (r"finite, max error (?P<e>%N) \(allowed (?P<a>%N)\)", "结果有限，最大误差 {e}（允许 {a}）"),
    (r"non-finite output at (?P<at>%S)", "{at} 处输出非有限值"),
    (r"(?P<M>.+) give a non-finite output at (?P<at>%S)", "{M}：{at} 处输出非有限值"),
    (r"(?P<M>.+) give a non-finite (?P<C>\w+): exp overflows without the max subtracted \(torch\.softmax does it\)",
     "{M}：{C} 出现非有限值：没有先减去最大值，exp 溢出了（torch.softmax 会先减）"),
    (r"(?P<M>.+) give a loss of (?P<v>%N), expected (?P<e>%N)", "{M}：损失为 {v}，应为 {e}"),
    (r"(?P<C>[\w.]+(?:, [\w.]+)*) unchanged", "{C} 没有被修改"),
    (r"modified in place: (?P<C>.+)", "原地修改了 {C}"),
    (r"(?P<c>mask|param|grad|dlogits)", "`{c}`"),
    (r"the parameters' values unchanged", "参数的值没有被修改"),
    (r"two identical calls give identical outputs", "两次相同的调用输出相同"),
    (r"two identical calls differ by (?P<n>%N) \(dropout left on\?\)", "两次相同的调用相差 {n}（`dropout` 没关？）"),
    (r"a fully masked row gives 0, as torch >= 2\.5 does", "完全被屏蔽的行输出 0，与 torch >= 2.5 一致"),
    ((r"a fully masked row gives NaN; torch >= 2\.5 returns 0 there\. Either is defensible, but NaN spreads through the next layer: "
     r"fill such rows with 0 if they can occur\."),
     "完全被屏蔽的行输出 NaN；torch >= 2.5 在这里返回 0。两种做法都说得通，但 NaN 会扩散到下一层：如果可能出现这种行，就把它们填成 0。"),
    (r"a fully masked row gives a finite non-zero output \(a -1e9 fill averages all values uniformly\); torch >= 2\.5 returns 0 there\.",
     "完全被屏蔽的行输出有限的非零值（用 -1e9 填充会对所有 value 均匀平均）；torch >= 2.5 在这里返回 0。"),
    # --- what is compared: outputs, inputs, losses ---
    (r"outputs?", "输出"),
    (r"loss", "损失"),
    (r"masked output", "带掩码的输出"),
    (r"key-padding-masked output", "带 key 填充掩码的输出"),
    (r"output with no mask", "不带掩码的输出"),
    (r"output with a (?P<M>.+ mask)", "带 {M}的输出"),
    (r"output (?P<s>%S)", "输出 {s}"),
    (r"output (?P<s>%S) from transposed inputs", "输入转置（非连续）时输出 {s}"),
    (r"output (?P<s>%S), (?P<d>\w+)", "输出 {s}，{d}"),
    (r"output with causal left at its default \(True\)", "`causal` 取默认值（True）时的输出"),
    (r"output with every feature offset by (?P<n>%N)", "每个特征都加上 {n} 后的输出"),
    (r"outputs decoded one token at a time", "逐个 token 解码的输出"),
    (r"outputs decoded in chunks of (?P<a>\d+) then (?P<b>\d+) then (?P<c>\d+) tokens", "依次按 {a}、{b}、{c} 个 token 分块解码的输出"),
    (r"leading dims", "带前导维"),
    (r"non-contiguous input", "非连续输入"),
    (r"rows with -inf entries", "行中含 -inf"),
    (r"shape (?P<s>%S)", "形状 {s}"),
    (r"no mask", "无掩码"),
    (r"(?P<s>%S) mask", "{s} 掩码"),
    (r"(?P<s>%S) key-padding mask", "{s} key 填充掩码"),
    (r"(?P<s>%S) per-head mask", "{s} 逐头掩码"),
    (r"mask (?P<s>%S)", "掩码 {s}"),
    (r"(?P<n>\d+) mask forms", "{n} 种掩码形式"),
    (r"skipped (?P<M>.+): forward\(query, key, value, mask\) adds the head axis", "跳过了 {M}：`forward(query, key, value, mask)` 会自己加上头维"),
    (r"(?P<n>\d+) query heads", "{n} 个 query 头"),
    (r"(?P<n>\d+) kv heads", "{n} 个 kv 头"),
    (r"half layout", "前后两半布局"),
    (r"interleaved layout", "交错布局"),
    (r"eps=(?P<e>%N) passed as an argument", "`eps={e}` 作为参数传入"),
    (r"(?P<a>int\d+) and (?P<b>int\d+) positions agree", "{a} 和 {b} 的位置给出相同结果"),
    (r"(?P<a>int\d+) positions give a different result \(by (?P<n>%N)\)", "{a} 的位置给出不同的结果（相差 {n}）"),
    (r"positions (?P<s>%S)", "位置 {s}"),
    (r"inputs x(?P<n>%N)", "输入放大 {n} 倍"),
    (r"inputs ~(?P<n>%N)", "量级 ~{n} 的输入"),
    (r"logits ~(?P<n>%N)", "量级 ~{n} 的 logits"),
    (r"(?P<d>b?float\d+) logits ~(?P<n>%N)", "量级 ~{n} 的 {d} logits"),
    (r"spread ~(?P<n>%N)", "离散程度 ~{n}"),
    (r"rms ~(?P<n>%N)", "均方根 ~{n}"),
    (r"default eps", "默认 eps"),
    (r"row std ~(?P<n>%N)", "每行标准差 ~{n}"),
    (r"rows around (?P<a>%N) with std ~(?P<b>%N)", "均值约 {a}、标准差约 {b} 的行"),
    (r"rows offset by (?P<l>[-+\d., ]+?) \((?P<d>\w+)\)", "各行分别偏移 {l}（{d}）"),
    (r"rows ~(?P<a>%N) and ~(?P<b>%N)", "量级 ~{a} 和 ~{b} 的行"),
    (r"(?P<d>b?float\d+) rows", "{d} 的行"),
    (r"(?P<d>b?float\d+) rows whose absmax / scale rounds to (?P<n>%N)", "`absmax / scale` 舍入到 {n} 的 {d} 行"),
    (r"(?P<d>b?float\d+) rows with \|x\| up to ~(?P<n>%N)", "|x| 最大约 {n} 的 {d} 行"),
    (r"(?P<d>b?float\d+) Jacobian: exactly 0 above the diagonal, non-zero on and below it", "{d} 雅可比矩阵：对角线以上全为 0，对角线及以下非零"),
    (r"logits (?P<s>%S)", "logits {s}"),
    (r"(?P<n>\d+) ignored", "忽略 {n} 个"),
    (r"defaults", "默认参数"),
    (r"causal", "因果"),
    (r"masked", "带掩码"),
    (r"central difference", "中心差分"),
    # --- calls, steps, samples: the prefixes of a message ---
    (r"call (?P<n>\d+)", "第 {n} 次调用"),
    (r"call (?P<n>\d+) \((?P<M>.+)\)", "第 {n} 次调用（{M}）"),
    (r"call (?P<n>\d+) of (?P<k>\d+) \((?P<M>.+)\) differs from the reference", "{k} 次调用中的第 {n} 次（{M}）与参考实现不一致"),
    (r"calls with block_size (?P<a>[\d, ]+) and (?P<b>\d+) in a row all match", "连续以 block_size 为 {a} 和 {b} 调用，结果都一致"),
    (r"calls with (?P<v>.+?) in a row all match", "连续以 {v} 调用，结果都一致"),
    (r"calls with (?P<v>.+?) in a row all work", "连续以 {v} 调用，都能正常运行"),
    (r"causal calls with (?P<v>.+?) in a row all match", "因果模式下连续以 {v} 调用，结果都一致"),
    (r"three calls with different shapes and dims in a row all match", "连续三次以不同的形状和 `dim` 调用，结果都一致"),
    (r"three calls with different shapes in a row all match", "连续三次以不同的形状调用，结果都一致"),
    (r"three calls with different (?P<C>.+?) in a row all match", "连续三次以不同的 {C} 调用，结果都一致"),
    (r"shapes only", "只检查形状"),
    (r"no stale cached mask", "没有沿用过期的缓存掩码"),
    (r"no stale cached slopes or bias", "没有沿用过期的缓存斜率或偏置"),
    (r"(?P<n>\d+) experts", "{n} 个专家"),
    (r"(?P<n>\d+) parameters", "{n} 个参数"),
    (r"chunks of (?P<l>[\d, ]+)", "各块长度 {l}"),
    (r"slopes (?P<l>[\d., ]+?)(?P<more>, \.\.\.)?", "斜率 {l}{more}"),
    (r"block_table and context_lens (?P<d>int\d+), as vLLM's", "block_table 和 context_lens 为 {d}，与 vLLM 一致"),
    (r"base without bias", "基础层无偏置"),
    (r"with a base bias", "基础层带偏置"),
    (r"without a base bias", "基础层无偏置"),
    (r"step (?P<n>\d+)", "第 {n} 步"),
    (r"steps (?P<a>\d+) to (?P<b>\d+)", "第 {a} 到 {b} 步"),
    (r"one step", "一步"),
    (r"two steps", "两步"),
    (r"param a leaf that requires grad \(an nn\.Parameter\)", "`param` 是需要梯度的叶子张量（nn.Parameter）"),
    (r"zero gradients", "零梯度"),
    (r"gradients from (?P<a>%N) to (?P<b>%N) and their squares", "梯度从 {a} 到 {b} 及其平方"),
    (r"gradients from (?P<a>%N) to (?P<b>%N)", "梯度从 {a} 到 {b}"),
    (r"near eps", "接近 eps"),
    (r"a parameter with grad None in the list", "列表里有一个 `grad` 为 None 的参数"),
    (r"parameter (?P<n>\d+)'s clipped grad", "参数 {n} 裁剪后的梯度"),
    (r"sample (?P<n>\d+)", "样本 {n}"),
    (r"sample (?P<n>\d+) \(length (?P<k>\d+)\)", "样本 {n}（长度 {k}）"),
    (r"sample (?P<n>\d+) \(context length (?P<k>\d+)\)", "样本 {n}（上下文长度 {k}）"),
    (r"lengths (?P<s>%S)", "长度 {s}"),
    (r"beam (?P<n>\d+)", "束宽 {n}"),
    (r"distribution (?P<n>\d+)", "第 {n} 个分布"),
    (r"trial (?P<n>\d+)", "第 {n} 次试验"),
    (r"row (?P<n>\d+)", "第 {n} 行"),
    (r"position (?P<n>\d+)", "位置 {n}"),
    (r"position (?P<n>\d+), dim (?P<k>-?\d+)", "位置 {n} 的第 {k} 维"),
    (r"(?P<n>\d+) trials with drafts from q", "{n} 次试验，草稿 token 从 q 采样"),
    (r"y at router logits ~(?P<n>%N)", "路由 logits 量级 ~{n} 时的 y"),
    (r"aux_loss at router logits ~(?P<n>%N)", "路由 logits 量级 ~{n} 时的 aux_loss"),
    (r"router logits ~(?P<n>%N)", "量级 ~{n} 的路由 logits"),
    (r"d (?P<a>[\w.\[\]]+) / d (?P<b>[\w.\[\]]+)", "`d {a} / d {b}`"),
    (r"(?P<c>d[a-z]+) \((?P<M>.+)\)", "{c}（{M}）"),
    (r"loss at log-ratios of a few units", "对数比为几个单位时的损失"),
    (r"loss at logits ~(?P<a>%N), spread ~(?P<b>%N)", "logits 量级 ~{a}、离散程度 ~{b} 时的损失"),
    (r"loss at margins ~±(?P<n>%N)", "间隔约 ±{n} 时的损失"),
    (r"loss with (?P<a>\d+) of (?P<b>\d+) targets ignored", "{b} 个目标中忽略 {a} 个时的损失"),
    (r"loss with one group of equal rewards", "有一组奖励全部相等时的损失"),
    (r"margins of several hundred", "几百的间隔"),
    (r"a (?P<d>\w+) 0/1 mask", "{d} 的 0/1 掩码"),
    (r"old = logps", "`old = logps`"),
    (r"merged weight", "合并后的权重"),
    (r"scale \(absmax / (?P<n>\d+) per row\)", "`scale`（每行 `absmax / {n}`）"),
    (r"(?P<s>%S) (?P<d>b?float\d+)", "{s}，{d}"),
    (r"the cache is the latent (?P<C>\w+) (?P<s>%S)", "缓存的是潜变量 {C} {s}"),
    (r"the cache is (?P<M>.+), not the latent (?P<C>\w+) (?P<s>%S)", "缓存是{M}，而不是潜变量 {C} {s}"),
    (r"a tensor of shape (?P<s>%S)", "形状为 {s} 的张量"),
    (r"a (?P<k>tuple|list|dict) of (?P<n>\d+) holding (?P<s>\[.*\])", "含 {n} 个元素的 `{k}`（形状 {s}）"),
    ((r"the cache holds the latent (?P<C>\w+)'s values, but as (?P<M>.+), not as (?P<C2>\w+) (?P<s>%S): "
      r"the contract's cache is c_kv \[B, P \+ n, d_latent\]"),
     "缓存里确实是潜变量 {C} 的值，但存成了{M}，而不是 {C2} {s}：题目约定缓存就是 `c_kv [B, P + n, d_latent]`"),
    ((r"the cache holds the latents of the last (?P<n>\d+) tokens only, not all (?P<m>\d+): "
      r"new latents replace the cache instead of being appended"),
     "缓存只留下了最后 {n} 个 token 的潜变量，而不是全部 {m} 个：新的潜变量替换了缓存，而不是追加在后面"),
    (r"K and V cached instead\?", "是不是缓存了 K 和 V？"),
    (r"kept set exact \((?P<a>\d+) of (?P<b>\d+) tokens\)", "保留的集合完全正确（{b} 个 token 中保留 {a} 个）"),
    (r"values", "数值"),
    (r"in a chunk after (?P<n>\d+) cached tokens, (?P<M>.+)", "在已缓存 {n} 个 token 之后的一块中，{M}"),
    # --- the learning-rate schedule ---
    (r"called with keyword arguments", "以关键字参数调用"),
    (r"warmup", "预热"),
    (r"cosine decay", "余弦衰减"),
    (r"(?P<a>\w+) warmup, (?P<b>\w+) decay", "预热 {a} 步、衰减 {b} 步"),
    (r"flat min_lr after total_steps", "total_steps 之后保持 min_lr"),
    (r"max_lr at step warmup_steps", "第 warmup_steps 步为 max_lr"),
    (r"min_lr at step total_steps", "第 total_steps 步为 min_lr"),
    (r"min_lr omitted \((?P<n>%N)\)", "省略 min_lr（取 {n}）"),
    (r"\(max_lr \+ min_lr\) / 2 halfway", "中点为 (max_lr + min_lr) / 2"),
    (r"warmup_steps=(?P<n>\d+) \(step (?P<k>\d+) is max_lr\)", "`warmup_steps={n}`（第 {k} 步即为 max_lr）"),
    (r"(?P<n>\d+) steps exact", "{n} 步完全正确"),
    (r"returns one number per step", "每一步返回一个数"),
    (r"rises during warmup, never rises after, stays within \[min_lr, max_lr\] \(steps (?P<a>\d+)\.\.(?P<b>\d+)\)",
     "预热时上升，之后不再上升，始终在 [min_lr, max_lr] 之内（第 {a}..{b} 步）"),
    (r"(?P<v>%N) after (?P<p>%N) at step (?P<k>\d+): the decay must never rise", "第 {k} 步为 {p}，之后却是 {v}：衰减阶段不能回升"),
    (r"(?P<v>%N) is outside \[min_lr, max_lr\]", "{v} 超出了 [min_lr, max_lr]"),
    (r"step (?P<n>\d+) \((?P<M>[^()]+)\): expected (?P<e>%N), got (?P<g>%N)", "第 {n} 步（{M}）：应为 {e}，得到 {g}"),
    # --- rules: torch's own functions, the projection layout, the contract ---
    (r"no call to torch's own (?P<M>.+) in the launcher", "启动函数里没有调用 torch 自带的{M}"),
    (r"no call to torch's own (?P<M>.+)", "没有调用 torch 自带的{M}"),
    (r"attention", "注意力"),
    (r"autograd or attention", "autograd 或注意力"),
    (r"cross-entropy", "交叉熵"),
    (r"gradient clipping", "梯度裁剪"),
    (r"layer norm", "层归一化"),
    (r"learning-rate schedulers", "学习率调度器"),
    (r"optimizer \(Adam / AdamW\)", "优化器（Adam / AdamW）"),
    (r"quantization", "量化"),
    (r"calls (?!with )(?P<F>.+)", "调用了 {F}"),
    (r"uses (?P<F>.+) \(allowed by --allow-builtins\)", "用了 {F}（`--allow-builtins` 允许）"),
    (r"at the aten level", "在 `aten` 层"),
    (r"functional (?P<C>\w+)", "函数式 {C}"),
    (r"(?P<C>[\w.]+) or (?P<C2>[\w.]+)", "{C} 或 {C2}"),
    (r"(?P<C>[\w.]+); (?P<C2>[\w.]+), (?P<C3>\w+) and (?P<C4>\w+) call it", "{C}；{C2}、{C3} 和 {C4} 内部也会调用它"),
    (r"(?P<C>\w+(?:, \w+)*), \.\.\.", "{C} 等"),
    (r"(?P<c>\w+\([^()]*\)) built (?P<M>.+)", "`{c}`{M}"),
    (r"called as the contract says", "按约定构建并调用"),
    (r"from a config object \(nanoGPT / Hugging Face names\)", "由配置对象构建（nanoGPT / Hugging Face 的命名）"),
    (r"with arguments by name: (?P<C>.+?); forward\(query, key, value, mask\) called as forward\(x, x, x, mask\)",
     "按参数名构建：{C}；`forward(query, key, value, mask)` 以 `forward(x, x, x, mask)` 调用"),
    (r"with arguments by name: (?P<C>.+)", "按参数名构建：{C}"),
    (r"separate (?P<C>[\w./]+) \+ (?P<C2>[\w.]+)", "分开的 {C} + {C2}"),
    (r"fused (?P<C>\w+) \+ (?P<C2>\w+)", "融合的 {C} + {C2}"),
    (r"attention on the block \((?P<M>.+)\)", "注意力层就是模块本身（{M}）"),
    (r"(?P<C>\w+) \((?P<M>(?:fused|separate) .+)\)", "{C}（{M}）"),
    (r"(?P<a>[\w.]+) -> (?P<b>[\w-]+) -> (?P<c>[\w.]+)", "`{a} -> {b} -> {c}`"),
    (r"gate (?P<C>\w+), up (?P<C2>\w+), down (?P<C3>\w+) \(bias-free\)", "门控 {C}，上投影 {C2}，下投影 {C3}（无偏置）"),
    (r"base (?P<C>\w+), A (?P<C2>\w+) (?P<s>%S), B (?P<C3>\w+) (?P<t>%S)", "基础层 {C}，A 为 {C2} {s}，B 为 {C3} {t}"),
    (r"router (?P<C>\w+) (?P<s>%S), (?P<n>\d+) experts", "路由层 {C} {s}，{n} 个专家"),
    (r"W_q, W_dkv \(d_latent (?P<n>\d+)\), W_uk, W_uv, W_o", "`W_q`、`W_dkv`（d_latent {n}）、`W_uk`、`W_uv`、`W_o`"),
    (r"dq (?P<a>%S), dk (?P<b>%S), dv (?P<c>%S)", "dq {a}，dk {b}，dv {c}"),
    (r"r = (?P<n>\d+): output (?P<s>%S)", "r = {n}：输出 {s}"),
    (r"top_k (?P<n>\d+): y (?P<s>%S), a 0-dim aux_loss", "top_k {n}：y 为 {s}，aux_loss 为 0 维"),
    (r"a 0-dim loss from (?P<M>.+)", "由{M}得到 0 维损失"),
    (r"a 0-dim loss and rewards (?P<s>%S) from a batch of (?P<n>\d+)", "由大小为 {n} 的一批数据得到 0 维损失和奖励 {s}"),
    (r"(?P<s>%S) inputs", "{s} 输入"),
    (r"(?P<s>%S) inputs, a (?P<d>\w+) 0/1 mask", "{s} 输入和 {d} 的 0/1 掩码"),
    (r"\(tokens, score\): (?P<n>\d+) ids and a number", "`(tokens, score)`：{n} 个 id 和一个数"),
    (r"(?P<n>\d+) token ids, (?P<d>int\d+) tensor", "{n} 个 token id，{d} 张量"),
    ((r"(?P<C>\w+) does not fit the (?P<C2>\w+) contract: expected (?P<e>\w+\([^()]*\)) with (?P<f>forward\([^()]*\)); "
     r"your file defines (?P<g>\w+\([^()]*\)) with (?P<h>forward\([^()]*\)); (?P<M>.+) \(also accepted: (?P<M2>.+)\)"),
     "{C} 不符合 {C2} 题的约定：应为 `{e}`，带 `{f}`；你的文件定义的是 `{g}`，带 `{h}`；{M}（也接受：{M2}）"),
    ((r"parameters by name \(embed_dim/hidden_size/n_embd, num_heads/n_head/h, block_size, dropout, \.\.\.\), one config object "
     r"\(nanoGPT: n_embd, n_head, block_size, dropout, bias; Hugging Face: hidden_size, num_attention_heads, num_key_value_heads\), "
     r"and forward\(query, key, value, mask\)"),
     ("按参数名传参（embed_dim/hidden_size/n_embd、num_heads/n_head/h、block_size、`dropout` 等）、一个配置对象（nanoGPT：n_embd、"
     "n_head、block_size、`dropout`、`bias`；Hugging Face：hidden_size、num_attention_heads、num_key_value_heads），以及 "
     "`forward(query, key, value, mask)`")),
    (r"forward requires nothing", "`forward` 不需要参数"),
    (r"forward requires (?P<C>.+)", "`forward` 需要 {C}"),
    (r"building it as \((?P<a>.*)\) raised (?P<e>\w+): (?P<t>.+)", "以 ({a}) 构建时抛出了 {e}：{t}"),
    (r"building it from a config object raised (?P<e>\w+): (?P<t>.+)", "由配置对象构建时抛出了 {e}：{t}"),
    (r"unrecognised (?P<M>projection |block )?layout; accepted: (?P<M2>.+)", "无法识别的{M}布局；可接受的有：{M2}"),
    (r"projection ", "投影层"),
    (r"block ", " block "),
    (r"skipped: no reference without a recognised (?:projection )?layout", "跳过：层布局无法识别，没有可对照的参考实现"),
    ((r"separate Linear layers W_q, W_k, W_v with W_o; or q_proj, k_proj, v_proj with o_proj or out_proj; or wq, wk, wv with wo; "
     r"or query, key, value with out or dense; or q, k, v with out, o or proj; "
     r"or one fused Linear\(d_model, 3\*d_model\) named qkv or c_attn \(split q, k, v\) "
     r"with an output Linear named out, o_proj, out_proj, c_proj, W_o or proj; "
     r"or a ModuleList of four Linear\(d_model, d_model\) named linears \(q, k, v, out\)"),
     ("分开的 `Linear` 层 `W_q`、`W_k`、`W_v` 加 `W_o`；或 q_proj、k_proj、v_proj 加 o_proj 或 out_proj；或 wq、wk、wv 加 wo；"
     "或 `query`、`key`、`value` 加 `out` 或 `dense`；或 q、k、v 加 `out`、o 或 `proj`；"
     "或一个融合的 `Linear(d_model, 3*d_model)`，名为 `qkv` 或 c_attn（拆成 q、k、v），输出层是名为 `out`、o_proj、out_proj、c_proj、`W_o` 或 `proj` "
     "的 `Linear`；或名为 `linears` 的 `ModuleList`，由四个 `Linear(d_model, d_model)` 组成（q、k、v、`out`）")),
    ((r"separate Linear layers q_proj, k_proj, v_proj with o_proj or out_proj, W_q, W_k, W_v with W_o, or wq, wk, wv with wo \(bias optional\); "
     r"q_proj and o_proj are d_model x d_model, k_proj and v_proj d_model -> n_kv_heads \* head_dim"),
     ("分开的 `Linear` 层 q_proj、k_proj、v_proj 加 o_proj 或 out_proj，`W_q`、`W_k`、`W_v` 加 `W_o`，或 wq、wk、wv 加 wo（`bias` 可有可无）；"
     "q_proj 和 o_proj 为 d_model × d_model，k_proj 和 v_proj 为 d_model -> n_kv_heads * head_dim")),
    ((r"nn\.Linear layers W_q \(d_model -> d_model\), W_dkv \(d_model -> d_latent\), W_uk and W_uv \(d_latent -> d_model\) "
     r"and W_o \(d_model -> d_model\), bias optional"),
     ("`nn.Linear` 层 `W_q`（d_model -> d_model）、`W_dkv`（d_model -> d_latent）、`W_uk` 和 `W_uv`（d_latent -> d_model）"
     "以及 `W_o`（d_model -> d_model），`bias` 可有可无")),
    ((r"bias-free nn\.Linear layers w1 \(gate, d_model -> d_ff\), w3 \(up, d_model -> d_ff\) and w2 \(down, d_ff -> d_model\), "
     r"or gate_proj, up_proj and down_proj"),
     ("无偏置的 `nn.Linear` 层 w1（门控，d_model -> d_ff）、w3（上投影，d_model -> d_ff）和 w2（下投影，d_ff -> d_model），"
     "或 gate_proj、up_proj 和 down_proj")),
    # --- passes: independence, causality, invariances ---
    (r"a new sequence \(cache=None\) on a used module equals it on a fresh one", "在用过的模块上开始新序列（`cache=None`），结果与在新模块上相同"),
    (r"each of the (?P<n>\d+) rows depends on itself alone \((?P<d>\w+)\)", "{n} 行中的每一行都只依赖它自己（{d}）"),
    (r"each of the (?P<n>\d+) rows is quantized from itself alone \((?P<d>\w+)\)", "{n} 行中的每一行都只由它自己量化（{d}）"),
    (r"each of the (?P<n>\d+) elements updates from its own gradient and state alone \((?P<d>\w+)\)",
     "{n} 个元素中的每一个都只由它自己的梯度和状态更新（{d}）"),
    (r"each of the (?P<n>\d+) experts moves exactly the tokens routed to it \((?P<d>\w+)\)", "{n} 个专家中的每一个恰好只影响路由给它的 token（{d}）"),
    (r"each example's rewards depend on its own log-probs alone \((?P<d>\w+)\)", "每个样本的奖励只依赖它自己的对数概率（{d}）"),
    (r"(?P<d>\w+): changing one entry moves only its own slice along dim", "{d}：改动一个元素只影响它自己沿 `dim` 的那一片"),
    (r"perturbing future tokens never moves earlier outputs", "扰动未来的 token 不会改变之前的输出"),
    (r"perturbing future keys never moves earlier outputs", "扰动未来的 key 不会改变之前的输出"),
    (r"perturbing future keys and values never moves earlier outputs", "扰动未来的 key 和 value 不会改变之前的输出"),
    (r"perturbing x\[t\] moves out\[t\] and no other row", "扰动 x[t] 只改变 `out[t]`，不影响其他行"),
    (r"changing query i moves output i only", "改动 query i 只改变输出 i"),
    (r"padded (?P<M>keys|positions|context positions|and future keys) \(lengths (?P<l>[\d, ]+)\) never reach (?P<M2>an output|a real position)",
     "填充的{M}（长度 {l}）不会影响{M2}"),
    (r"keys", "key"),
    (r"positions", "位置"),
    (r"context positions", "上下文位置"),
    (r"and future keys", "和未来的 key"),
    (r"an output", "任何输出"),
    (r"a real position", "真实位置"),
    (r"padded keys \(lengths (?P<l>[\d, ]+)\) get dk = dv = 0 and never move dq", "填充的 key（长度 {l}）得到 dk = dv = 0，也不会影响 dq"),
    (r"(?P<M>causal \+ padding|padding) masks equal the reference for (?P<n>\d+) length sets", "{n} 组长度下，{M}掩码都与参考实现一致"),
    (r"causal \+ padding", "因果 + 填充"),
    (r"padding", "填充"),
    (r"every query row allows at least one key", "每个 query 行都至少允许一个 key"),
    (r"the (?P<n>\d+) (?P<M>ignored|padded) positions never reach the loss or its gradient \((?P<d>\w+)\)",
     "{n} 个{M}位置不会影响损失及其梯度（{d}）"),
    (r"ignored", "被忽略的"),
    (r"padded", "填充"),
    (r"with NaN keys and inf values in the garbage slots, the output is non-finite at (?P<at>%S)",
     "垃圾槽位里放入为 NaN 的 key 和为 inf 的 value 后，输出在 {at} 处非有限"),
    (r"NaN keys and inf values in the garbage slots never reach the output", "垃圾槽位里为 NaN 的 key 和为 inf 的 value 不会进入输出"),
    (r"(?P<n>\d+) blocks x (?P<k>\d+) slots: each moves only its own sequence's output, garbage none",
     "{n} 个块 × 每块 {k} 个槽位：每个块只影响自己序列的输出，垃圾槽位不影响任何输出"),
    (r"(?P<c>\w+)=(?P<n>\d+), n_splits=(?P<k>\d+): every key moves its own sample's output and no other sample's",
     "`{c}={n}, n_splits={k}`：每个 key 只影响它自己样本的输出，不影响其他样本"),
    (r"largest tensor (?P<n>\d+) elements \(< (?P<k>\d+) = T x T\)", "最大的张量有 {n} 个元素（< {k} = T × T）"),
    (r"every position within its (?P<d>\w+) tolerance \(allowed (?P<a>%N) at t=(?P<i>\d+), (?P<b>%N) at t=(?P<j>\d+)\)",
     "每个位置都在 {d} 的容差内（t={i} 处允许 {a}，t={j} 处允许 {b}）"),
    (r"got (?P<g>%N), expected (?P<e>%N) \(error (?P<x>%N), allowed (?P<a>%N) at this position\)",
     "得到 {g}，应为 {e}（误差 {x}，此位置允许 {a}）"),
    (r"every pair \(2i, 2i\+1\) is \(sin, cos\) of one angle \(sin\^2 \+ cos\^2 = 1\)", "每一对 (2i, 2i+1) 都是同一角度的 (sin, cos)（sin^2 + cos^2 = 1）"),
    (r"position (?P<n>\d+) is exactly (?P<s>.+)", "位置 {n} 恰好是 {s}"),
    (r"position (?P<n>\d+) is (?P<s>%S), expected (?P<e>sin\(\d+\), cos\(\d+\)) = (?P<t>.+)", "位置 {n} 是 {s}，应为 {e} = {t}"),
    (r"dims (?P<a>\d+) and (?P<b>\d+) give sin\^2 \+ cos\^2 = (?P<v>%N), not 1", "第 {a}、{b} 维给出 sin^2 + cos^2 = {v}，不是 1"),
    (r"they are not sin and cos of one angle", "它们不是同一角度的 sin 和 cos"),
    (r"(?P<c>\w+)\((?P<a>\d+), (?P<b>\d+)\)\[:(?P<k>\d+)\] equals (?P=c)\((?P<d>\d+), (?P=b)\)", "{c}({a}, {b})[:{k}] 等于 {c}({d}, {b})"),
    (r"q\.k depends only on m - n \(drift (?P<n>%N), allowed (?P<a>%N), (?P<d>\w+)\)", "q.k 只依赖 m - n（漂移 {n}，允许 {a}，{d}）"),
    (r"q\.k changes by (?P<n>%N) when both positions shift by (?P<k>\d+) \((?P<d>\w+); allowed (?P<a>%N)\): it must depend on m - n only",
     "两个位置同时平移 {k} 后 q.k 变了 {n}（{d}；允许 {a}）：它只能依赖 m - n"),
    (r"norms preserved to (?P<n>%N) \((?P<d>\w+); allowed (?P<a>%N)\)", "范数保持不变，误差 {n}（{d}；允许 {a}）"),
    (r"the rotation changes a vector's norm by up to (?P<n>%N) \((?P<d>\w+); allowed (?P<a>%N)\)", "旋转使向量的范数最多变了 {n}（{d}；允许 {a}）"),
    (r"eps = (?P<a>%N) \(causal\) and (?P<b>%N) \(not\) are added to the normaliser", "eps = {a}（因果）和 {b}（非因果）都加在了归一化项上"),
    (r"base frozen \(no gradient\)", "基础层已冻结（没有梯度）"),
    (r"after merged\(\), the base weight and the forward pass are unchanged", "调用 merged() 之后，基础层的权重和前向结果都没有变"),
    (r"at init the output is base\(x\) exactly \(B = 0\), A random \((?P<d>\w+)\)", "初始化时输出恰好是 base(x)（B = 0），A 为随机值（{d}）"),
    (r"with every expert identical, y = expert\(x\) for every token: the weights sum to 1 \((?P<d>\w+)\)",
     "所有专家都相同时，每个 token 的 y = expert(x)：权重之和为 1（{d}）"),
    (r"with every expert identical, y = expert\(x\) for every token to (?P<n>%N): the weights sum to 1",
     "所有专家都相同时，每个 token 的 y 与 expert(x) 相差不超过 {n}：权重之和为 1"),
    (r"computed in float32 within a float64 check: judged at float32, the precision the code chose \((?P<C>.+)\)",
     "在 float64 检查里用 float32 计算（{C}）：按代码自己选的精度 float32 判定"),
    (r"computed in float32 within a float64 check: judged at float32, the precision the code chose",
     "在 float64 检查里用 float32 计算：按代码自己选的精度 float32 判定"),
    (r"all-zero gradients stay zero, total_norm (?P<n>%N)", "全零梯度仍为零，total_norm 为 {n}"),
    (r"grad unchanged by each of (?P<n>\d+) calls, bit for bit", "{n} 次调用都没有改动 `grad`，逐位相同"),
    (r"every grad unchanged, bit for bit", "所有 `grad` 都没有变，逐位相同"),
    (r"an all-zero row gives zeros, finite", "全零行输出全零，结果有限"),
    (r"an all-zero row: q = 0, a finite scale, zeros back", "全零行：q = 0，`scale` 有限，反量化回来仍是零"),
    (r"rows of equal values give the bias, finite", "元素全相等的行输出 `bias`，结果有限"),
    (r"q in \[-127, 127\], every row's absmax at ±127 \(exact\)", "q 在 [-127, 127] 内，每行绝对值最大的元素都映射到 ±127（精确）"),
    (r"every row's error within its bound \(worst (?P<n>%N) scale\)", "每行的误差都在界内（最差为 {n} 个 `scale`）"),
    (r"(?P<n>\d+) bytes -> (?P<k>\d+) ids, exact", "{n} 个字节 -> {k} 个 id，完全正确"),
    (r"(?P<n>\d+) merges exact", "{n} 次合并完全正确"),
    (r"(?P<n>\d+) merges exact \((?P<M>.+)\)", "{n} 次合并完全正确（{M}）"),
    (r"either tie rule", "两种平局规则都可以"),
    (r"ties to the first pair", "平局取最先出现的一对"),
    (r"ties to the smallest pair", "平局取最小的一对"),
    (r"merges as lists or tuples give the same ids", "`merges` 无论是列表还是元组，得到的 id 都相同"),
    (r"encode\(''\) is \[\], encode\('(?P<a>.)'\) its two UTF-8 bytes", "encode('') 为 []，encode('{a}') 为它的两个 UTF-8 字节"),
    (r"your (?P<n>\d+) merges and (?P<k>\d+) ids decode back to the text's (?P<b>\d+) bytes", "你的 {n} 次合并和 {k} 个 id 解码后正是文本的 {b} 个字节"),
    (r"the same seed draws the same ids, another seed other ids", "相同的种子抽出相同的 id，换个种子抽出别的 id"),
    (r"(?P<n>\d+) draws never pick a token whose logit is -inf", "{n} 次抽样从未抽中 logit 为 -inf 的 token"),
    (r"(?P<n>\d+) distributions x (?P<k>\d+) draws match softmax\(logits\) \(smallest chi-square p = (?P<p>%N)\)",
     "{n} 个分布各抽 {k} 次，都符合 softmax(logits)（卡方检验最小 p = {p}）"),
    (r"(?P<n>\d+) trials never emit a token the target gives probability 0", "{n} 次试验从未输出目标概率为 0 的 token"),
    (r"the first token follows p \(chi-square p = (?P<p>%N)\)", "第一个 token 服从 p（卡方检验 p = {p}）"),
    (r"(?P<n>\d+) resamples after a forced rejection follow norm\(max\(0, p - q\)\)", "强制拒绝后的 {n} 次重采样都服从 norm(max(0, p - q))"),
    (r"tokens (?P<s>%S) exact \(every draft accepted \+ bonus\)", "token {s} 完全正确（草稿全部被接受，再加一个额外 token）"),
    (r"tokens (?P<s>%S) exact \(rejection at draft (?P<n>\d+)\)", "token {s} 完全正确（在第 {n} 个草稿处拒绝）"),
    (r"tokens (?P<s>%S) \(finished with eos\), score (?P<v>%N), exact", "token {s}（以 `eos` 结束），得分 {v}，完全正确"),
    (r"tokens (?P<s>%S) \(still live at max_len\), score (?P<v>%N), exact", "token {s}（到 max_len 仍未结束），得分 {v}，完全正确"),
    (r"directional derivative (?P<a>%N) = central difference (?P<b>%N) \((?P<M>.+)\)", "方向导数 {a} = 中心差分 {b}（{M}）"),
    (r"inside a (?P<n>\d+)-token chunk after (?P<k>\d+) cached tokens, no position sees a later one",
     "在已缓存 {k} 个 token 之后的一块 {n} 个 token 中，没有位置能看到它之后的位置"),
    (r"window=(?P<w>\d+), T=(?P<t>\d+) \((?P<d>\w+)\): query i sees exactly keys (?P<r>i-\d+\.\.i)",
     "`window={w}, T={t}`（{d}）：query i 恰好看到 key {r}"),
    (r"causal mask: d_out\[i\] reaches dq\[i\] and dk\[j\], dv\[j\] for j <= i only", "因果掩码：d_out[i] 只影响 dq[i]，以及 j <= i 的 dk[j]、dv[j]"),
    (r"causal mask", "因果掩码"),
    (r"skipped: the output is already wrong with finite garbage \(see the numerical checks\)", "跳过：垃圾值有限时输出就已经错了（见数值检查）"),
    (r"adding one vector to every key moves the output by (?P<n>%N)", "给每个 key 加上同一个向量，输出变化 {n}"),
    (r"adding one vector to every key moved the output by (?P<n>%N) \(allowed (?P<a>%N)\)", "给每个 key 加上同一个向量，输出变了 {n}（允许 {a}）"),
    (r"(?P<M>a transposed \(non-contiguous\) input gives|non-contiguous inputs give) a different output than (?:its|their) contiguous cop(?:y|ies)",
     "非连续（转置过的）输入与它的连续副本给出的输出不同"),
    # --- failures: what a query sees, what moves what ---
    (r"query (?P<i>\d+) sees padded key (?P<j>\d+)", "query {i} 看到了填充的 key {j}"),
    (r"query (?P<i>\d+) sees padded key (?P<j>\d+) \(moved (?P<n>%N)\)", "query {i} 看到了填充的 key {j}（输出变化 {n}）"),
    (r"query (?P<i>\d+) sees future key (?P<j>\d+)", "query {i} 看到了未来的 key {j}"),
    (r"query (?P<i>\d+) sees padded context position (?P<j>\d+)", "query {i} 看到了填充的上下文位置 {j}"),
    (r"query (?P<i>\d+) may attend to no key \(softmax gives NaN\)", "query {i} 没有任何可关注的 key（softmax 会得到 NaN）"),
    (r"position (?P<i>\d+) sees padded position (?P<j>\d+)", "位置 {i} 看到了填充位置 {j}"),
    (r"dk of padded key (?P<j>\d+) is (?P<n>%N), not 0", "填充的 key {j} 的 dk 为 {n}，不是 0"),
    (r"position (?P<i>\d+) changes when future (?P<M>position|key|key/value) (?P<j>\d+) changes", "未来的{M} {j} 一变，位置 {i} 也跟着变了"),
    (r"position (?P<i>\d+) changes when position (?P<j>\d+) changes", "位置 {j} 一变，位置 {i} 也跟着变了"),
    (r"with a causal mask, (?P<M>.+)", "加了因果掩码，{M}"),
    (r"position", "位置"),
    (r"(?P<c>d[kv])\[(?P<j>\d+)\] moves when d_out\[(?P<i>\d+)\] changes \(moved (?P<n>%N)\)", "d_out[{i}] 一变，{c}[{j}] 也跟着变了（变化 {n}）"),
    (r"only keys j <= (?P<n>\d+) may", "只有 j <= {n} 的 key 可以影响它"),
    (r"query (?P<i>\d+) sees key (?P<j>\d+) \(a future key; it may see (?P<r>\d+\.\.\d+)\)", "query {i} 看到了 key {j}（这是未来的 key；它只能看到 {r}）"),
    (r"query (?P<i>\d+) sees key (?P<j>\d+) \(a key (?P<n>\d+) positions back, outside the window; it may see (?P<r>\d+\.\.\d+)\)",
     "query {i} 看到了 key {j}（往前 {n} 个位置，在窗口之外；它只能看到 {r}）"),
    (r"d out\[(?P<i>\d+)\] / d x\[(?P<j>\d+)\] is (?P<v>%N), not 0: position (?P=i) sees (?P=j)",
     "`d out[{i}] / d x[{j}]` 为 {v}，不是 0：位置 {i} 看到了位置 {j}"),
    (r"d out\[(?P<i>\d+)\] / d x\[(?P<j>\d+)\] is 0: position (?P=i) cannot see position (?P=j)",
     "`d out[{i}] / d x[{j}]` 为 0：位置 {i} 看不到位置 {j}"),
    (r"sample (?P<s>\d+) position (?P<i>\d+) depends on sample (?P<o>\d+)", "样本 {s} 的位置 {i} 依赖于样本 {o}"),
    (r"changing x\[(?P<i>\d+)\] moves out\[(?P<j>\d+)\]: query rows must not mix", "改动 x[{i}] 改变了 `out[{j}]`：query 行之间不能相互混合"),
    (r"changing row (?P<a>%S) moved row (?P<b>%S) by (?P<n>%N) \((?P<d>\w+)\): each row must be computed from itself alone",
     "改动行 {a} 使行 {b} 变了 {n}（{d}）：每一行只能由它自己算出"),
    (r"changing x(?P<a>%S) moves the slice at (?P<b>%S) \(by (?P<n>%N)\): each slice along dim must be normalised on its own",
     "改动 x{a} 改变了 {b} 处的那一片（变化 {n}）：沿 `dim` 的每一片必须各自归一化"),
    ((r"changing grad element (?P<a>\d+) moved param element (?P<b>\d+) by (?P<n>%N) \((?P<d>\w+)\): "
     r"each element's update depends on its own gradient and state alone"),
     "改动 `grad` 的第 {a} 个元素使 `param` 的第 {b} 个元素变了 {n}（{d}）：每个元素的更新只能依赖它自己的梯度和状态"),
    ((r"changing expert (?P<e>\d+) moved token (?P<t>\d+)'s y by (?P<n>%N), though token (?P=t) is routed to experts (?P<s>%S): "
     r"a token's output may only come from its top-(?P<k>\d+) experts"),
     "改动专家 {e} 使 token {t} 的 y 变了 {n}，但 token {t} 被路由到的是专家 {s}：token 的输出只能来自它的 top-{k} 个专家"),
    (r"changing the log-probs at the (?P<n>\d+) padded positions moved the loss by (?P<v>%N): padding must not reach the loss",
     "改动 {n} 个填充位置的对数概率使损失变了 {v}：填充不能影响损失"),
    (r"changing the logits of the ignored position (?P<s>%S) moved the loss by (?P<v>%N)", "改动被忽略位置 {s} 的 logits 使损失变了 {v}"),
    ((r"scaling row (?P<a>\d+) by (?P<k>%N) changed row (?P<b>\d+)'s scale or q: each row is quantized on its own "
     r"\(absmax over dim 1, the input dim\)"),
     "把第 {a} 行放大 {k} 倍改变了第 {b} 行的 `scale` 或 q：每一行必须各自量化（在第 1 维即输入维上取绝对值最大值）"),
    (r"key (?P<k>\d+) of sample (?P<s>\d+) never reaches its output \((?P<M>.+)\)", "样本 {s} 的 key {k} 没有进入它的输出（{M}）"),
    (r"token (?P<t>\d+) of sequence (?P<s>\d+) \(block (?P<b>\d+), slot (?P<l>\d+)\) never reaches its output",
     "序列 {s} 的 token {t}（块 {b}，槽位 {l}）没有进入它的输出"),
    (r"sequence (?P<s>\d+) \(context_lens (?P<n>\d+)\) reads block (?P<b>\d+), slot (?P<l>\d+): (?P<M>.+?) \(moved (?P<v>%N)\)",
     "序列 {s}（context_lens {n}）读了块 {b} 的槽位 {l}：{M}（输出变化 {v}）"),
    (r"a slot no sequence holds \(past a context length, or a block past the table's used entries\)",
     "这个槽位不属于任何序列（超出了上下文长度，或块号超出了块表中已用的部分）"),
    (r"token (?P<t>\d+) of sequence (?P<s>\d+)", "序列 {s} 的 token {t}"),
    (r"lengths (?P<s>%S), T=(?P<t>\d+): mask(?P<i>%S) is False \(query (?P<q>\d+) may not attend key (?P<k>\d+)\)",
     "长度 {s}，`T={t}`：`mask{i}` 为 False（query {q} 不能关注 key {k}）"),
    (r"lengths (?P<s>%S), T=(?P<t>\d+): mask(?P<i>%S) is True \(query (?P<q>\d+) may attend key (?P<k>\d+)\)",
     "长度 {s}，`T={t}`：`mask{i}` 为 True（query {q} 可以关注 key {k}）"),
    ((r"causal=(?P<b>True|False): (?P<C>[\w.]+) produced a tensor of shape (?P<s>%S) \((?P<n>\d+) elements\), at least T x T = (?P<k>\d+) "
     r"with (?P<M>.+): that is quadratic attention"),
     "`causal={b}`：{C} 产生了形状为 {s} 的张量（{n} 个元素），不少于 T × T = {k}（{M}）：这是平方复杂度的注意力"),
    ((r"causal=(?P<b>True|False): (?P<C>[\w.]+) produced a tensor of shape (?P<s>%S) \((?P<n>\d+) elements\), "
     r"at least one head's whole (?P<t>\d+) x (?P=t) score matrix; (?P<M>.+)"),
     "`causal={b}`：{C} 产生了形状为 {s} 的张量（{n} 个元素），至少是一个头完整的 {t} × {t} 分数矩阵；{M}"),
    # --- failures: values ---
    (r"a constant row (?P<i>%S) gives (?P<s>%S), expected the bias \(error (?P<e>%N)\)", "常数行 {i} 输出 {s}，应为 `bias`（误差 {e}）"),
    (r"while the same rows shifted to mean ~0 pass: the variance loses its digits to cancellation",
     "而把同样的行平移到均值 ~0 就能通过：方差在相减抵消时丢了有效数字"),
    (r"while the same rows shifted to mean ~0 are explained by (?P<C>[\w-]+) alone: the variance loses its digits to cancellation",
     "而把同样的行平移到均值 ~0 后，单用 {C} 就能解释：方差在相减抵消时丢了有效数字"),
    (r"a non-finite output at (?P<at>%S)", "{at} 处输出非有限值"),
    (r"the values are right: the result is not cast back", "数值是对的：只是结果没有转回输入的 dtype"),
    (r"the same values in (?P<d>\w+) pass: the statistics are computed in (?P<e>\w+) \(x² above (?P<n>\d+) is inf\)",
     "同样的值用 {d} 就能通过：统计量是用 {e} 算的（x² 超过 {n} 就成了 inf）"),
    ((r"rows with offsets (?P<l>[-+\d., ]+?) \((?P<d>\w+)\): the (?P<r>%N) row comes out as \[nan, nan, nan\]\.\.\.: "
     r"shifted by the whole tensor's max, its exps underflow to 0"),
     "各行分别偏移 {l}（{d}）：偏移 {r} 的那一行输出为 [nan, nan, nan]...：减去的是整个张量的最大值，这一行的 exp 全部下溢成了 0"),
    (r"log\(sigmoid\(x\)\) underflows to log\(0\) for x below about (?P<n>%N)", "x 低于约 {n} 时 log(sigmoid(x)) 下溢为 log(0)"),
    ((r"at init the output differs from base\(x\) by (?P<n>%N) \(B's largest \|weight\| is (?P<w>%N)\): "
     r"B must start at zero, so the adapter starts as the pretrained layer"),
     "初始化时输出与 base(x) 相差 {n}（B 中最大的 `|weight|` 为 {w}）：B 必须初始化为零，这样适配器一开始就等于预训练层"),
    ((r"(?P<C>[\w.]+(?: and [\w.]+)?) received a gradient: the base layer must be frozen \(requires_grad_\(False\) on its weight and bias\), "
     r"only A and B train"), "{C} 收到了梯度：基础层必须冻结（对它的 `weight` 和 `bias` 调用 requires_grad_(False)），只训练 A 和 B"),
    (r"the merged weight has shape (?P<s>%S), nn\.Linear's is \[out, in\] = (?P<e>%S): W \+ \(alpha / r\) \* B\.weight @ A\.weight, not its transpose",
     "合并后的权重形状为 {s}，`nn.Linear` 的是 `[out, in]` = {e}：应为 `W + (alpha / r) * B.weight @ A.weight`，不是它的转置"),
    (r"merged\(\) changed the base layer's weight in place \(max change (?P<n>%N)\): the adapter's forward now adds B A twice; build a new nn\.Linear",
     "merged() 原地改了基础层的权重（最大变化 {n}）：适配器的 `forward` 现在会把 B A 加两次；应新建一个 `nn.Linear`"),
    ((r"with every expert identical, token (?P<t>\d+)'s y is (?P<v>%N) times expert\(x\), not 1: "
     r"each token's routing weights must sum to 1 \(softmax over its top-k logits\)"),
     "所有专家都相同时，token {t} 的 y 是 expert(x) 的 {v} 倍，而不是 1 倍：每个 token 的路由权重之和必须为 1（对它的 top-k logits 做 softmax）"),
    (r"every row got the same scale (?P<s>%N), though the rows' absmax range from (?P<a>%N) to (?P<z>%N): one scale per output channel",
     "每一行都用了同一个 `scale` {s}，而各行绝对值的最大值从 {a} 到 {z} 不等：每个输出通道应有自己的 `scale`"),
    (r"row (?P<r>\d+)'s largest weight (?P<w>%N) \(column (?P<c>\d+)\) has q = (?P<q>%N), not (?P<e>%N): the absmax of each row maps to ±127",
     "第 {r} 行绝对值最大的权重 {w}（第 {c} 列）的 q = {q}，不是 {e}：每一行绝对值最大的元素应映射到 ±127"),
    ((r"row (?P<r>\d+): \|q \* scale - w\| is (?P<v>%N) = (?P<k>%N) scale at column (?P<c>\d+) \(w = (?P<w>%N), q = (?P<q>%N)\); "
     r"allowed (?P<a>%N) \(scale / 2 = (?P<h>%N)\)"),
     "第 {r} 行：第 {c} 列的 `|q * scale - w|` 为 {v} = {k} 个 `scale`（w = {w}，q = {q}）；允许 {a}（`scale / 2` = {h}）"),
    (r"q(?P<i>%S) is (?P<q>%N) for w = (?P<w>%N): w / scale rounded to (?P<n>%N) and the int8 cast wrapped it; clamp to \[-127, 127\] before the cast",
     "w = {w} 时 q{i} 为 {q}：`w / scale` 舍入为 {n}，转成 int8 时溢出回绕了；转换前先 `clamp` 到 [-127, 127]"),
    (r"scale has shape (?P<s>%S): one scale for the whole matrix; expected (?P<a>%S) or (?P<b>%S), one per output channel \(row\)",
     "`scale` 的形状是 {s}：整个矩阵只有一个 `scale`；应为 {a} 或 {b}，每个输出通道（行）一个"),
    (r"the values of parameter (?P<n>\d+) changed: clip p\.grad, never p \(or p\.data\)", "参数 {n} 的值被改了：要裁剪的是 p.grad，不能动 p（或 p.data）"),
    (r"parameter (?P<n>\d+)'s grad was changed \(scaled by (?P<k>%N)\); below max_norm nothing is clipped",
     "参数 {n} 的 `grad` 被改了（乘了 {k}）；低于 max_norm 时什么都不该裁剪"),
    (r"grad was modified in place; the update may only change param, exp_avg and exp_avg_sq",
     "`grad` 被原地修改了；更新只能改 `param`、exp_avg 和 exp_avg_sq"),
    ((r"param, exp_avg, exp_avg_sq unchanged after the call: update the caller's tensors in place "
     r"\(param\.add_, exp_avg\.mul_\(\.\.\.\)\.add_\(\.\.\.\), or \.copy_\); assigning a new tensor to the name changes nothing outside the function"),
     ("调用后 `param`、exp_avg、exp_avg_sq 都没有变：要原地更新调用方的张量（`param.add_`、`exp_avg.mul_(...).add_(...)` 或 `.copy_`）；"
     "把新张量赋给这个名字，函数外面什么都不会变")),
    (r"expected tokens (?P<e>%S) \(score (?P<s>%N)\), got (?P<g>%S)", "应为 token {e}（得分 {s}），得到 {g}"),
    (r"they differ at position (?P<p>\d+)", "两者从位置 {p} 开始不同"),
    (r"its total log-prob is (?P<a>%N), the best hypothesis's (?P<b>%N)", "它的总对数概率为 {a}，最优候选的为 {b}"),
    (r"tokens (?P<s>%S) are right but the score is (?P<v>%N), expected their total log-prob (?P<e>%N)",
     "token {s} 是对的，但得分为 {v}，应为它们的总对数概率 {e}"),
    (r"expected tokens (?P<e>%S), got (?P<g>%S)", "应为 token {e}，得到 {g}"),
    (r"after rejecting draft (?P<n>\d+), the token is drawn from norm\(max\(0, p - q\)\) by inverse CDF with uniforms(?P<i>%S) = (?P<u>%N)",
     "拒绝第 {n} 个草稿之后，应以 `uniforms{i}` = {u} 用逆 CDF 从 norm(max(0, p - q)) 中抽取 token"),
    (r"draft (?P<n>\d+) \(token (?P<t>\d+)\) must be accepted: u = (?P<u>%N) < min\(1, p/q\) = (?P<m>min\(1, [^()]+\))",
     "第 {n} 个草稿（token {t}）应被接受：u = {u} < min(1, p/q) = {m}"),
    ((r"draft (?P<n>\d+) \(token (?P<t>\d+)\) must be rejected \(u = (?P<u>%N) >= p/q = (?P<r>[^()]+?)\), and the token drawn instead comes from "
     r"norm\(max\(0, p - q\)\), where token (?P<k>\d+) has probability (?P<p>%N)"),
     "第 {n} 个草稿（token {t}）应被拒绝（u = {u} >= p/q = {r}），改抽的 token 来自 norm(max(0, p - q))，其中 token {k} 的概率为 {p}"),
    (r"every draft was accepted, so a bonus token from target_probs(?P<i>%S) comes last", "草稿全部被接受，所以最后还应有一个从 target_probs{i} 抽出的额外 token"),
    (r"nothing comes after the token drawn at a rejection", "拒绝时抽出的 token 之后不应再有 token"),
    ((r"rejected draft, uniforms(?P<i>%S) = (?P<u>%N): expected token (?P<e>\d+), got (?P<g>\d+): "
     r"the resample must use norm\(max\(0, p - q\)\) = (?P<s>%S) by inverse CDF"),
     "草稿被拒绝，`uniforms{i}` = {u}：应为 token {e}，得到 {g}：重采样必须用逆 CDF 从 norm(max(0, p - q)) = {s} 中抽取"),
    (r"p\(draft token\) = 0 must reject it and emit one resampled token; got (?P<s>%S)", "草稿 token 的 p 为 0 时应拒绝它，并输出一个重采样的 token；得到 {s}"),
    ((r"beam (?P<b>\d+), max_len (?P<m>\d+): step_fn was asked about prefixes that go on after eos_id (?P<e>\d+) \(eos followed by "
      r"token (?P<t>\d+)\): a finished hypothesis stayed in the beam and was extended, taking a slot that a live hypothesis should have had"),
     "束宽 {b}，max_len {m}：step_fn 被问到了在 `eos_id` {e} 之后还在继续的前缀（`eos` 后面跟着 token {t}）：一个已完成的假设留在了束里并被继续扩展，占掉了本该留给仍在扩展的假设的位置"),
    (r"p\(draft token 0\) = 0 must reject it whatever the uniform \(uniforms\[0\] = (?P<u>%N)\); got (?P<s>%S)",
     "草稿 token 0 的 p 为 0，无论均匀数是多少都应拒绝它（`uniforms[0]` = {u}）；得到 {s}"),
    ((r"over (?P<n>\d+) trials the first token has frequencies (?P<f>%S), the target p is (?P<p>%S) \(chi-square p = (?P<x>%N)\): "
     r"the output does not follow the target distribution"),
     "{n} 次试验中第一个 token 的频率为 {f}，目标 p 为 {p}（卡方检验 p = {x}）：输出不服从目标分布"),
    (r"emitted token (?P<t>\d+) at position (?P<p>\d+), where the target's probability is 0 \(tokens (?P<s>%S)\)",
     "在位置 {p} 输出了 token {t}，而目标在这里的概率为 0（token {s}）"),
    (r"(?P<n>\d+) draws give frequencies (?P<f>%S), softmax\(logits\) is (?P<p>%S) \(chi-square p = (?P<x>%N)\)",
     "{n} 次抽样的频率为 {f}，softmax(logits) 为 {p}（卡方检验 p = {x}）"),
    (r"two calls with generators seeded alike draw different ids: sample must draw from `generator`, not torch's global random state",
     "两次调用的 `generator` 种子相同，抽出的 id 却不同：`sample` 必须从 `generator` 抽样，而不是用 torch 的全局随机状态"),
    (r"kept tokens (?P<k>%S), expected (?P<e>%S) \((?P<M>.+)\)", "保留的 token 为 {k}，应为 {e}（{M}）"),
    (r"keeps (?P<s>%S), which the contract removes", "保留了约定要去掉的 {s}"),
    (r"removes (?P<s>%S), which it keeps", "去掉了约定要保留的 {s}"),
    (r"along a random direction your gradients predict a change of (?P<a>%N), the loss changes by (?P<b>%N) \((?P<M>.+)\)",
     "沿一个随机方向，你的梯度预测损失变化 {a}，实际变化 {b}（{M}）"),
    (r"no gradient reaches (?P<C>[\w.]+) \(is it detached or unused\?\)", "没有梯度传到 {C}（是不是被 `detach()` 了，或者根本没用上？）"),
    (r"no gradient reaches (?P<C>[\w.]+) \(is it detached\?\)", "没有梯度传到 {C}（是不是被 `detach()` 了？）"),
    ((r"a second sequence \(cache=None\) decoded on the same module differs by (?P<n>%N) from the same sequence on a fresh module: "
     r"state kept from the first sequence"),
     "在同一个模块上解码第二个序列（`cache=None`），与在新模块上解码同一序列相差 {n}：第一个序列的状态被保留了下来"),
    (r"decoding your ids gives (?P<a>b'.*') where the text's bytes are (?P<b>b'.*')", "你的 id 解码得到 `{a}`，而文本的字节是 `{b}`"),
    (r"encode returned id (?P<n>\d+), which no merge of train_bpe defines", "`encode` 返回了 id {n}，但 train_bpe 的合并规则里没有它"),
    (r"encode\('(?P<a>.)'\) returned (?P<s>%S), expected its UTF-8 bytes (?P<e>%S)", "encode('{a}') 返回了 {s}，应为它的 UTF-8 字节 {e}"),
    (r"id (?P<i>\d+): expected (?P<e>\d+) = (?P<eb>b'.*?'), got (?P<g>\d+) = (?P<gb>b'.*?') \((?P<n>\d+) ids, expected (?P<k>\d+)\)",
     "id {i}：应为 {e} = `{eb}`，得到 {g} = `{gb}`（共 {n} 个 id，应为 {k} 个）"),
    (r"id (?P<i>\d+): expected (?P<e>\d+) = (?P<eb>b'.*?'), got (?P<g>\d+) = <id (?P=g), not defined yet> \((?P<n>\d+) ids, expected (?P<k>\d+)\)",
     "id {i}：应为 {e} = `{eb}`，得到 {g}，而 id {g} 此时还没有定义（共 {n} 个 id，应为 {k} 个）"),
    (r"merge (?P<n>\d+): expected (?P<e>\(b'.*?', b'.*?'\)), got (?P<g>\(b'.*?', b'.*?'\)) \(ids (?P<a>\(\d+, \d+\)) vs (?P<b>\(\d+, \d+\))\)",
     "第 {n} 次合并：应为 `{e}`，得到 `{g}`（id 分别为 {a} 和 {b}）"),
    # --- Triton kernel tasks (checks/kernels.py, user/kernel_guard.py, tasks/triton_*) ---
    (r"out-of-bounds access", "越界访问"),
    (r"program (?P<p>\([\d, ]+\)) would load from (?P<n>\d+) address(?:es)? outside the tensors it was given, the first (?P<M>.+)",
     "程序 {p} 要从传给它的张量之外的 {n} 个地址读取，第一个{M}"),
    (r"program (?P<p>\([\d, ]+\)) would store to (?P<n>\d+) address(?:es)? outside the tensors it was given, the first (?P<M>.+)",
     "程序 {p} 要向传给它的张量之外的 {n} 个地址写入，第一个{M}"),
    (r"(?P<n>\d+) element\(s\) past the end of (?P<C>\w+) \(shape (?P<s>%S)\)", "位于 {C}（形状 {s}）末尾之后第 {n} 个元素"),
    (r"(?P<n>\d+) element\(s\) before the start of (?P<C>\w+) \(shape (?P<s>%S)\)", "位于 {C}（形状 {s}）开头之前第 {n} 个元素"),
    (r"between the elements of (?P<C>\w+) \(shape (?P<s>%S)\) \(a gap of a strided view\)", "位于 {C}（形状 {s}）的元素之间（跨步视图的空隙）"),
    (r"right at (?P<M>.+?): the kernel only works when the block sizes? divides? (?:the sizes?|T) \(the tail (?:tiles are|block is) dropped\)",
     "{M}时是对的：只有块大小整除尺寸时内核才对（尾部的块被丢掉了）"),
    (r"(?P<v>M, K, N = [\d, ;]+)", "{v}"),
    (r"M, K, N = (?P<a>[\d, ]+) and (?P<b>[\d, ]+)", "M, K, N = {a} 和 {b}"),
    (r"M x N = (?P<a>\d+ x \d+) and (?P<b>\d+ x \d+)", "M x N = {a} 和 {b}"),
    (r"T = (?P<t>\d+)", "T = {t}"),
    (r"T = (?P<a>\d+) and (?P<b>\d+)", "T = {a} 和 {b}"),
    (r"shapes (?P<a>%S) and (?P<b>%S)", "形状 {a} 和 {b}"),
    (r"shapes (?P<s>%S(?:, %S)*) all match", "形状 {s} 全部一致"),
    (r"(?P<a>%S)(?P<Ma>, causal)?, (?P<b>%S)(?P<Mb>, causal)? all match", "{a}{Ma}、{b}{Mb} 全部一致"),
    (r", causal", "（因果）"),
    (r"(?P<M>(?:M, K, N = |%S).+) all match", "{M}全部一致"),
    (r"call (?P<n>\d+) in a row", "连续调用中的第 {n} 次"),
    (r"every load and store stayed inside the tensors", "每次读写都没有越出张量"),
    (r"every tile computed, by the right program", "每个块都由对应的程序算出"),
    (r"the (?P<s>%S) output is right only on (?P<r>%S)", "{s} 的输出只在 {r} 上正确"),
    (r"(?P<M>the %S output is right only on %S) and (?P<M2>the %S output is right only on %S)", "{M}，{M2}"),
    ((r"(?P<M>the %S output .+), the rest never written: the program at \(i, j\) computes tile \(j, i\) \(pid_m and pid_n swapped\), "
      r"right only when the tile grid is square"),
     "{M}，其余部分从未写入：位于 (i, j) 的程序算的是块 (j, i)（`pid_m` 和 `pid_n` 弄反了），只有分块网格是方形时才对"),
    (r"(?P<C>\w) strides (?P<s>\([^()]*\))", "{C} 的步长 {s}"),
    (r"strides (?P<s>\([^()]*\))", "步长 {s}"),
    (r"row-strided input, stride (?P<n>\d+)", "按行跨步的输入，步长 {n}"),
    (r"a row-strided view \(row stride (?P<n>\d+)\) is read outside its rows \((?P<M>.+)\)", "按行跨步的视图（行步长 {n}）被读到了行外（{M}）"),
    (r"read outside the views' elements \((?P<M>.+)\)", "读到了视图的元素之外（{M}）"),
    (r"read outside their elements \((?P<M>.+)\)", "读到了它们的元素之外（{M}）"),
    (r"the kernel takes the row stride to be the row length", "内核把行步长当成了行长度"),
    (r"the kernel takes the strides to be those of contiguous tensors", "内核把步长当成了连续张量的步长"),
    (r"the kernel takes the strides of a contiguous \[B, H, T, D\]", "内核用的是连续 [B, H, T, D] 张量的步长"),
    (r"its contiguous copy is right: the kernel assumes the row stride is the row length \(use x\.stride\(0\)\)",
     "它的连续副本是对的：内核假定行步长等于行长度（应使用 `x.stride(0)`）"),
    (r"the contiguous copies are right: pass (?P<C>.+) to the kernel", "连续副本是对的：把 {C} 传给内核"),
    (r"their contiguous copies are right: the kernel assumes contiguous strides \(use q\.stride\(\)\)",
     "它们的连续副本是对的：内核假定了连续的步长（应使用 `q.stride()`）"),
    (r"q, k, v sliced from a fused (?P<s>%S) qkv and transposed", "q、k、v 从融合的 {s} `qkv` 投影中切出并转置"),
    (r"the kernel computes it, not the launcher", "应由内核计算，而不是启动函数"),
    (r"(?P<C>(?:torch|F|Tensor)\.\w+(?:, (?:torch|F|Tensor)\.\w+)+)", "{C}"),
    (r"softmax \(or exp\)", "softmax（或 exp）"),
    (r"RMSNorm \(or rsqrt, sqrt, pow, mean\)", "RMSNorm（或 `rsqrt`、`sqrt`、`pow`、`mean`）"),
    (r"cumsum, sum or max", "`cumsum`、sum 或 max"),
    (r"matmul \(mm, @, einsum, F\.linear\)", "矩阵乘法（`mm`、`@`、`einsum`、`F.linear`）"),
    (r"attention, softmax, exp or matmul", "注意力、softmax、exp 或矩阵乘法"),
    (r"(?P<d>b?float\d+) output", "{d} 输出"),
    (r"(?P<d>b?float\d+) (?P<s>%S)", "{d} {s}"),
    (r"values ~(?P<n>%N)", "量级 ~{n} 的值"),
    (r"v ~(?P<n>%N)", "v 约为 {n}"),
    ((r"the same operands in (?P<a>\w+) are right: the products are summed in (?P<b>\w+), which keeps (?P<n>\d+) bits "
      r"\(give tl\.dot a (?P<c>\w+) accumulator\)"),
     "同样的操作数换成 {a} 就是对的：乘积是用 {b} 累加的，它只有 {n} 位有效位（给 `tl.dot` 一个 {c} 累加器）"),
    (r"the same rows in (?P<a>\w+) are right: the sum of squares is accumulated in (?P<b>\w+), whose largest value is (?P<n>%N)",
     "同样的行换成 {a} 就是对的：平方和是用 {b} 累加的，{b} 最大只能表示 {n}"),
    (r"the same inputs in (?P<a>\w+) are right: the kernel accumulates in (?P<b>\w+)", "同样的输入换成 {a} 就是对的：内核用 {b} 累加"),
    (r"exp overflowed", "exp 溢出了"),
    (r"logits ~±(?P<n>%N)", "量级 ~±{n} 的 logits"),
    (r"scores ~±(?P<n>%N)", "分数约 ±{n}"),
    (r"finite and right", "结果有限且正确"),
    (r"(?P<c>o|lse)", "`{c}`"),
    (r"(?P<c>o|lse) (?P<s>%S) (?P<d>\w+)", "`{c}` {s} {d}"),
    (r"lse (?P<M>max error .+)", "`lse` {M}"),
    (r"non-finite o at (?P<at>%S), and wrong at ordinary scores too", "{at} 处 `o` 为非有限值，分数大小正常时也不对"),
    (r"non-finite o at (?P<at>%S), right at ordinary scores: exp overflowed", "{at} 处 `o` 为非有限值，分数大小正常时是对的：exp 溢出了"),
    (r"scores rising along the keys", "分数沿键的方向递增"),
    (r"the row max is in a later key block than the first", "行最大值落在第一个键块之后的块里"),
    (r"o is right and lse equals the true one in log2 units \(lse \* log2\(e\)\): lse = m \+ ln\(l\), the natural log",
     "`o` 是对的，`lse` 却等于以 2 为底的真值（`lse * log2(e)`）：`lse = m + ln(l)`，应取自然对数"),
    (r"o is right and lse equals the true one without the row max \(log of l alone\): lse = m \+ ln\(l\), the natural log",
     "`o` 是对的，`lse` 却等于去掉行最大值的真值（只取了 `ln(l)`）：`lse = m + ln(l)`，应取自然对数"),
    (r"no query before (?P<n>\d+) moves when the keys from (?P<m>\d+) on change", "位置 {m} 及之后的键改变时，{n} 之前的 query 都没有变化"),
    (r"query (?P<q>\d+) moves when the keys from position (?P<m>\d+) on change \(it sees the future\)",
     "位置 {m} 及之后的键改变时，query {q} 跟着变了（它看到了未来）"),
    # --- the user's own failures: exceptions, limits, the entry point (battery.py, remote.py, context.py) ---
    (r"returned (?P<M>.+): drill cannot check it", "返回了{M}：drill 无法检查它"),
    (r"gave drill (?P<M>.+), which it cannot check", "交给 drill 的是{M}，drill 无法检查它"),
    (r"\.(?P<C>[\w.]+) is (?P<M>.+): drill cannot check it", "`.{C}` 是{M}：drill 无法检查它"),
    ((r"a (?P<Mw>view|tensor) of (?P<n>[\d,]+) elements \(shape (?P<s>%S), (?P<g>[\d.,]+ GiB) once copied\), "
      r"more than drill reads back \((?P<l>[\d.,]+ GiB)\)"), "一个 {n} 个元素的{Mw}（形状 {s}，复制出来有 {g}），超过了 drill 能读回的上限（{l}）"),
    (r"view", "视图"),
    (r"tensor", "张量"),
    (r"the integer (?P<n>\S+), beyond any tensor's range \(\|n\| < 2\*\*63\)", "整数 {n}，超出了任何张量能表示的范围（|n| < 2**63）"),
    (r"a value nested more than (?P<n>\d+) levels deep", "一个嵌套超过 {n} 层的值"),
    (r"(?P<M>raised .+), in code of yours that drill ran to read what it returned", "{M}——这是 drill 读取返回值时运行的你的代码"),
    (r"(?P<M>raised .+), in code of yours that drill ran to read the module your class built", "{M}——这是 drill 读取你的类构建的模块时运行的你的代码"),
    (r"(?P<M>raised .+), in code of yours that drill ran to read the module it returned", "{M}——这是 drill 读取返回的模块时运行的你的代码"),
    (r"(?P<M>raised .+), in code of yours that drill ran to read an attribute", "{M}——这是 drill 读取属性时运行的你的代码"),
    (r"(?P<M>raised .+), in code of yours that drill ran to set parameters", "{M}——这是 drill 设置参数时运行的你的代码"),
    (r"(?P<M>raised .+), in code of yours that drill ran for the backward pass", "{M}——这是 drill 做反向传播时运行的你的代码"),
    (r"(?P<M>raised .+), in code of yours that drill ran to read a signature", "{M}——这是 drill 读取函数签名时运行的你的代码"),
    (r"(?P<M>raised .+), in code of yours that drill ran to answer a request", "{M}——这是 drill 处理请求时运行的你的代码"),
    (r"raised (?P<e>\w+): <its message could not be printed: __str__ raised (?P<f>\w+)> \(at (?P<M>[^()]*\.py:\d+ in .+)\)",
     "抛出了 {e}（它的消息无法打印：`__str__` 抛出了 {f}）（位置：{M}）"),
    ((r"left drill's side of the process no file descriptor to open \((?P<t>.+); RLIMIT_NOFILE is (?P<n>\d+): "
      r"did your code lower it or leave files open\?\)"), "没给 drill 在该进程里留下可用的文件描述符（{t}；RLIMIT_NOFILE 为 {n}：你的代码调低了它，还是打开的文件没关？）"),
    ((r"raised RuleImportError: the whiteboard rule: a graded file may not import drill or any module of it; write the code yourself "
     r"\(at (?P<M>[^()]*\.py:\d+ in .+)\)"), "违反了白板规则：被评分的文件不能导入 drill 或它的任何模块，代码要自己写（位置：{M}）"),
    (r"raised (?P<e>\w+) \(at (?P<M>[^()]*\.py:\d+ in .+)\)", "抛出了 {e}（位置：{M}）"),
    (r"raised (?P<e>\w+): (?P<t>.+) \(at (?P<M>[^()]*\.py:\d+ in .+)\)", "抛出了 {e}：{t}（位置：{M}）"),
    (r"importing (?P<f>\S+) (?P<M>raised .+)", "导入 `{f}` 时{M}"),
    (r"raised (?P<e>\w+)", "抛出了 {e}"),
    (r"raised (?P<e>\w+): (?P<t>.+)", "抛出了 {e}：{t}"),
    (r"(?P<f>[^\s:;]+\.py):(?P<n>\d+) in (?P<fn>\S+): (?P<c>.+?); (?P<M>[^\s:;]+\.py:\d+ in .+)", "`{f}:{n}`，`{fn}` 中的 `{c}`；{M}"),
    (r"(?P<f>[^\s:;]+\.py):(?P<n>\d+) in (?P<fn>\S+): (?P<c>.+?)", "`{f}:{n}`，`{fn}` 中的 `{c}`"),
    (r"called sys\.exit\((?P<n>-?\d+)\) \(at (?P<M>.+)\)", "调用了 `sys.exit({n})`（位置：{M}）"),
    (r"could not check the result: (?P<e>\w+): (?P<t>.+)", "无法检查结果：抛出了 {e}：{t}"),
    (r"syntax error at line (?P<n>\d+): (?P<t>.+)", "第 {n} 行有语法错误，抛出了 SyntaxError：{t}"),
    (r"(?P<f>\S+) does not define any task's entry point \(drill tasks lists them; docs/whiteboard\.md has each contract\)",
     "`{f}` 没有定义任何题目的入口（`drill tasks` 会列出它们；`docs/whiteboard.md` 里有每道题的约定）"),
    (r"(?P<f>\S+) does not define (?P<C>\w+)", "`{f}` 没有定义 {C}"),
    (r"it defines (?P<C>[\w, ]+)", "它定义的是 {C}"),
    (r"it defines (?P<C>\w+): did you mean the (?P<C2>\w+) task's (?P<C3>\w+)\? \(rename it, or add (?P<x>\w+ = \w+)\)",
     "它定义的是 {C}：是不是想写 {C2} 题的 {C3}？（改个名，或加上 `{x}`）"),
    (r"the process exited with code (?P<n>-?\d+) before finishing \(os\._exit\?\)\.", "进程没跑完就以退出码 {n} 退出了（os._exit？）。"),
    (r"the process was killed by (?P<s>\w+) \(a segmentation fault\)\.", "进程被 `{s}` 杀掉了（段错误）。"),
    (r"the process was killed by signal (?P<n>\d+)\.", "进程被信号 {n} 杀掉了。"),
    (r"the process was killed by (?P<s>SIG\w+)\.", "进程被 `{s}` 杀掉了。"),
    (r"the process ended before finishing, and its parent, drill's zygote, is gone: did the code kill drill's processes\?",
     "进程没跑完就结束了，它的父进程（drill 的 zygote）也不在了：是不是代码杀掉了 drill 的进程？"),
    (r"(?P<M>.+[.?]) Last output: (?P<o>.+)", "{M}最后的输出：`{o}`"),
    (r"printed more than (?P<n>\d+) MiB; stopped it \(a print in a loop\?\)\.", "输出超过了 {n} MiB，已停止（是不是在循环里 `print` 了？）。"),
    ((r"still running after (?P<t>%N s): (?P<n>\d+) calls returned \(the slowest in (?P<s>%N) s\), so it is not stuck but too slow for the "
     r"grader's small inputs; stopped it\. --timeout raises the limit\."),
     "{t} 后仍在运行：已有 {n} 次调用返回（最慢的用了 {s} s），所以不是卡死，而是对评分器的小输入来说也太慢了；已停止。`--timeout` 可以放宽时限。"),
    ((r"still running after (?P<t>%N s): (?P<n>\d+) calls returned in at most (?P<s>%N) s, then one ran (?P<r>%N) s without returning "
     r"\(an infinite loop\?\); stopped it\. --timeout raises the limit\."),
     "{t} 后仍在运行：已有 {n} 次调用在 {s} s 内返回，接下来的一次运行了 {r} s 还没返回（死循环？）；已停止。`--timeout` 可以放宽时限。"),
    (r"still running after (?P<t>%N s) in its first call of (?P<C>\w+) \(an infinite loop\?\); stopped it\. --timeout raises the limit\.",
     "第一次调用 {C} 运行了 {t} 仍未返回（死循环？）；已停止。`--timeout` 可以放宽时限。"),
    (r"the user side sent a malformed or forged reply \((?P<M>.+)\); stopped it", "用户进程发回了格式错误或伪造的回复（{M}）；已停止"),
    (r"it closed its channel to drill while still running", "它还在运行时就关闭了与 drill 的通道"),
    (r"not a frame of drill's wire format", "不是 drill 通信格式的帧"),
    (r"unreadable header \((?P<t>.+)\)", "帧头无法解析（`{t}`）"),
    (r"bytes after the reply", "回复之后还有多余的字节"),
    ((r"your code ran out of memory: it may use (?P<M>the limit of [\d.]+ \w+ \(--memory-limit changes it\)|the machine's memory)"
     r"; it tried to allocate (?P<k>[\d.]+ \w+) at once\."), "你的代码内存耗尽：{M}；它试图一次分配 {k}。"),
    (r"your code ran out of memory: it may use (?P<M>the limit of [\d.]+ \w+ \(--memory-limit changes it\)|the machine's memory)\.",
     "你的代码内存耗尽：{M}。"),
    (r"the limit of (?P<n>[\d.]+ \w+) \(--memory-limit changes it\)", "上限是 {n}（`--memory-limit` 可以修改）"),
    (r"the machine's memory", "这台机器的内存已用完"),
    (r"your code left (?P<n>\d+) process(?:es)? running \((?P<C>.+)\); drill killed (?:them|it) at the end of the grade",
     "你的代码留下了 {n} 个仍在运行的进程（{C}）；评分结束时 drill 已将其杀掉"),
    (r"(?P<M>.+) give a non-finite output at (?P<at>%S), as ordinary logits do: not an overflow \(a query with no allowed key gives NaN\)",
     "{M}：{at} 处输出非有限值，普通大小的 logits 也一样：不是溢出（没有任何可见 key 的 query 会得到 NaN）"),
    (r"q(?P<i>%S) is (?P<q>%N) for w = (?P<w>%N): w / scale rounded to (?P<n>%N) and q kept it; clamp to \[-127, 127\] \(the int8 range \[-128, 127\] is not symmetric\)",
     "w = {w} 时 q{i} 为 {q}：`w / scale` 舍入为 {n}，q 保留了它；应 `clamp` 到 [-127, 127]（int8 的范围 [-128, 127] 不对称）"),
    ((r"row (?P<r>\d+)'s largest weight (?P<w>%N) \(column (?P<c>\d+)\) has q = (?P<q>%N), not (?P<e>%N): w / scale is (?P<k>%N) up to a rounding "
      r"difference \((?P<x>%N) with your scale\); computed just short of (?P<k2>%N), truncation takes it to (?P<t>%N) where rounding gives (?P<k3>%N)"),
     "第 {r} 行绝对值最大的权重 {w}（第 {c} 列）的 q = {q}，不是 {e}：`w / scale` 与 {k} 只差一个舍入误差（用你的 `scale` 算出 {x}）；"
     "算出的值差一点才到 {k2}，截断得到 {t}，四舍五入才得到 {k3}"),
    (r"q in \[-127, 127\], every other row's absmax at ±127 \(exact\)", "q 在 [-127, 127] 内，其余每行绝对值最大的元素都映射到 ±127（精确）"),
    ((r"note: row (?P<r>\d+) \(absmax (?P<a>%N)\) has scale (?P<s>%N), an epsilon guard's floor instead of absmax / 127, so its q is 0: "
      r"accepted, the contract does not ask for rows this small"),
     "注意：第 {r} 行（绝对值最大为 {a}）的 `scale` 为 {s}，是防除零的 `eps` 设下的下限，而不是 `absmax / 127`，所以它的 q 为 0：可以接受，题目并不要求处理这么小的行"),
    (r"tokens (?P<s>%S) \(finished with eos\), score (?P<v>%N), within (?P<a>%N): a (?P<d>\w+) score, judged at the precision it was computed in",
     "token {s}（以 `eos` 结束），得分 {v}，误差在 {a} 以内：这是 {d} 的得分，按它计算时的精度评判"),
    (r"tokens (?P<s>%S) \(still live at max_len\), score (?P<v>%N), within (?P<a>%N): a (?P<d>\w+) score, judged at the precision it was computed in",
     "token {s}（到 max_len 仍未结束），得分 {v}，误差在 {a} 以内：这是 {d} 的得分，按它计算时的精度评判"),
    (r"a (?P<d>\w+) score, judged at (?P<e>\w+): allowed (?P<a>%N)", "{d} 的得分，按 {e} 精度评判：允许 {a}"),
    (r"(?P<d>b?float\d+) rows spanning ±(?P<n>%N)", "每行取值跨越 ±{n} 的 {d} 输入"),
    (r"the same rows scaled to ±(?P<n>%N) are right: exp overflowed", "同样的行缩放到 ±{n} 时结果正确：exp 溢出了"),
    (r"non-finite output at (?P<at>%S), and the same rows scaled to ±(?P<n>%N) are wrong too",
     "{at} 处输出非有限值，同样的行缩放到 ±{n} 时也不对"),
    ((r"x (?P<s>%S) in training raises where it updates (?P<C>[\w ]+), and x (?P<f>%S) does not: the batch statistics of \[N, C, L\] "
      r"do not have the buffers' shape \[C\] \(over N alone they are \[C, L\]\); BatchNorm takes one per channel, over N and L"),
     "x {s} 在训练模式下更新 {C} 时抛出异常，x {f} 却不会：[N, C, L] 的批统计量不是缓冲区的形状 [C]（只在 N 上算得到的是 [C, L]）；"
     "`BatchNorm` 每个通道一个统计量，在 N 和 L 上算"),
    (r"x (?P<s>%S) in training: the running buffers take the batch statistics", "x {s}（训练模式）：滑动平均缓冲区正常接收了批统计量"),
    ((r"unrecognised layout: expected the base nn\.Linear\((?P<i>\d+), (?P<o>\d+)\) as given and, beside it, A = nn\.Linear\((?P<i2>\d+), r, "
      r"bias=False\) and B = nn\.Linear\(r, (?P<o2>\d+), bias=False\) \(or lora_A, lora_B\), or loralib's lora_A = nn\.Parameter "
      r"\[r, (?P<i3>\d+)\] and lora_B = nn\.Parameter \[(?P<o3>\d+), r\]"),
     "无法识别的布局：应保留传入的基础层 `nn.Linear({i}, {o})`，并在它旁边定义 `A = nn.Linear({i2}, r, bias=False)` 和 "
     "`B = nn.Linear(r, {o2}, bias=False)`（也可命名为 `lora_A`、`lora_B`），或按 `loralib` 的写法定义 `lora_A = nn.Parameter` [r, {i3}] "
     "和 `lora_B = nn.Parameter` [{o3}, r]"),
]
# fmt: on
OPEN, CLOSE = "([{", ")]}"


def _compile(pattern: str) -> re.Pattern:
    return re.compile(pattern.replace("%N", NUM).replace("%S", SHAPE))


RULES = [(_compile(pattern), template) for pattern, template in TABLE]
VALUE = r"(?:\([^()]*\)|\[[^\]]*\]|[^\s()\[\],])+"
CODE_ITEM = re.compile(rf"[A-Za-z_][\w.]*(?:\[[^\]]*\])? ?[=<>]=? ?{VALUE}")
Said = tuple[str, int]  # the Chinese, and how many of its parts no rule fitted (left in English)


def translate(message: str) -> str:
    """``message`` in Chinese; the English unchanged when no rule fits any part of it."""
    found = _best(message)
    return message if found is None else found[0]


@lru_cache(maxsize=4096)
def _best(text: str) -> Said | None:
    """A whole-message rule, else the split of ``text`` whose parts leave the fewest in English; None: nothing fits."""
    for rx, template in RULES:
        match = rx.fullmatch(text)
        groups = match.groupdict() if match else {}
        if match and all(_balanced(v) for k, v in groups.items() if v and k[0] in "MC"):
            said = {name: _group(name, value) for name, value in groups.items()}
            return _fill(template, {name: zh for name, (zh, _) in said.items()}), sum(left for _, left in said.values())
    if CODE_ITEM.fullmatch(text):
        return f"`{text}`", 0
    splits = (_joined(_split(text, ": ", first=True), "："), _joined(_split(text, "; "), "；"), _paren(text), _listed(text))
    found = [s for s in splits if s]
    return min(found, key=lambda s: s[1]) if found else None


def _part(text: str) -> Said:
    return _best(text) or (text, 1)


def _joined(parts: list[str], joiner: str) -> Said | None:
    if len(parts) < 2:
        return None
    said = [_best(p) for p in parts]
    if not any(said):
        return None
    shown = [s or (p, 1) for p, s in zip(parts, said)]
    return joiner.join(zh for zh, _ in shown), sum(left for _, left in shown)


def _paren(text: str) -> Said | None:
    """``head (inner)``: both translated, the parentheses made Chinese."""
    if not text.endswith(")"):
        return None
    depth, i = 0, len(text) - 1
    while i >= 0:
        depth += (text[i] in CLOSE) - (text[i] in OPEN)
        if depth == 0:
            break
        i -= 1
    if i < 2 or text[i - 1] != " " or not (_best(text[: i - 1]) or _best(text[i + 1 : -1])):
        return None
    (head, left), (inner, more) = _part(text[: i - 1]), _part(text[i + 1 : -1])
    return f"{head}（{inner}）", left + more


def _listed(text: str) -> Said | None:
    """A list of settings ("T=5, causal=True, 3 ignored"): adjacent ``name=value`` items share one code span."""
    parts: list[str] = []
    for part in _split(text, ", "):  # "slopes 0.5, 0.25, ..." is one item
        if parts and re.fullmatch(r"[-+\d.e]+|\.\.\.", part):
            parts[-1] += f", {part}"
        else:
            parts.append(part)
    if len(parts) < 2:
        return None
    code = [bool(CODE_ITEM.fullmatch(p)) for p in parts]
    said = [None if is_code else _best(p) for p, is_code in zip(parts, code)]
    if not any(said) and not any(code):
        return None
    shown: list[str] = []
    for k, (part, is_code, s) in enumerate(zip(parts, code, said)):
        if is_code and k and code[k - 1]:
            shown[-1] = f"{shown[-1][:-1]}, {part}`"
        else:
            shown.append(f"`{part}`" if is_code else s[0] if s else part)
    return "，".join(shown), sum(s[1] if s else 1 for s, is_code in zip(said, code) if not is_code)


def _group(name: str, value: str | None) -> Said:
    if value is None:
        return "", 0
    if name.startswith("M"):
        return _part(value)
    if name.startswith("C"):
        return "、".join(f"`{item}`" for item in re.split(r", | and ", value)), 0
    if name.startswith("F"):
        said = [_function(item) for item in _split(value, ", ")]
        return "、".join(zh for zh, _ in said), sum(left for _, left in said)
    return value, 0


def _function(item: str) -> Said:
    """One of torch's own functions the file called: ``F.rms_norm / nn.RMSNorm``, or ``name (what it is)``."""
    name, _, what = item.partition(" (")
    shown = " / ".join(f"`{n}`" for n in name.split(" / "))
    if not what:
        return shown, 0
    said = _best(what[:-1])
    return f"{shown}（{said[0] if said else what[:-1]}）", said[1] if said else 1


def _fill(template: str, values: dict[str, str]) -> str:
    """The template with its groups put in: a space where Chinese meets Latin text at a group's edge, none between
    Chinese and Chinese or next to Chinese punctuation, the template's own spacing otherwise."""

    def put(placeholder: re.Match) -> str:
        text = values[placeholder[2]]
        if not text:
            return placeholder[1] + placeholder[3]
        before = template[placeholder.start() - 1] if placeholder.start() else ""
        after = template[placeholder.end()] if placeholder.end() < len(template) else ""
        return _gap(before, text[0], placeholder[1]) + text + _gap(text[-1], after, placeholder[3])

    return re.sub(r"( ?)\{(\w+)\}( ?)", put, template)


def _gap(left: str, right: str, written: str) -> str:
    if not left or not right or left == " " or right == " ":
        return written
    if _wide(left) or _wide(right) or (_han(left) and _han(right)):
        return ""
    return " " if _han(left) or _han(right) else written


def _han(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff"


def _wide(ch: str) -> bool:
    """Chinese punctuation: no space on either side."""
    return "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef"


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += (ch in OPEN) - (ch in CLOSE)
        if depth < 0:
            return False
    return depth == 0


def _split(text: str, separator: str, first: bool = False) -> list[str]:
    """``text`` split at ``separator`` outside brackets and b'...' literals (only at the first one with ``first``)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        literal = (
            re.match(r"b'(?:[^'\\]|\\.)*'", text[i:]) if text.startswith("b'", i) and not text[i - 1 : i].isalnum() else None
        )
        if literal:
            i += literal.end()
            continue
        depth += (text[i] in OPEN) - (text[i] in CLOSE)
        if depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            start = i = i + len(separator)
            if first:
                break
            continue
        i += 1
    return [*parts, text[start:]]
