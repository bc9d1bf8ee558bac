"""Fact checks for questions/fine-tuning.yaml, tokenization.yaml and alignment-post-training.yaml.

Every numeric answer is recomputed from first principles (parameter counts from real modules on
the meta device, losses from real ``F.cross_entropy`` calls), every shape answer is compared with
what torch produces, and the runnable claims are run: LoRA's zero-init gradients, merging and
unmerging, the NF4 levels rebuilt from normal quantiles, double-quantization bits, the SFT loss
reduction and the gradient-accumulation bug, BPE merges on the toy corpus, WordPiece's greedy
longest match, unigram Viterbi segmentation, best-of-n KL, the SimPO loss and majority voting.
Each reference answer must hit every key point's keywords in its own language.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from statistics import NormalDist

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOPICS = ("fine-tuning", "tokenization")
# alignment-post-training.yaml adds to the existing `alignment` topic; its questions, by id.
ALIGN_NEW = {
    "align-rft-best-of-n",
    "align-best-of-n-kl",
    "align-constitutional-ai",
    "align-kto",
    "align-simpo-loss",
    "align-orpo",
    "align-prm-vs-orm",
    "align-r1-zero-rewards",
    "align-r1-pipeline",
    "align-majority-vote",
    "align-test-time-compute",
    "align-distillation",
    "align-distill-vs-rl-small",
}


@pytest.fixture(scope="module")
def mine(bank):
    """The questions of this module's own files (newer files share the topics and have fact tests of their own)."""
    return {qid: q for qid, q in bank.questions.items() if bank.origins[qid][0].stem in TOPICS or qid in ALIGN_NEW}


def q(bank, qid):
    return bank.questions[qid]


def close(q_, computed):
    """The stored value is within its own tolerance of the recomputed one (and the tolerance is sane)."""
    assert q_.tolerance <= max(0.05 * abs(computed), 1e-12), (q_.id, q_.tolerance, computed)
    return abs(q_.value - computed) <= q_.tolerance + 1e-12 * max(1.0, abs(computed))


def numel(*modules) -> int:
    return sum(p.numel() for m in modules for p in m.parameters())


# --------------------------------------------------------------- structure ---


def test_all_new_alignment_questions_exist(bank):
    assert ALIGN_NEW <= set(bank.questions)
    assert all(bank.questions[i].topic == "alignment" for i in ALIGN_NEW)


def test_key_points_references_and_keywords(mine):
    for x in mine.values():
        assert 2 <= len(x.key_points) <= 5, x.id
        assert x.references, x.id
        for kp in x.key_points:
            for kw in [*kp.keywords.en, *kp.keywords.zh]:
                assert kw.strip() and len(kw) <= 40, (x.id, kw)
                assert not re.fullmatch(r"[-+]?\d[\d,]*\.?\d*%?", kw.strip()) or x.type != "open", (x.id, kw)


def test_reference_answers_hit_every_key_point_in_their_own_language(mine):
    for x in mine.values():
        for lang in ("en", "zh"):
            text = re.sub(r"\s+", " ", getattr(x.answer, lang).lower())
            for i, kp in enumerate(x.key_points):
                words = getattr(kp.keywords, lang)
                assert any(w.lower() in text for w in words), (x.id, lang, i, words)


@pytest.mark.parametrize("topic", TOPICS)
def test_topic_coverage(bank, topic):
    qs = [x for x in bank.questions.values() if x.topic == topic]
    assert len(qs) >= 20
    levels = Counter(x.level for x in qs)
    assert all(levels[lv] >= 5 for lv in ("L1", "L2", "L3")), levels
    assert sum(x.objective for x in qs) / len(qs) >= 0.45
    pitch = bank.questions[f"{topic}-pitch"]
    assert pitch.type == "open" and pitch.level == "L2" and pitch.time_limit == 60 and "pitch" in pitch.tags
    assert 100 <= len(pitch.answer.en.split()) <= 180
    by_id = bank.questions
    chains = {
        (a.id, b, c)
        for a in qs if a.level == "L1"
        for b in a.follow_ups if by_id[b].level == "L2"
        for c in by_id[b].follow_ups if by_id[c].level == "L3"
    }
    assert len(chains) >= 4 and len({c[0] for c in chains}) >= 3, chains


