"""What ``drill grade --trace`` compares the user's kmeans against: N = 9 points in D = 2 around k = 3 blobs, started
from three points of the same blob (so the assignments change between rounds), iters = 3. Per round: the centroids'
squared norms, x·cᵀ, the squared distances (and their broadcast differences and square roots), the assignments, the
one-hot matrix, the counts, the sums, the means and the new centroids; then the final assignment step."""

from __future__ import annotations

import torch

from drill.grade.trace_match import Case

ITERS = 3
POINTS = ((0.0, 0.2), (0.4, -0.3), (-0.2, 0.1), (5.1, 4.8), (4.7, 5.3), (5.4, 5.0), (-4.9, 5.2), (-5.3, 4.6), (-4.6, 4.9))
INIT = (0, 1, 2)


def distances(x, c, name: str):
    xx, cc, xc = (x * x).sum(-1, keepdim=True), (c * c).sum(-1), x @ c.T
    d = xx - 2 * xc + cc
    diff = x[:, None, :] - c[None, :, :]
    return d, [(f"squared norms of the centroids{name}", cc), (f"x·cᵀ{name}", xc), (f"2·x·cᵀ{name}", 2 * xc),
               (f"|x|² - 2·x·cᵀ{name}", xx - 2 * xc), (f"x - c{name}", diff), (f"(x - c)²{name}", diff**2),
               (f"squared distances{name}", d), (f"distances{name}", d.clamp(min=0).sqrt())]  # fmt: skip


def case(ctx) -> Case:
    x = torch.tensor(POINTS, dtype=torch.float64)
    init = torch.tensor(INIT)
    c = x[init].clone()
    steps = [("x", x), ("squared norms of x", (x * x).sum(-1, keepdim=True)), ("initial centroids", c)]
    zh = {"squared norms of x": "x 的模长平方", "initial centroids": "初始质心"}
    last = None
    for r in range(1, ITERS + 1):
        name = f", round {r}"
        d, found = distances(x, c, name)
        a = d.argmin(-1)
        steps += found + [(f"assignments{name}", a)]
        if last is not None and torch.equal(a, last):
            break
        last = a
        onehot = torch.nn.functional.one_hot(a, len(INIT)).double()
        counts = onehot.sum(0)[:, None]
        means = onehot.T @ x / counts.clamp(min=1)
        c = torch.where(counts > 0, means, c)
        steps += [(f"one-hot{name}", onehot), (f"counts{name}", counts), (f"sums{name}", onehot.T @ x), (f"means{name}", means),
                  (f"centroids after round {r}", c)]  # fmt: skip
        zh.update({f"one-hot{name}": f"第 {r} 轮的 one-hot 矩阵", f"counts{name}": f"第 {r} 轮每簇的点数", f"sums{name}": f"第 {r} 轮每簇的坐标和",
                   f"means{name}": f"第 {r} 轮每簇的均值", f"centroids after round {r}": f"第 {r} 轮之后的质心"})  # fmt: skip
    d, found = distances(x, c, ", final")
    steps += found + [("assignments", d.argmin(-1)), ("output", c)]
    rounds = {name for name, _ in steps}
    for r in [*range(1, ITERS + 1), "final"]:
        label = f"第 {r} 轮" if r != "final" else "最终"
        tail = f", round {r}" if r != "final" else ", final"
        zh.update({f"squared norms of the centroids{tail}": f"{label}质心的模长平方", f"x·cᵀ{tail}": f"{label}的 x·cᵀ",
                   f"2·x·cᵀ{tail}": f"{label}的 2·x·cᵀ", f"|x|² - 2·x·cᵀ{tail}": f"{label}的 |x|² - 2·x·cᵀ", f"x - c{tail}": f"{label}的 x - c",
                   f"(x - c)²{tail}": f"{label}的 (x - c)²", f"squared distances{tail}": f"{label}的距离平方", f"distances{tail}": f"{label}的距离",
                   f"assignments{tail}": f"{label}的分配"})  # fmt: skip
    zh["assignments"] = "assignments（最终的分配）"
    zh = {name: text for name, text in zh.items() if name in rounds}
    return Case(ctx.entry, (x, len(INIT), ITERS, init), steps, zh=zh, integers=True, returned=("output", "assignments"))
