"""The ``beam_search`` task: ``beam_search(step_fn, bos_id, eos_id, beam_size, max_len) -> (tokens, score)``.

``step_fn`` is the judge's, but the user's code calls it, and a callable cannot cross the wire: the
judge sends a seeded toy model as its table (wire.StepTable) and the user side builds the callable
from it (drill.grade.user.toys). The judge runs exact beam search on the same float64 model. Its
seeds are chosen so that every choice the correct search makes (the beam_size-th candidate against
the next, the best final hypothesis against the runner-up) wins by at least MARGIN, so the tokens
are compared exactly and the score at its own precision: to float64 rounding, or by the tolerance rule
at float32 for a float32 score (a 0-d tensor, or ``.item()`` of one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import chain, combinations

import torch

from drill.grade.checks.compare import distinct
from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.remote import UserCodeError
from drill.grade.tolerance import judge
from drill.grade.user.toys import log_probs
from drill.grade.user.wire import StepTable
from drill.text.messages import Ev

MARGIN = 1e-6
SCORE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Variant:
    # total | last (each hypothesis scored by its last step's log-prob only) | last-rank (the extensions ranked by the
    # last step's log-prob, while each hypothesis carries its total and the final pick is by that total)
    score: str = "total"
    # leave (correct) | expand (eos extended like any token) | kept (a finished hypothesis is stored and also stays
    # live, taking a beam slot: its answer is always right, so not a hypothesis; finished_check sees it) | drop (never
    # returned) | drop-last (those finishing on the last step are lost: retired at the start of a next step that never
    # comes, or "cut off at max_len")
    finished: str = "leave"
    copies: bool = False  # the beam starts as beam_size copies of [bos]
    length: str = ""  # the final pick by a length-normalised score: mean (total / tokens), bos (total / (tokens + 1)), gnmt
    normalised: bool = False  # with ``length``: the score returned is the normalised one, not the total


def length_key(total: float, tokens: int, length: str) -> float:
    """The score a length-normalised search ranks its final hypotheses by (``tokens`` without bos)."""
    if length == "mean":
        return total / max(tokens, 1)
    if length == "bos":  # Hugging Face's length_penalty=1 over the whole sequence, bos included
        return total / (tokens + 1)
    if length == "gnmt":  # Wu et al. 2016: ((5 + |y|) / 6) ** 0.6
        return total / ((5 + tokens) / 6) ** 0.6
    return total


@dataclass(frozen=True)
class Model:
    table: torch.Tensor  # [2, V, V] float64; hashed by identity (the search cache's key)
    bos: int
    eos: int
    beam: int
    max_len: int


def beam_reference(m: Model, variant: Variant = Variant()):
    """(tokens, score, margin): the search the contract defines, and the smallest margin of its choices."""
    return search(m, variant)[:3]


@lru_cache(maxsize=1024)  # a model is checked, probed and explained with the same searches (and their pairs)
def search(m: Model, variant: Variant = Variant()):
    """(tokens, score, margin, asked): beam_reference's answer, and the prefixes it asks the model about."""
    beams = [([m.bos], 0.0)] * (m.beam if variant.copies else 1)
    finished: list[tuple[list[int], float]] = []
    closest, asked = math.inf, []
    for step in range(m.max_len):
        if not beams:
            break
        asked += [tuple(seq) for seq, _ in beams]
        logp = log_probs(m.table, torch.tensor([seq for seq, _ in beams]))  # [N, V]
        scores = torch.tensor([0.0 if variant.score != "total" else score for _, score in beams], dtype=torch.float64)
        keys = (scores[:, None] + logp).flatten()
        order = torch.sort(keys, descending=True, stable=True).indices[: m.beam + 1].tolist()  # ties: (beam, token) order
        vocab = logp.shape[-1]
        candidates = [(keys[j].item(), *divmod(j, vocab)) for j in order]
        if len(candidates) > m.beam:
            closest = min(closest, candidates[m.beam - 1][0] - candidates[m.beam][0])
        survivors = []
        for key, i, v in candidates[: m.beam]:
            seq, total = beams[i][0] + [v], key if variant.score != "last-rank" else beams[i][1] + logp[i, v].item()
            if variant.finished == "kept" and v == m.eos:
                finished.append((seq, total))
            if v == m.eos and variant.finished not in ("expand", "kept"):
                if variant.finished == "leave" or (variant.finished == "drop-last" and step < m.max_len - 1):
                    finished.append((seq, total))
            else:
                survivors.append((seq, total))
        beams = survivors
    hypotheses = dict((tuple(seq), total) for seq, total in finished + beams)  # "kept" holds a finished one twice
    keyed = [(length_key(total, len(seq) - 1, variant.length), list(seq), total) for seq, total in hypotheses.items()]
    pool = sorted(keyed, key=lambda h: -h[0])
    if not pool:
        return [], -math.inf, closest, asked
    if len(pool) > 1:
        closest = min(closest, pool[0][0] - pool[1][0])
    key, seq, total = pool[0]
    return seq[1:], key if variant.normalised else total, closest, asked