def test_multi_select_answers_mark_each_choice_true_or_false_in_order(mine):
    """Where the answer walks the options as **True:** / **False:** bullets, they agree with `correct`."""
    for x in mine.values():
        if x.type != "choice" or not isinstance(x.correct, list):
            continue
        verdicts = re.findall(r"\*\*(True|False):\*\*", x.answer.en)
        if verdicts:
            assert len(verdicts) == len(x.choices), x.id
            assert {i for i, v in enumerate(verdicts) if v == "True"} == set(x.correct), x.id


NUMERIC_CHECKED = {
    "ft-lora-param-count-layer",
    "ft-prompt-tuning-params",
    "ft-lora-alpha-scaling",
    "ft-lora-7b-param-count",
    "ft-prefix-tuning-params",
    "ft-sft-loss-normalization",
    "ft-qlora-double-quant",
}
NUMERIC_CHECKED |= {
    "tok-gpt2-vocab-merges",
    "tok-embedding-params",
    "tok-chinese-bytes",
    "tok-bpe-merge-count",
    "tok-vocab-tradeoffs",
}
NUMERIC_CHECKED |= {"align-simpo-loss", "align-majority-vote", "align-best-of-n-kl"}
SHAPE_CHECKED = {"ft-lora-shape"}


def test_every_numeric_and_shape_question_is_checked(mine):
    assert {x.id for x in mine.values() if x.type == "numeric"} == NUMERIC_CHECKED
    assert {x.id for x in mine.values() if x.type == "shape"} == SHAPE_CHECKED


# ------------------------------------------------------------- fine-tuning ---


def lora_pair(d_in: int, d_out: int, r: int):
    with torch.device("meta"):
        return torch.nn.Linear(d_in, r, bias=False), torch.nn.Linear(r, d_out, bias=False)


def test_lora_param_count_layer(bank):
    x = q(bank, "ft-lora-param-count-layer")
    assert close(x, numel(*lora_pair(4096, 4096, 8)))
    assert round(100 * x.value / 4096**2, 2) == 0.39


def test_lora_shape(bank):
    x = q(bank, "ft-lora-shape")
    base = torch.nn.Linear(4096, 11008, bias=False, device="meta")
    a, b = lora_pair(4096, 11008, 16)
    assert tuple(b.weight.shape) == tuple(int(d) for d in x.shape.strip("[]").split(","))
    assert (b.weight @ a.weight).shape == base.weight.shape
    assert numel(a, b) == 241_664


def test_lora_7b_param_count(bank):
    x = q(bank, "ft-lora-7b-param-count")
    d, ff, r, layers = 4096, 11008, 8, 32
    attn = [lora_pair(d, d, r) for _ in range(4)]
    mlp = [lora_pair(d, ff, r), lora_pair(d, ff, r), lora_pair(ff, d, r)]
    per_layer = sum(numel(*p) for p in attn + mlp)
    assert per_layer == 624_640
    assert close(x, layers * per_layer / 1e6)
    assert round(100 * layers * per_layer / 6.74e9, 1) == 0.3
    assert round(2 * numel(*lora_pair(d, d, r)) * layers / 1e6, 2) == 4.19  # q and v only


def test_lora_alpha_scaling(bank):
    x = q(bank, "ft-lora-alpha-scaling")
    assert 16 / 8 == 2 and close(x, 16 / 64)
    assert 16 / math.sqrt(64) == 2  # rsLoRA keeps the old scale


def test_prompt_and_prefix_tuning_params(bank):
    with torch.device("meta"):
        soft_prompt = torch.nn.Embedding(20, 4096)
        prefix = torch.nn.Parameter(torch.empty(32, 2, 10, 4096))  # layers, (K, V), length, d
    assert close(q(bank, "ft-prompt-tuning-params"), numel(soft_prompt))
    assert close(q(bank, "ft-prefix-tuning-params"), prefix.numel())
    assert 10 * 4096 == 40_960 and 2 * 10 * 4096 == 81_920


