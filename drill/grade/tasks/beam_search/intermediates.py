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
from drill.text.messages import Ev

VOCAB, BEAM, MAX_LEN, BOS, EOS = 6, 3, 4, 0, 1
SEED, EOS_BIAS = 2, 1.0  # the first seed from 0 whose model has all of the above
FLOAT32 = 1e-5  # scores carried in float32 (torch.zeros(1) as the beam's scores) are the same steps at their precision


def finished_after(t: int) -> Ev:
    return Ev("finished, after step {t}", t=t)


def live(beams, t: int) -> list[tuple[Ev, object]]:
    """The live beams after step ``t``: as hypotheses, as prefixes [N, t + 1] and as scores [N]."""
    return [(Ev("live beams, after step {t}", t=t), hypotheses(beams)),
            (Ev("live prefixes, after step {t}", t=t), torch.tensor([seq for seq, _ in beams])),
            (Ev("live scores, after step {t}", t=t), torch.tensor([score for _, score in beams], dtype=torch.float64))]  # fmt: skip


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
        early = any(name == finished_after(2) for name, _ in steps) and not any(name == finished_after(1) for name, _ in steps)
        if beam_reference(m)[2] > MARGIN and early and tokens and tokens[-1] == EOS:
            return m
    raise AssertionError("no toy model for the trace")  # pragma: no cover


def search(m: Model) -> list[tuple[str, object]]:
    """The contract's search (drill.grade.tasks.beam_search.task.beam_reference), step by step."""
    beams, finished = [([m.bos], 0.0)], []
    steps = live(beams, 0)
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
        steps += [(Ev("log-probs, step {t}", t=t), logp), (Ev("candidate totals, step {t}", t=t), totals),
                  (Ev("kept totals, step {t}", t=t), totals.flatten()[order]), (Ev("kept indices, step {t}", t=t), order)]  # fmt: skip
        if done:
            finished = finished + done
            steps.append((finished_after(t), hypotheses(finished)))
        beams = survivors
        if beams:
            steps += live(beams, t)
    seq, score = max(finished + beams, key=lambda h: h[1])
    return [
        *steps,
        (Ev("best hypothesis"), Either((seq, score), (score, seq))),
        (Ev("best hypothesis: tokens with bos"), seq),
        (Ev("best hypothesis: score"), score),
        ("output", (seq[1:], score)),
    ]


def case(ctx) -> ValueCase:
    m = model()
    steps = search(m)
    return ValueCase(ctx.entry, (StepTable(m.table.clone()), m.bos, m.eos, m.beam, m.max_len), steps, rel=FLOAT32)