def make_model(ctx: Context, offset: int, vocab: int, beam: int, max_len: int, bos=0, eos=1, eos_bias=0.0, scale=1.5) -> Model:
    """The first seeded toy model on which the correct search wins every choice by MARGIN."""
    for attempt in range(200):
        gen = ctx.generator(offset * 1000 + attempt)
        table = scale * torch.randn(2, vocab, vocab, generator=gen, dtype=torch.float64)
        table[0, :, eos] += eos_bias
        model = Model(table, bos, eos, beam, max_len)
        if beam_reference(model)[2] > MARGIN:
            return model
    raise AssertionError("no well-separated toy model")  # pragma: no cover


def drawn_model(ctx: Context) -> Model:
    """Vocabulary, beam width, max_len and the two special ids drawn from the grade's seed, on the first toy
    model where the width matters (greedy answers otherwise): a search right only at the fixed configurations
    (a hard-coded width, vocabulary or eos id) fails here."""
    vocab, beam, max_len = ctx.sizes(11, (9, 16), (2, 7), (3, 8), avoid=(12,))  # V never a fixed check's
    bos, eos = ctx.sizes(12, (0, 8), (0, 8))
    for offset in range(1100, 1120):
        model = make_model(ctx, offset, vocab, beam, max_len, bos=bos, eos=eos, eos_bias=0.5)
        if beam_reference(model)[:2] != beam_reference(Model(model.table, bos, eos, 1, max_len))[:2]:
            break
    return model


