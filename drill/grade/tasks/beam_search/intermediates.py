"""What ``drill grade --trace`` compares the user's beam_search against: a seeded toy model (vocab 6, beam 3,
max_len 4) on which every choice wins by a margin, an eos candidate is kept at step 2 and the best answer is
a finished hypothesis. Per step: the log-probs, the candidate totals (beam scores + log-probs), the beam_size
best totals and their flat indices, the finished hypotheses and the live beams (as (tokens, score) or
(score, tokens), in any order; as prefixes [N, t] and scores [N] too); then the best hypothesis and the output.
"""

from __future__ import annotations

import functools

import torch

from drill.grade.tasks.beam_search.task import MARGIN, Model, beam_reference
from drill.grade.trace_values import Either, Unordered, ValueCase
from drill.grade.user.toys import log_probs
from drill.grade.user.wire import StepTable

VOCAB, BEAM, MAX_LEN, BOS, EOS = 6, 3, 4, 0, 1
SEED, EOS_BIAS = 2, 1.0  # the first seed from 0 whose model has all of the above
FLOAT32 = 1e-5  # scores carried in float32 (torch.zeros(1) as the beam's scores) are the same steps at their precision
WORDS = {"log-probs": " log-probs", "candidate totals": "候选总分", "kept totals": "保留的总分", "kept indices": "保留的展平下标",
         "finished": "已完成的假设", "live beams": "仍在扩展的 beam", "live prefixes": "仍在扩展的前缀", "live scores": "仍在扩展的分数"}  # fmt: skip


def hypotheses(hyps) -> Either:
    return Either(Unordered([(seq, score) for seq, score in hyps]), Unordered([(score, seq) for seq, score in hyps]))


@functools.cache
def model() -> Model:
    for seed in range(SEED, SEED + 500):
        table = 1.5 * torch.randn(2, VOCAB, VOCAB, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
        table[0, :, EOS] += EOS_BIAS
        m = Model(table, BOS, EOS, BEAM, MAX_LEN)
        steps = search(m)
        tokens = beam_reference(m)[0]
        early = any(name == "finished, after step 2" for name, _ in steps) and not any(
            name == "finished, after step 1" for name, _ in steps
        )
        if beam_reference(m)[2] > MARGIN and early and tokens and tokens[-1] == EOS:
            return m
    raise AssertionError("no toy model for the trace")  # pragma: no cover


def search(m: Model) -> list[tuple[str, object]]:
    """The contract's search (drill.grade.tasks.beam_search.task.beam_reference), step by step."""
    beams, finished = [([m.bos], 0.0)], []
    steps = [("live beams, after step 0", hypotheses(beams)), ("live prefixes, after step 0", torch.tensor([[m.bos]])),
             ("live scores, after step 0", torch.zeros(1, dtype=torch.float64))]  # fmt: skip
    for t in range(1, m.max_len + 1):
        if not beams:
            break
        logp = log_probs(m.table, torch.tensor([seq for seq, _ in beams]))
        totals = torch.tensor([score for _, score in beams], dtype=torch.float64)[:, None] + logp
        order = torch.sort(totals.flatten(), descending=True, stable=True).indices[: m.beam].tolist()
        vocab = logp.shape[-1]
        survivors, done = [], []
        for j in order:
            i, token = divmod(j, vocab)
            hyp = (beams[i][0] + [token], totals[i, token].item())
            (done if token == m.eos else survivors).append(hyp)
        steps += [(f"log-probs, step {t}", logp), (f"candidate totals, step {t}", totals),
                  (f"kept totals, step {t}", totals.flatten()[order]), (f"kept indices, step {t}", order)]  # fmt: skip
        if done:
            finished = finished + done
            steps.append((f"finished, after step {t}", hypotheses(finished)))
        beams = survivors
        if beams:
            steps += [(f"live beams, after step {t}", hypotheses(beams)),
                      (f"live prefixes, after step {t}", torch.tensor([seq for seq, _ in beams])),
                      (f"live scores, after step {t}", torch.tensor([score for _, score in beams], dtype=torch.float64))]  # fmt: skip
    seq, score = max(finished + beams, key=lambda h: h[1])
    return [
        *steps,
        ("best hypothesis", Either((seq, score), (score, seq))),
        ("best hypothesis: tokens with bos", seq),
        ("best hypothesis: score", score),
        ("output", (seq[1:], score)),
    ]


def chinese(steps) -> dict[str, str]:
    words = {
        "best hypothesis": "最好的假设",
        "best hypothesis: tokens with bos": "最好的假设：含 bos 的 token",
        "best hypothesis: score": "最好的假设：分数",
    }
    for name, _ in steps:
        what, _, when = name.partition(", ")
        if what in WORDS:
            number = "".join(c for c in when if c.isdigit())
            words[name] = f"第 {number} 步后{WORDS[what]}" if when.startswith("after") else f"第 {number} 步的{WORDS[what]}"
    return words


def case(ctx) -> ValueCase:
    m = model()
    steps = search(m)
    return ValueCase(ctx.entry, (StepTable(m.table.clone()), m.bos, m.eos, m.beam, m.max_len), steps, zh=chinese(steps),
                     rel=FLOAT32)