def test_lora_init_gradients():
    """B = 0: only B gets a gradient at step 0; both zero: nothing trains; A = 0, B random: A trains."""
    torch.manual_seed(0)
    x = torch.randn(5, 16)
    w0 = torch.randn(12, 16)

    def grads(a_init, b_init):
        a = a_init.clone().requires_grad_()
        b = b_init.clone().requires_grad_()
        (x @ (w0 + b @ a).T).pow(2).sum().backward()
        return a.grad.abs().max().item(), b.grad.abs().max().item()

    ga, gb = grads(torch.randn(4, 16), torch.zeros(12, 4))
    assert ga == 0 and gb > 0
    assert grads(torch.zeros(4, 16), torch.zeros(12, 4)) == (0, 0)
    ga, _ = grads(torch.zeros(4, 16), torch.randn(12, 4))
    assert ga > 0


def test_lora_merge_and_unmerge():
    torch.manual_seed(0)
    base = torch.nn.Linear(64, 48, bias=False)
    a, b = torch.randn(8, 64) * 0.1, torch.randn(48, 8) * 0.1
    scale = 16 / 8
    x = torch.randn(3, 64)
    unmerged = base(x) + scale * (x @ a.T @ b.T)
    w0 = base.weight.detach().clone()
    merged = w0 + scale * b @ a
    assert merged.shape == w0.shape
    torch.testing.assert_close(x @ merged.T, unmerged.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(merged - scale * b @ a, w0, rtol=0, atol=1e-6)
    # bf16: the round trip is close but not bit-exact
    m16 = (w0 + scale * b @ a).bfloat16()
    back = (m16.float() - scale * b @ a).bfloat16()
    assert not torch.equal(back, w0.bfloat16())
    assert (back.float() - w0).abs().max() < 0.05


def nf4_levels() -> list[float]:
    """Rebuilt as QLoRA describes: 8 positive and 7 negative normal quantiles plus an exact zero."""
    n = NormalDist()
    offset = 0.9677083  # bitsandbytes' constant: 1 - (1/32 + 1/30)/2, rounded
    pos = [n.inv_cdf(p) for p in torch.linspace(offset, 0.5, 9)[:-1].tolist()]
    neg = [-n.inv_cdf(p) for p in torch.linspace(offset, 0.5, 8)[:-1].tolist()]
    values = sorted(pos + [0.0] + neg)
    return [v / max(values) for v in values]


def test_nf4_levels_match_the_answer(bank):
    levels = nf4_levels()
    assert len(levels) == 16 and levels[0] == -1 and levels[-1] == 1 and 0.0 in levels
    assert sum(v > 0 for v in levels) == 8 and sum(v < 0 for v in levels) == 7
    assert abs(1 - 0.5 * (1 / 32 + 1 / 30) - 0.9677083) < 1e-7
    text = q(bank, "ft-qlora-nf4").answer.en
    for shown in ("−0.6962", "−0.0911", "0.0796", "0.7230"):
        value = float(shown.replace("−", "-"))
        assert shown in text and any(round(v, 4) == value for v in levels), shown


def blockwise(w: torch.Tensor, levels: torch.Tensor, block: int = 64) -> torch.Tensor:
    blocks = w.reshape(-1, block)
    absmax = blocks.abs().amax(dim=1, keepdim=True)
    idx = (blocks / absmax).unsqueeze(-1).sub(levels).abs().argmin(dim=-1)
    return (levels[idx] * absmax).reshape(w.shape)


def test_nf4_beats_evenly_spaced_4bit_on_normal_weights():
    torch.manual_seed(0)
    w = torch.randn(256, 256) * 0.02
    nf4 = torch.tensor(nf4_levels())
    even = torch.linspace(-1, 1, 16)
    err_nf4 = (blockwise(w, nf4) - w).pow(2).mean()
    err_even = (blockwise(w, even) - w).pow(2).mean()
    assert err_nf4 < 0.85 * err_even


def test_double_quantization_saving(bank):
    x = q(bank, "ft-qlora-double-quant")
    n = 64 * 256 * 1000  # parameters, a whole number of second-level blocks
    plain_bits = (n // 64) * 32 / n
    dq_bits = ((n // 64) * 8 + (n // 64 // 256) * 32) / n
    assert plain_bits == 0.5 and round(dq_bits, 3) == 0.127
    assert round(plain_bits - dq_bits, 3) == 0.373
    assert close(x, 65e9 * (plain_bits - dq_bits) / 8 / 1e9)
    assert round(65e9 * (4 + dq_bits) / 8 / 1e9, 1) == 33.5


def rows(n_prompt, n_resp, nll):
    """One example: ``n_resp`` response tokens at NLL ``nll`` each after ``n_prompt`` prompt tokens labelled -100.

    With two classes, logits [0, z] and target 0 give NLL = log(1 + e^z), so z = log(e^nll - 1).
    """
    z = math.log(math.exp(nll) - 1)
    logits = torch.tensor([[0.0, 1.0]] * n_prompt + [[0.0, z]] * n_resp)
    labels = torch.tensor([-100] * n_prompt + [0] * n_resp)
    return logits, labels


def sft_batch():
    """ft-sft-loss-normalization: A has 10 response tokens at NLL 2.0 each, B 90 at 0.5 each."""
    return rows(30, 10, 2.0), rows(10, 90, 0.5)


def accumulation_batch():
    """ft-grad-accum-loss-bug (its own numbers): 20 response tokens at NLL 1.5 each, then 80 at 0.5 each."""
    return rows(30, 20, 1.5), rows(10, 80, 0.5)


def test_sft_loss_normalization(bank):
    x = q(bank, "ft-sft-loss-normalization")
    (la, ya), (lb, yb) = sft_batch()
    loss = F.cross_entropy(torch.cat([la, lb]), torch.cat([ya, yb]), ignore_index=-100)
    assert close(x, loss.item())
    assert F.cross_entropy(la, ya, reduction="sum").item() == pytest.approx(20, abs=1e-4)
    assert F.cross_entropy(lb, yb, reduction="sum").item() == pytest.approx(45, abs=1e-4)
    per_example = (F.cross_entropy(la, ya).item() + F.cross_entropy(lb, yb).item()) / 2
    assert per_example == pytest.approx(1.25, abs=1e-5)


def test_gradient_accumulation_bug_and_fix(bank):
    (la, ya), (lb, yb) = accumulation_batch()
    assert F.cross_entropy(la, ya, reduction="sum").item() == pytest.approx(30, abs=1e-4)
    assert F.cross_entropy(lb, yb, reduction="sum").item() == pytest.approx(40, abs=1e-4)
    question = bank.get("ft-grad-accum-loss-bug")
    assert "summed NLL 30" in question.prompt.en and "summed NLL 40" in question.prompt.en
    assert "(1.5 + 0.5)/2 = 1.0" in question.answer.en and "70/100 = 0.70" in question.answer.en and "4×" in question.answer.en
    full = torch.cat([la, lb]).requires_grad_()
    F.cross_entropy(full, torch.cat([ya, yb]), ignore_index=-100).backward()

    def accumulated(fixed: bool):
        micro = [la.clone().requires_grad_(), lb.clone().requires_grad_()]
        total_tokens = sum(int((y != -100).sum()) for y in (ya, yb))
        loss_sum = 0.0
        for logits, y in zip(micro, (ya, yb)):
            if fixed:
                loss = F.cross_entropy(logits, y, ignore_index=-100, reduction="sum") / total_tokens
            else:
                loss = F.cross_entropy(logits, y, ignore_index=-100) / 2
            loss.backward()
            loss_sum += loss.item()
        return loss_sum, torch.cat([m.grad for m in micro])

    naive_loss, naive_grad = accumulated(fixed=False)
    fixed_loss, fixed_grad = accumulated(fixed=True)
    assert naive_loss == pytest.approx(1.0, abs=1e-5) and fixed_loss == pytest.approx(0.70, abs=1e-5)
    assert not torch.allclose(naive_grad, full.grad)
    torch.testing.assert_close(fixed_grad, full.grad)
    # a token of the short micro-batch weighs 1/(2*20) instead of 1/100, 4x a token of the long one (1/(2*80))
    short = (naive_grad[30].abs().sum() / full.grad[30].abs().sum()).item()  # first response token of A
    long = (naive_grad[60].abs().sum() / full.grad[60].abs().sum()).item()  # first response token of B
    assert short == pytest.approx(100 / 40, rel=1e-4) and long == pytest.approx(100 / 160, rel=1e-4)
    assert short / long == pytest.approx(4, rel=1e-4)


def test_backprop_reaches_inputs_through_a_frozen_weight():
    """QLoRA's point: W has no gradient, but dL/dx flows through it (W^T is used)."""
    torch.manual_seed(0)
    w = torch.randn(8, 6)  # frozen, requires_grad=False
    a = torch.zeros(2, 6, requires_grad=True)
    b = torch.randn(8, 2, requires_grad=True)
    x = torch.randn(3, 6, requires_grad=True)
    (x @ w.T + x @ a.T @ b.T).sum().backward()
    assert w.grad is None
    torch.testing.assert_close(x.grad, torch.ones(3, 8) @ w + torch.ones(3, 8) @ b @ a)


# ------------------------------------------------------------ tokenization ---

CORPUS = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}


def corpus_of(prompt: str) -> dict[str, int]:
    return {w: int(c) for w, c in re.findall(r"(\w+): (\d+)", prompt)}


def bpe_train(words: dict[str, int], n_merges: int):
    """Textbook BPE: merge the most frequent adjacent pair (counted with word frequencies), n times."""
    vocab = {tuple(w): c for w, c in words.items()}
    merges = []
    for _ in range(n_merges):
        pairs = Counter()
        for w, c in vocab.items():
            for pair in zip(w, w[1:]):
                pairs[pair] += c
        (best, count), *rest = pairs.most_common()
        assert not rest or rest[0][1] < count, "a tie would make the question ambiguous"
        merges.append((best, count))
        vocab = {tuple(merge_word(list(w), best)): c for w, c in vocab.items()}
    return merges, vocab


def merge_word(symbols: list[str], pair: tuple[str, str]) -> list[str]:
    out, i = [], 0
    while i < len(symbols):
        if tuple(symbols[i : i + 2]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def bpe_encode(word: str, merges) -> list[str]:
    symbols = list(word)
    for pair, _ in merges:  # in rank order
        symbols = merge_word(symbols, pair)
    return symbols


def test_bpe_first_merge(bank):
    x = q(bank, "tok-bpe-first-merge")
    assert corpus_of(x.prompt.en) == CORPUS
    (pair, count), = bpe_train(CORPUS, 1)[0]
    assert pair == ("u", "g") and count == 20
    assert f"`{pair[0]}` + `{pair[1]}` (count {count})" == x.choices[x.correct].en


def test_bpe_merge_count(bank):
    x = q(bank, "tok-bpe-merge-count")
    assert corpus_of(x.prompt.en) == CORPUS
    assert sum(len(w) * c for w, c in CORPUS.items()) == 113
    merges, vocab = bpe_train(CORPUS, 3)
    assert [("".join(p), c) for p, c in merges] == [("ug", 20), ("un", 16), ("hug", 15)]
    assert close(x, sum(len(w) * c for w, c in vocab.items()))


def test_bpe_apply_merges(bank):
    x = q(bank, "tok-bpe-apply-merges")
    merges, _ = bpe_train(CORPUS, 3)
    tokens = bpe_encode("bugs", merges)
    assert tokens == ["b", "ug", "s"]
    assert x.choices[x.correct].en == " ".join(f"`{t}`" for t in tokens)
    assert bpe_encode("hugs", merges) == ["hug", "s"]


def test_wordpiece_first_merge(bank):
    x = q(bank, "tok-wordpiece-vs-bpe")
    assert corpus_of(x.prompt.en) == CORPUS
    words = {tuple([w[0]] + [f"##{ch}" for ch in w[1:]]): c for w, c in CORPUS.items()}
    units, pairs = Counter(), Counter()
    for w, c in words.items():
        for u in w:
            units[u] += c
        for pair in zip(w, w[1:]):
            pairs[pair] += c
    scores = {p: c / (units[p[0]] * units[p[1]]) for p, c in pairs.items()}
    best = max(scores, key=scores.get)
    assert best == ("##g", "##s") and scores[best] == pytest.approx(1 / 20)
    assert all(s == pytest.approx(1 / 36) for p, s in scores.items() if "##u" in p)
    assert x.choices[x.correct].en == f"`{best[0]}` + `{best[1]}`"
    assert max(pairs, key=pairs.get) == ("##u", "##g")  # what frequency alone would pick


def wordpiece_greedy(word: str, vocab: set[str]) -> list[str]:
    """BERT's WordpieceTokenizer: greedy longest-match-first; any unmatched remainder makes the word [UNK]."""
    out, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = ("##" if start else "") + word[start:end]
            if piece in vocab:
                break
            end -= 1
        else:
            return ["[UNK]"]
        out.append(piece)
        start = end
    return out


def test_wordpiece_greedy(bank):
    x = q(bank, "tok-wordpiece-greedy")
    listed = re.findall(r"`([^`]+)`", x.prompt.en.split("but not")[0])
    vocab = set(listed)
    assert "unaff" not in vocab and "unaffable" not in vocab
    got = wordpiece_greedy("unaffable", vocab)
    assert got == ["unaf", "##f", "##able"]
    assert x.choices[x.correct].en == " ".join(f"`{t}`" for t in got)
    assert wordpiece_greedy("unaffable", vocab - {"unaf"}) == ["un", "##aff", "##able"]  # BERT's docstring example
    assert wordpiece_greedy("unaffablez", vocab) == ["[UNK]"]


def unigram_viterbi(word: str, probs: dict[str, float]) -> tuple[list[str], float]:
    best: list[tuple[float, list[str]]] = [(1.0, [])] + [(0.0, [])] * len(word)
    for end in range(1, len(word) + 1):
        for start in range(end):
            piece = word[start:end]
            if piece in probs and best[start][0] * probs[piece] > best[end][0]:
                best[end] = (best[start][0] * probs[piece], best[start][1] + [piece])
    return best[-1][1], best[-1][0]


def test_unigram_viterbi(bank):
    x = q(bank, "tok-unigram-viterbi")
    probs = {p: float(v) for p, v in re.findall(r"([a-z]+) (0\.\d+)", x.prompt.en)}
    assert len(probs) == 8
    pieces, p = unigram_viterbi("hugs", probs)
    assert pieces == ["hu", "gs"] and p == pytest.approx(0.0025)
    assert x.choices[x.correct].en == " ".join(f"`{t}`" for t in pieces)
    assert probs["hug"] * probs["s"] == pytest.approx(0.002) and probs["hug"] * probs["s"] < p  # longest-match loses
    longest_first = ["hug", "s"]  # what greedy longest-match picks from the start
    assert max((p_ for p_ in probs if "hugs".startswith(p_)), key=len) == longest_first[0]
    assert probs["h"] * probs["u"] * probs["g"] * probs["s"] == pytest.approx(1.25e-5)


def test_gpt2_vocab_merges(bank):
    x = q(bank, "tok-gpt2-vocab-merges")
    assert close(x, 50_257 - 256 - 1)


def test_embedding_params(bank):
    x = q(bank, "tok-embedding-params")
    with torch.device("meta"):
        emb = torch.nn.Embedding(128_256, 4096)
        head = torch.nn.Linear(4096, 128_256, bias=False)
        emb2 = torch.nn.Embedding(32_000, 4096)
        head2 = torch.nn.Linear(4096, 32_000, bias=False)
    extra = numel(emb, head) - numel(emb2, head2)
    assert extra == 788_529_152
    assert close(x, extra / 1e9)
    assert round(numel(emb, head) / 1e9, 2) == 1.05 and round(numel(emb2, head2) / 1e9, 2) == 0.26
    assert round(100 * numel(emb, head) / 8.03e9) == 13
    assert round(2 * 128_256 * 4096 / 1e9, 2) == 1.05  # GFLOPs per token for the logits


def test_chinese_bytes(bank):
    x = q(bank, "tok-chinese-bytes")
    text = "的一是不了人在有我他" * 100
    assert len(text) == 1000 and all(0x4E00 <= ord(ch) <= 0x9FFF for ch in text)
    raw = text.encode("utf-8")
    assert all(len(ch.encode("utf-8")) == 3 for ch in set(text))
    assert close(x, len(list(raw)))  # byte-level BPE with no applicable merges: one token per byte


def test_vocab_tradeoffs_compression(bank):
    x = q(bank, "tok-vocab-tradeoffs")
    assert close(x, 100 * (1 - 3.17 / 3.94))
    assert (round(1e6 / 3.17), round(1e6 / 3.94)) == (315_457, 253_807)


# ------------------------------------------------------ alignment (post-training) ---


def test_simpo_loss(bank):
    x = q(bank, "align-simpo-loss")
    beta, gamma = 2.0, 0.5
    r_w, r_l = beta / 10 * -5.0, beta / 20 * -16.0
    assert (r_w, r_l) == (-1.0, -1.6)
    loss = -F.logsigmoid(torch.tensor(r_w - r_l - gamma, dtype=torch.float64)).item()
    assert close(x, loss)
    assert loss == pytest.approx(math.log(1 + math.exp(-0.1)))


def test_majority_vote(bank):
    x = q(bank, "align-majority-vote")
    p, n = 0.6, 5
    exact = 0.0
    for outcome in range(2**n):  # every right/wrong pattern; one shared wrong answer
        k = bin(outcome).count("1")
        if k > n - k:
            exact += p**k * (1 - p) ** (n - k)
    assert exact == pytest.approx(0.68256)
    assert close(x, exact)
    # spreading the wrong answers over many values only helps the correct one
    torch.manual_seed(0)
    trials = 20000
    right = torch.rand(trials, n) < p
    wrong_values = torch.randint(1, 1000, (trials, n))
    answers = torch.where(right, torch.zeros_like(wrong_values), wrong_values)
    wins = 0
    for row in answers.tolist():
        counts = Counter(row)
        wins += counts[0] > max((c for v, c in counts.items() if v != 0), default=0)  # ties count as a loss
    assert wins / trials > exact


def best_of_n_kl(m: int, n: int) -> float:
    """Exact KL(best-of-n || base) for a base uniform over m outcomes with distinct rewards."""
    ranks = torch.arange(1, m + 1, dtype=torch.float64)
    pmf = (ranks / m) ** n - ((ranks - 1) / m) ** n
    return float(torch.xlogy(pmf, pmf * m).sum())


def test_best_of_n_kl(bank):
    x = q(bank, "align-best-of-n-kl")
    n = 16
    formula = math.log(n) - (n - 1) / n
    assert close(x, formula)
    assert best_of_n_kl(200_000, n) == pytest.approx(formula, abs=1e-3)  # exact without ties, many outcomes
    for m in (2, 5, 50):
        assert best_of_n_kl(m, n) < formula  # an upper bound in general
    assert best_of_n_kl(2, 10_000) <= math.log(2)
    # win rate against the base: P(best-of-n beats an independent base sample), at most n/(n+1)
    m = 200_000
    ranks = torch.arange(1, m + 1, dtype=torch.float64)
    pmf = (ranks / m) ** n - ((ranks - 1) / m) ** n
    win = float((pmf * (ranks - 1) / m).sum())
    assert win <= n / (n + 1) and win == pytest.approx(n / (n + 1), abs=1e-4)


def test_distillation_soft_target_gradients_scale_as_one_over_t_squared():
    """Hinton et al.: the soft-target gradient shrinks as 1/T², hence the T² factor."""
    torch.manual_seed(0)
    teacher = torch.randn(50)
    teacher -= teacher.mean()

    def grad_norm(t: float) -> float:
        student = torch.randn(50, generator=torch.Generator().manual_seed(1))
        student = (student - student.mean()).requires_grad_()
        soft = F.softmax(teacher / t, dim=-1)
        loss = -(soft * F.log_softmax(student / t, dim=-1)).sum()
        loss.backward()
        return student.grad.norm().item()

    assert grad_norm(10) / grad_norm(20) == pytest.approx(4, rel=0.05)