def result_of(value, vocab: int):
    """(tokens, score, precision) from what the user returned: the score's own precision is a tensor's dtype, or
    float32 for a Python float that is exactly a float32 (``.item()`` of a float32 sum), else float64."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise WrongShape(Ev("returned {type}, expected a pair (tokens, score)", type=type(value).__name__))
    tokens, score = value
    if isinstance(tokens, torch.Tensor):
        if tokens.dim() != 1 or tokens.dtype.is_floating_point or tokens.dtype == torch.bool:
            raise WrongShape(Ev("tokens is a {dtype} tensor of shape {shape}, expected 1-D token ids",
                                dtype=str(tokens.dtype), shape=list(tokens.shape)))  # fmt: skip
        tokens = tokens.tolist()
    if not (isinstance(tokens, (list, tuple)) and all(type(t) is int for t in tokens)):
        raise WrongShape(Ev("tokens is {type}, expected a list (or 1-D int tensor) of token ids", type=type(tokens).__name__))
    precision = torch.float64
    if isinstance(score, torch.Tensor):
        if score.numel() != 1:
            raise WrongShape(Ev("score is a tensor of shape {shape}, expected one number", shape=list(score.shape)))
        precision = score.dtype if score.dtype.is_floating_point else torch.float64
        score = score.item()
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise WrongShape(Ev("score is {type}, expected a number (the total log-prob)", type=type(score).__name__))
    bad = [t for t in tokens if not 0 <= t < vocab]
    if bad:
        raise WrongShape(Ev("tokens holds {token}, outside the vocabulary 0..{last}", token=bad[0], last=vocab - 1))
    score = float(score)
    if precision == torch.float64 and math.isfinite(score) and torch.tensor(score, dtype=torch.float32).item() == score:
        precision = torch.float32
    return list(tokens), score, precision


def run(ctx: Context, m: Model, log: torch.Tensor | None = None):
    """(tokens, score, the score's precision); the prefixes' token pairs counted into ``log`` if given."""
    value = ctx.call(ctx.entry, StepTable(m.table.clone(), log), m.bos, m.eos, m.beam, m.max_len)  # a copy: changes come back
    return result_of(value, m.table.shape[-1])


def sequence_score(m: Model, tokens: list[int], dtype=torch.float64) -> float:
    """The total log-prob of bos + tokens under the toy model, summed step by step in ``dtype``."""
    seq, total = [m.bos], torch.zeros((), dtype=dtype)
    for t in tokens:
        total = total + log_probs(m.table, torch.tensor([seq]))[0, t].to(dtype)
        seq.append(t)
    return total.item()


def score_check(m: Model, where: Ev, got: list[int], score: float, precision, want: float):
    """The score against the float64 total; one in a lower precision by the tolerance rule at that precision."""
    if precision == torch.float64:
        ok, allowed = abs(score - want) <= SCORE_TOLERANCE * max(1.0, abs(want)), None
    else:
        verdict = judge(torch.tensor([score]), torch.tensor([want]), torch.tensor([sequence_score(m, got, precision)], dtype=precision))
        ok, allowed = verdict.ok, verdict.allowed
    dtype = str(precision)[6:]
    if not ok:
        mine, theirs = distinct(score, want)
        if allowed is None:
            return outcome("fail", Ev("{where}: tokens {got} are right but the score is {mine}, expected their total log-prob {theirs}",
                                      where=where, got=got, mine=mine, theirs=theirs))  # fmt: skip
        return outcome("fail", Ev("{where}: tokens {got} are right but the score is {mine}, expected their total log-prob {theirs} "
                                  "(a {dtype} score, judged at {dtype}: allowed {allowed:.2g})",
                                  where=where, got=got, mine=mine, theirs=theirs, dtype=dtype, allowed=allowed))  # fmt: skip
    ended = Ev("finished with eos") if got and got[-1] == m.eos else Ev("still live at max_len")
    if allowed is None:
        return outcome("pass", Ev("{where}: tokens {got} ({ended}), score {score:.4f}, exact",
                                  where=where, got=got, ended=ended, score=score))  # fmt: skip
    return outcome("pass", Ev("{where}: tokens {got} ({ended}), score {score:.4f}, within {allowed:.2g}: a {dtype} score, judged at the "
                              "precision it was computed in", where=where, got=got, ended=ended, score=score, allowed=allowed, dtype=dtype))  # fmt: skip


def search_check(ctx: Context, m: Model, drawn: bool = False, log: torch.Tensor | None = None):
    want, want_score, _ = beam_reference(m)
    got, score, precision = run(ctx, m, log)
    where = Ev("beam {beam}, max_len {max_len}", beam=m.beam, max_len=m.max_len)
    if drawn:  # every size named, so a failure at --seed N reads as its own repro
        where = Ev("a configuration drawn from the seed (V={v}, bos_id={bos}, eos_id={eos}): {where}",
                   v=m.table.shape[-1], bos=m.bos, eos=m.eos, where=where)  # fmt: skip
    if got != want:
        at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        theirs = sequence_score(m, got) if got and all(t != m.eos for t in got[:-1]) else None
        if theirs is None:
            return outcome("fail", Ev("{where}: expected tokens {want} (score {score:.4f}), got {got}; they differ at position {at}",
                                      where=where, want=want, score=want_score, got=got, at=at))  # fmt: skip
        return outcome("fail", Ev("{where}: expected tokens {want} (score {score:.4f}), got {got}; they differ at position {at} "
                                  "(its total log-prob is {theirs:.4f}, the best hypothesis's {score:.4f})",
                                  where=where, want=want, score=want_score, got=got, at=at, theirs=theirs))  # fmt: skip
    return score_check(m, where, got, score, precision, want_score)


def finished_check(ctx: Context, m: Model):
    """The prefixes the search asks step_fn about: one that goes on after eos is a finished hypothesis extended.
    The answer can still be right (with total log-probs no extension outscores the finished hypothesis it came
    from), so the prefixes are the evidence. On this model the contract's search has a live hypothesis at every
    step and beam_size < V, so a search that keeps finished rows in a fixed-size beam at -inf never extends one."""
    log = torch.zeros(m.table.shape[1:], dtype=torch.int64)
    result = search_check(ctx, m, log=log)
    after = [v for v in range(m.table.shape[-1]) if v != m.eos and log[m.eos, v] > 0]
    if not after or result.status != "pass":
        return result
    return outcome("fail", Ev("beam {beam}, max_len {max_len}: step_fn was asked about prefixes that go on after eos_id {eos} (eos "
                              "followed by token {token}): a finished hypothesis stayed in the beam and was extended, taking a slot "
                              "that a live hypothesis should have had", beam=m.beam, max_len=m.max_len, eos=m.eos, token=after[0]),
                   "beam-finished-expanded")  # fmt: skip


def shape_check(ctx: Context, m: Model):
    value = ctx.call(ctx.entry, StepTable(m.table.clone()), m.bos, m.eos, m.beam, m.max_len)  # a copy: changes come back
    tokens = result_of(value, m.table.shape[-1])[0]
    if tokens and tokens[0] == m.bos and beam_reference(m)[0][:1] != [m.bos]:
        return outcome("fail", Ev("tokens {tokens} start with bos_id {bos}: return them without it", tokens=tokens, bos=m.bos))
    if len(tokens) > m.max_len:
        return outcome("fail", Ev("{n} tokens after max_len = {max_len} steps", n=len(tokens), max_len=m.max_len))
    return outcome("pass", Ev("(tokens, score): {n} ids and a number", n=len(tokens)))


@dataclass(frozen=True)
class Probe:
    model: Model

    def encode(self, tokens, score) -> torch.Tensor:
        width = self.model.max_len + 1
        flat = [len(tokens), *tokens][:width]
        return torch.tensor(flat + [-1] * (width - len(flat)) + [score if math.isfinite(score) else -1e6], dtype=torch.float64)

    def user(self, ctx: Context):
        """A search that raises here (``max`` of an empty list) returned no hypothesis: what a search that lost
        every one predicts, ([], -inf)."""
        try:
            return self.encode(*run(ctx, self.model)[:2])
        except UserCodeError as exc:
            if exc.kind != "user":
                raise
            return self.encode([], -math.inf)

    def expected(self, variant):
        variant = variant if isinstance(variant, Variant) else Variant()  # the engine's baseline means "correct"
        tokens, score, _ = beam_reference(self.model, variant)
        return self.encode(tokens, score)


HYPOTHESES = (
    ("beam-last-step-score", Variant(score="last")),
    ("beam-last-step-score", Variant(score="last-rank")),
    ("beam-finished-expanded", Variant(finished="expand")),
    ("beam-finished-dropped", Variant(finished="drop")),
    ("beam-finished-dropped", Variant(finished="drop-last")),
    ("beam-duplicate-hypotheses", Variant(copies=True)),
    *(("beam-length-normalised", Variant(length=form, normalised=normalised))
      for form in ("mean", "bos", "gnmt") for normalised in (False, True)),
)


def slot_model(ctx: Context) -> Model:
    """A toy model on which a search that keeps finished hypotheses live extends one past eos into its beam, while the
    contract's search has a live hypothesis at every step (see finished_check)."""
    kept = Variant(finished="kept")
    for offset in range(1400, 1600):
        model = make_model(ctx, offset, 7, 3, 5, eos_bias=1.0)
        live_every_step = len({len(seq) for seq in search(model)[3]}) == model.max_len
        if live_every_step and search(model, kept)[2] > MARGIN and any(
            a == model.eos != b for seq in search(model, kept)[3] for a, b in zip(seq, seq[1:])
        ):
            return model
    raise AssertionError("no toy model where a finished hypothesis takes a slot")  # pragma: no cover


def last_step_model(ctx: Context, variants=()) -> Model:
    """A toy model whose best hypothesis finishes with eos on the very last step, where the runner-up is still live
    (a search that loses what finishes at max_len returns the runner-up), and on which each of ``variants`` makes its
    own choices by MARGIN too."""
    for offset in range(1200, 1400):
        model = make_model(ctx, offset, 7, 3, 4, eos_bias=0.5)
        tokens = beam_reference(model)[0]
        if len(tokens) == model.max_len and tokens[-1] == model.eos and all(beam_reference(model, v)[2] > MARGIN for v in variants):
            return model
    raise AssertionError("no toy model that finishes on its last step")  # pragma: no cover


class BeamSearchTask:
    name = "beam_search"

    def checks(self, ctx: Context) -> list[CheckDef]:
        mk = partial(make_model, ctx)
        s = partial(search_check, ctx)
        return [
            CheckDef("shape.return", "shape", partial(shape_check, ctx, mk(1, 6, 3, 5))),
            CheckDef("numerical.beam-3", "numerical", partial(s, mk(2, 7, 3, 6))),
            CheckDef("numerical.beam-5", "numerical", partial(s, mk(3, 12, 5, 7, eos_bias=0.5))),
            CheckDef("numerical.greedy", "numerical", partial(s, mk(4, 8, 1, 6))),
            CheckDef("numerical.eos-early", "numerical", partial(s, mk(5, 6, 3, 8, eos_bias=2.0))),
            CheckDef("numerical.no-eos", "numerical", partial(s, mk(6, 6, 3, 5, eos_bias=-30.0))),
            CheckDef("numerical.max-len-1", "numerical", partial(s, mk(7, 5, 2, 1))),
            CheckDef("numerical.eos-at-max-len", "numerical", partial(s, last_step_model(ctx))),
            CheckDef("numerical.finished-leave-beam", "numerical", partial(finished_check, ctx, slot_model(ctx))),
            CheckDef("numerical.drawn", "numerical", partial(s, drawn_model(ctx), drawn=True)),
            CheckDef("stability.long-sequence", "stability", partial(s, mk(8, 20, 3, 40, eos_bias=-30.0, scale=0.8))),
            CheckDef("robustness.other-ids", "robustness", partial(s, mk(9, 7, 3, 6, bos=5, eos=2, eos_bias=1.0))),
            CheckDef("robustness.beam-wider-than-vocab", "robustness", partial(s, mk(10, 4, 6, 4, eos_bias=0.5))),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        """Toy models on which every hypothesis makes its own choices by MARGIN too (the copies' ties
        are between identical hypotheses, so harmless), until each hypothesis differs from the
        correct search, and from every hypothesis of another code, on at least one of them (a length
        normalisation that picks what greedy picks on one model is told apart on another)."""
        variants = [Variant(), *(v for _, v in HYPOTHESES)]
        code = {v: c for c, v in HYPOTHESES}
        apart = {(a, b) for a, b in combinations(variants, 2) if code.get(a) != code.get(b)}
        probes, drawn = [], (make_model(ctx, offset, 6 + offset % 3, 3 + offset % 2, 5 + offset % 3,
                                        eos_bias=(offset % 4) * 0.5 - 0.5) for offset in range(20, 120))  # fmt: skip
        for model in chain([last_step_model(ctx, [v for _, v in HYPOTHESES if not v.copies])], drawn):
            if not apart and len(probes) >= 3:
                break
            if any(beam_reference(model, v)[2] <= MARGIN for _, v in HYPOTHESES if not v.copies):
                continue
            out = {v: beam_reference(model, v)[:2] for v in variants}
            told = {(a, b) for a, b in apart if out[a] != out[b]}
            if told or len(probes) < 3:
                apart -= told
                probes.append(Probe(model))
        return probes

    def hypotheses(self, ctx: Context):
        return list(HYPOTHESES)


TASK = BeamSearchTask()
