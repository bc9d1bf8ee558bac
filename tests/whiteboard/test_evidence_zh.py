"""The judge's evidence in Chinese (drill.grade.evidence_zh): each family of messages reads as written here, prefixed
messages translate part by part, an unknown message stays English, and no real message keeps an English word.

Real messages come two ways: evidence_messages.txt holds one of each wording the bundled battery produces (every
solution, mutant and fixture graded once on CPU), and a live grade of a few files checks the judge itself sends
``message_zh``. DRILL_EVIDENCE_ALL=1 grades every bundled file live instead of the few (about a minute on 2 cores).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from drill.grade.evidence_zh import translate
from drill.grade.isolation import Worker
from drill.grade.report import Check
from drill.grade.run import make_request
from drill.grade.selftest import cases
from drill.grade.tasks import TASKS

from whiteboard_impls import HOSTILE, IMPLS, TASKS_DIR
from zh_text import english_words

HERE = Path(__file__).parent
CORPUS = [line for line in (HERE / "evidence_messages.txt").read_text().splitlines() if line and not line.startswith("#")]

# fmt: off
FAMILIES = [  # (a real message, its Chinese as it should read)
    ("max error 0.744 at [1, 1, 3, 2] (allowed 2.31e-05)", "最大误差 0.744，位于 [1, 1, 3, 2]（允许 2.31e-05）"),
    ("max error 8.6e-08 (allowed 1e-05)", "最大误差 8.6e-08（允许 1e-05）"),
    ("output has shape [1], expected [2, 3, 1, 4]", "输出的形状是 [1]，应为 [2, 3, 1, 4]"),
    ("dq: NaN at [0, 0, 0, 0] where the reference is finite (120 values non-finite where the reference is finite)",
     "dq：[0, 0, 0, 0] 处为 NaN，参考值却是有限的（共 120 个这样的值）"),
    ("call 2 (H=6, T=5, causal=False): max error 0.506 at [1, 4, 1, 3] (allowed 1.42e-05)",
     "第 2 次调用（`H=6, T=5, causal=False`）：最大误差 0.506，位于 [1, 4, 1, 3]（允许 1.42e-05）"),
    ("output: max error 0.0555 at [1, 3, 8] (allowed 1e-05) (3 query heads, 3 kv heads)",
     "输出：最大误差 0.0555，位于 [1, 3, 8]（允许 1e-05）（3 个 query 头，3 个 kv 头）"),
    ("5 mask forms: max error 1.1e-07 (allowed 1e-05)", "5 种掩码形式：最大误差 1.1e-07（允许 1e-05）"),
    ("output [2, 3, 5, 6]", "输出 [2, 3, 5, 6]"),
    ("sample 1 (length 3): query 2 sees padded key 4 (moved 0.12)", "样本 1（长度 3）：query 2 看到了填充的 key 4（输出变化 0.12）"),
    ("causal=True: position 0 changes when future key 1 changes", "`causal=True`：未来的 key 1 一变，位置 0 也跟着变了"),
    ("window=3: query 3 sees key 0 (a key 3 positions back, outside the window; it may see 1..3)",
     "`window=3`：query 3 看到了 key 0（往前 3 个位置，在窗口之外；它只能看到 1..3）"),
    ("d out[0] / d x[1] is 0.0336, not 0: position 0 sees 1", "`d out[0] / d x[1]` 为 0.0336，不是 0：位置 0 看到了位置 1"),
    ("a fully masked row gives 0, as torch >= 2.5 does", "完全被屏蔽的行输出 0，与 torch >= 2.5 一致"),
    ("no call to torch's own attention", "没有调用 torch 自带的注意力"),
    ("calls F.scaled_dot_product_attention", "调用了 `F.scaled_dot_product_attention`"),
    ("q, k, v, mask unchanged", "`q`、`k`、`v`、`mask` 没有被修改"),
    ("modified in place: q", "原地修改了 `q`"),
    ("MultiHeadAttention(config, layer_idx=None) built from a config object (nanoGPT / Hugging Face names)",
     "`MultiHeadAttention(config, layer_idx=None)` 由配置对象构建（nanoGPT / Hugging Face 的命名）"),
    ("lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01, float32: step 1: param: max error 0.000256 at [1, 1] (allowed 1.32e-05)",
     "`lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01`，float32：第 1 步：`param`：最大误差 0.000256，位于 [1, 1]（允许 1.32e-05）"),
    ("step 27: 3.18412e-05 after 3e-05 at step 26: the decay must never rise (warmup_steps=7, total_steps=45, max_lr=0.0003, min_lr=3e-05)",
     "第 27 步：第 26 步为 3e-05，之后却是 3.18412e-05：衰减阶段不能回升（`warmup_steps=7, total_steps=45, max_lr=0.0003, min_lr=3e-05`）"),
    ("[6, 10] float32: every row got the same scale 0.1055, though the rows' absmax range from 0.0244 to 13.4: one scale per output channel",
     "[6, 10]，float32：每一行都用了同一个 `scale` 0.1055，而各行绝对值的最大值从 0.0244 到 13.4 不等：每个输出通道应有自己的 `scale`"),
    ("expected tokens [5, 4, 5], got [3]: draft 0 (token 5) must be accepted: u = 0.1780 < min(1, p/q) = min(1, 0.2457/0.2579)",
     "应为 token [5, 4, 5]，得到 [3]：第 0 个草稿（token 5）应被接受：u = 0.1780 < min(1, p/q) = min(1, 0.2457/0.2579)"),
    ("merge 1: expected (b'a', b' '), got (b'aa', b'aa') (ids (97, 32) vs (256, 256))",
     "第 1 次合并：应为 `(b'a', b' ')`，得到 `(b'aa', b'aa')`（id 分别为 (97, 32) 和 (256, 256)）"),
    (("with every expert identical, token 2's y is -0.5718 times expert(x), not 1: each token's routing weights must sum to 1 "
     "(softmax over its top-k logits)"),
     "所有专家都相同时，token 2 的 y 是 expert(x) 的 -0.5718 倍，而不是 1 倍：每个 token 的路由权重之和必须为 1（对它的 top-k logits 做 softmax）"),
    (("raised IndexError: index 4 is out of bounds for dimension 0 with size 4 (at paged-context-off-by-one__1.py:12 in paged_attention: "
     "blk = block_table[b, t // bs])"),
     ("抛出了 IndexError：index 4 is out of bounds for dimension 0 with size 4（位置：`paged-context-off-by-one__1.py:12`，"
     "`paged_attention` 中的 `blk = block_table[b, t // bs]`）")),
    ("syntax error at line 5: '(' was never closed", "第 5 行有语法错误，抛出了 SyntaxError：'(' was never closed"),
    (("still running after 2 s: 1 calls returned in at most 0.00083 s, then one ran 2 s without returning (an infinite loop?); "
     "stopped it. --timeout raises the limit."),
     "2 s 后仍在运行：已有 1 次调用在 0.00083 s 内返回，接下来的一次运行了 2 s 还没返回（死循环？）；已停止。`--timeout` 可以放宽时限。"),
    ("your code ran out of memory: it may use the limit of 512 MiB (--memory-limit changes it); it tried to allocate 4 GiB at once.",
     "你的代码内存耗尽：上限是 512 MiB（`--memory-limit` 可以修改）；它试图一次分配 4 GiB。"),
    ("the process was killed by SIGSEGV (a segmentation fault).", "进程被 `SIGSEGV` 杀掉了（段错误）。"),
    ("your code left 20 processes running (sleep); drill killed them at the end of the grade",
     "你的代码留下了 20 个仍在运行的进程（`sleep`）；评分结束时 drill 已将其杀掉"),
]
# fmt: on


@pytest.mark.parametrize(("english", "chinese"), FAMILIES, ids=[en[:40] for en, _ in FAMILIES])
def test_each_family_reads_as_written(english, chinese):
    assert translate(english) == chinese


@pytest.mark.parametrize("inner", ["max error 0.744 at [1, 1, 3, 2] (allowed 2.31e-05)", "output has shape [1], expected [2, 3, 5, 6]",
                                   "dq: NaN at [0, 0] where the reference is finite"])  # fmt: skip
def test_a_prefix_is_translated_and_its_tail_again(inner):
    assert translate(f"call 3 (T=7): {inner}") == f"第 3 次调用（`T=7`）：{translate(inner)}"
    assert translate(f"D=64: {inner}") == f"`D=64`：{translate(inner)}"
    assert (
        translate(f"two steps, float32 [7]: step 1: param: {inner}") == f"两步，float32 [7]：第 1 步：`param`：{translate(inner)}"
    )
    assert translate(inner) != inner and not english_words(translate(inner))


def test_a_prefix_before_an_unknown_tail_keeps_the_tail_as_written():
    assert translate("call 3 (T=7): the flux capacitor is off") == "第 3 次调用（`T=7`）：the flux capacitor is off"


@pytest.mark.parametrize("message", ["the flux capacitor is misaligned", "flux: capacitor; misaligned (badly), oddly", ""])
def test_an_unknown_message_comes_back_untouched(message):
    assert translate(message) == message


def test_every_wording_of_the_battery_reads_in_chinese():
    left = [(en, zh, words) for en in CORPUS for zh in [translate(en)] if (words := english_words(zh))]
    assert len(CORPUS) > 500 and left == [], left[:10]


def test_the_check_carries_its_chinese_on_the_wire():
    check = Check("numerical.seed0", "numerical", "fail", "max error 1 (allowed 2)")
    check.message = f"D=64: {check.message}"  # checks prefix their messages before they are sent
    wire = check.to_dict()
    assert wire["message"] == "D=64: max error 1 (allowed 2)" and wire["message_zh"] == "`D=64`：最大误差 1（允许 2）"
    assert Check.from_dict({**wire, "message_zh": "评判方写的"}).text("zh") == "评判方写的"  # the judge's own, not redone
    assert Check.from_dict({k: v for k, v in wire.items() if k != "message_zh"}).text("zh") == wire["message_zh"]
    assert Check.from_dict(wire).text("en") == wire["message"]


# fmt: off
FEW = [TASKS_DIR / name for name in (  # the files whose grades hold the most wordings the others lack
    "gqa/mutants/gqa-head-mapping__1.py", "grpo/mutants/grpo-advantages-batch-normalised__1.py", "lr_schedule/solution.py",
    "sdpa/mutants/mask-after-softmax__1.py", "softmax/mutants/softmax-wrong-sum-dim__1.py", "bpe/mutants/bpe-overlapping-merge__1.py",
    "adamw/mutants/adamw-l2-not-decoupled__1.py", "quantize/mutants/quant-per-tensor-scale__1.py",
    "padding/mutants/causal-blocks-self__padding.py", "paged_attention/mutants/paged-index-swapped__1.py",
    "speculative/mutants/spec-residual-wrong__2.py", "mha/mutants/dropout-in-eval__2.py", "cross_entropy/mutants/ce-wrong-class-dim__1.py",
    "linear_attention/mutants/linear-attention-causal-exclusive__1.py", "rmsnorm/mutants/rmsnorm-mean-centred__1.py",
    "alibi/mutants/alibi-absolute-distance__1.py", "attention_backward/mutants/attn-backward-mask-not-reapplied__1.py",
    "lora/solution.py", "flash_decoding/mutants/flash-decoding-merge-unnormalised__1.py", "moe/mutants/moe-aux-topk-fractions__1.py",
)] + [HOSTILE / "exception.py", HOSTILE / "syntax_error.py", HOSTILE / "import_reference.py"]
# fmt: on
LIMITS = {
    "infinite_loop": {"timeout": 2},
    "slow_correct": {"timeout": 2},
    "slow_backward": {"timeout": 3},
    "touch_memory": {"memory_limit": 512 << 20},
}


def every_file() -> list[Path]:
    return [c.path for c in cases()] + sorted(
        p for kind in ("correct", "broken", "pairs", "hostile") for p in (IMPLS / kind).glob("*.py")
    )


def task_of(path: Path) -> str | None:
    """The task folder a solution or mutant sits in, the task a correct file is named after, else None (detected)."""
    if path.is_relative_to(TASKS_DIR):
        return path.relative_to(TASKS_DIR).parts[0]
    named = [t for t in TASKS if path.stem.startswith(f"{t}_")] if path.parent.name == "correct" else []
    return max(named, key=len) if named else {"sleeper_module": "mha"}.get(path.stem)


@pytest.fixture(scope="module")
def judge():
    pytest.importorskip("torch")
    with Worker(threads=1) as worker:
        yield worker


def test_the_judge_sends_every_check_in_chinese(judge):
    left = []
    for path in every_file() if os.environ.get("DRILL_EVIDENCE_ALL") else FEW:
        options = dict(LIMITS.get(path.stem, {}))
        timeout = options.pop("timeout", 60)
        report = judge.grade(make_request(path, task=task_of(path), device="cpu", **options), timeout)
        assert report.checks and all(c.message_zh for c in report.checks), path  # the judge made them: from_wire read them
        left += [(path.name, c.message, c.message_zh) for c in report.checks if english_words(c.message_zh)]
    assert left == [], left[:10]
