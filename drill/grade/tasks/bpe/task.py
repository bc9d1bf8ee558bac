"""The ``bpe`` task: ``train_bpe(text, n_merges) -> merges`` and ``encode(text, merges) -> ids``.

Byte-level BPE without pre-tokenisation, as in minbpe: training starts from the UTF-8 bytes,
counts every adjacent pair (overlapping ones included), merges the most frequent one left to
right without overlap and gives merge k the id 256 + k. Two tie rules are in common use and
both are accepted, whichever the user's merges follow throughout: the pair that occurs first
(minbpe's dict order, Counter.most_common) and the smallest pair of ids (a sort, torch.unique).
Everything here is integers, so every check is exact, and a mismatch is shown as bytes:
"merge 7: expected (b'a', b'b'), got (b'b', b'c')".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from drill.grade.context import CheckDef, Context, WrongShape, outcome
from drill.grade.remote import UserCodeError
from drill.grade.user.wire import Handle
from drill.text.messages import Ev

TIES = ("first", "smallest")
ENTRY_ENCODE = "encode"

CORPUS = (
    "the cat sat on the mat; the cat ate the rat. that cat, the fat cat, sat on that mat again and again. "  # shown as is
    "aaa aaaa aaaaa banana bandana"
)
UNICODE = "naïve café, 你好，世界！你好 🙂🙂 — über größe straße"  # shown as is
ENCODED = "你好世界 café naïve"  # shown as is: text to encode with merges learnt on UNICODE
ACCENTED = "café 你好"  # shown as is
UNSEEN = "a bat and a cat meet at the bath mat"  # shown as is
# Merges where rank, frequency and position order disagree: "bc" is learned before "ab", which is
# more frequent in RANKED_TEXT and comes first in it.
A, B, C, SP = 97, 98, 99, 32
RANKED = ((B, C), (A, B), (A, 256), (257, SP), (258, SP))
RANKED_TEXT = "abcab abc ab ab cab"  # shown as is
DRAWN_ALPHABET = "aaaabcdé  "


@dataclass(frozen=True)
class Variant:
    overlap: str = ""  # how a merge takes overlapping windows (see merge); "" is correct
    code_points: bool = False  # start from ord(c) instead of the UTF-8 bytes
    encode_order: str = "rank"  # rank | frequency (most frequent mergeable pair) | leftmost (first mergeable pair)


def initial_ids(text: str, variant: Variant = Variant()) -> list[int]:
    return [ord(c) for c in text] if variant.code_points else list(text.encode("utf-8"))


def merge(ids: list[int], pair: tuple[int, int], new: int, variant: Variant = Variant()) -> list[int]:
    """Replace the pair left to right without overlap, or as one of the overlapping forms candidates write:
    ``advance`` moves on by one after a match (every match's second token is kept again: aaa -> [aa, aa, a]),
    ``back`` merges a token with the previous input token even when that one was already merged (a run
    collapses: aaaa -> [aa]), ``windows`` replaces every matching window and drops each match's second
    token (aaaa -> [aa, aa, aa])."""
    if variant.overlap == "back":
        out = ids[:1]
        for prev, token in zip(ids, ids[1:]):
            if (prev, token) == pair:
                out[-1] = new
            else:
                out.append(token)
        return out
    if variant.overlap == "windows":
        starts = [(a, b) == pair for a, b in zip(ids, ids[1:])] + [False]
        return [new if starts[i] else t for i, t in enumerate(ids) if starts[i] or i == 0 or not starts[i - 1]]
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new)
            i += 1 if variant.overlap == "advance" else 2
        else:
            out.append(ids[i])
            i += 1
    return out


def pair_counts(ids: list[int]) -> dict[tuple[int, int], int]:
    counts: dict[tuple[int, int], int] = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def train_reference(text: str, n_merges: int, ties: str = "first", variant: Variant = Variant()) -> list[tuple[int, int]]:
    ids, merges = initial_ids(text, variant), []
    for k in range(n_merges):
        counts = pair_counts(ids)
        if not counts:
            break
        if ties == "first":
            best = max(counts, key=counts.get)  # dict order: the first occurrence wins a tie
        else:
            best = max(counts, key=lambda p: (counts[p], -p[0], -p[1]))
        merges.append(best)
        ids = merge(ids, best, 256 + k, variant)
    return merges


def encode_reference(text: str, merges, variant: Variant = Variant()) -> list[int]:
    ranks = {tuple(p): k for k, p in enumerate(merges)}
    ids = initial_ids(text, variant)
    while len(ids) >= 2:
        counts = pair_counts(ids)
        present = [p for p in counts if p in ranks]
        if not present:
            break
        if variant.encode_order == "frequency":
            pair = max(present, key=counts.get)
        elif variant.encode_order == "leftmost":
            pair = present[0]
        else:
            pair = min(present, key=ranks.get)
        ids = merge(ids, pair, 256 + ranks[pair], variant)
    return ids


def vocab(merges) -> dict[int, bytes]:
    table = {i: bytes([i]) for i in range(256)}
    for k, (a, b) in enumerate(merges):
        table[256 + k] = table.get(a, b"?") + table.get(b, b"?")
    return table


def show(token: int, table: dict[int, bytes]) -> Ev:
    if token in table:
        return Ev("{token_bytes}", token_bytes=repr(table[token]))
    return Ev("<id {token}, not defined yet>", token=token)


def pairs_of(value, what: str = "train_bpe") -> list[tuple[int, int]]:
    """The user's merges as int pairs: a list of 2-tuples or 2-lists, or an int tensor [n, 2]."""
    if isinstance(value, Handle):
        raise WrongShape(Ev("{what} returned an object that is not plain data (a dict keyed by pairs?): return a list of (a, b) pairs "
                            "of token ids, in merge order", what=what))  # fmt: skip
    if isinstance(value, torch.Tensor):
        if value.dim() != 2 or value.shape[-1] != 2 or value.dtype.is_floating_point:
            raise WrongShape(Ev("{what} returned a {dtype} tensor of shape {shape}, expected int pairs [n, 2]", what=what,
                                dtype=str(value.dtype), shape=list(value.shape)))  # fmt: skip
        return [tuple(p) for p in value.tolist()]
    if isinstance(value, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 and all(type(t) is int for t in p) for p in value
    ):
        return [tuple(p) for p in value]
    raise WrongShape(Ev("{what} returned {type}, expected a list of (a, b) pairs of token ids in merge order", what=what,
                        type=type(value).__name__))  # fmt: skip


def ids_of(value) -> list[int]:
    if isinstance(value, torch.Tensor) and value.dim() == 1 and not value.dtype.is_floating_point:
        return [int(t) for t in value.tolist()]
    if isinstance(value, (list, tuple)) and all(type(t) is int for t in value):
        return list(value)
    raise WrongShape(Ev("encode returned {type}, expected a list (or 1-D int tensor) of token ids", type=type(value).__name__))


def train(ctx: Context, text: str, n: int) -> list[tuple[int, int]]:
    return pairs_of(ctx.call(ctx.entry, text, n))


def encoder(ctx: Context):
    handle = ctx.user.entry(ENTRY_ENCODE)
    if handle is None:
        raise UserCodeError(Ev("the file does not define encode(text, merges)"), "not-implemented")
    return handle


def encode(ctx: Context, text: str, merges) -> list[int]:
    return ids_of(ctx.call(encoder(ctx), text, [tuple(p) for p in merges]))


def merge_mismatch(got, want) -> Ev | None:
    mine, theirs = vocab(got), vocab(want)
    for k, (g, w) in enumerate(zip(got, want)):
        if tuple(g) != tuple(w):
            return Ev("merge {k}: expected ({want_a}, {want_b}), got ({got_a}, {got_b}) (ids {want} vs {got})", k=k,
                      want_a=show(w[0], theirs), want_b=show(w[1], theirs), got_a=show(g[0], mine), got_b=show(g[1], mine),
                      want=tuple(w), got=tuple(g))  # fmt: skip
    if len(got) != len(want):
        return Ev("{n} merges, expected {want}", n=len(got), want=len(want))
    return None


TIE_RULES = {"first": Ev("ties to the first pair"), "smallest": Ev("ties to the smallest pair")}


def train_check(ctx: Context, text: str, n: int):
    got = train(ctx, text, n)
    wanted = {ties: train_reference(text, n, ties) for ties in TIES}
    for ties, want in wanted.items():
        if got == want:
            rule = Ev("either tie rule") if wanted["first"] == wanted["smallest"] else TIE_RULES[ties]
            return outcome("pass", Ev("{n} merges exact ({rule})", n=n, rule=rule))
    # Report against the rule the user's merges follow the longest.
    agree = {t: next((k for k, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want))) for t, want in wanted.items()}
    rule = max(TIES, key=agree.get)
    return outcome("fail", merge_mismatch(got, wanted[rule]))


def ids_mismatch(got: list[int], want: list[int], merges) -> Ev:
    table = vocab(merges)
    at = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
    if at == min(len(got), len(want)):
        return Ev("{n} ids, expected {want} (they agree on the first {at})", n=len(got), want=len(want), at=at)
    return Ev("id {at}: expected {want} = {want_bytes}, got {got} = {got_bytes} ({n} ids, expected {expected})", at=at, want=want[at],
              want_bytes=show(want[at], table), got=got[at], got_bytes=show(got[at], table), n=len(got), expected=len(want))  # fmt: skip


def encode_check(ctx: Context, text: str, train_text: str, n: int, merges=None):
    merges = train_reference(train_text, n) if merges is None else list(merges)
    got, want = encode(ctx, text, merges), encode_reference(text, merges)
    if got != want:
        return outcome("fail", ids_mismatch(got, want, merges))
    return outcome("pass", Ev("{bytes} bytes -> {ids} ids, exact", bytes=len(text.encode()), ids=len(got)))


def drawn_text(ctx: Context, offset: int, length: int) -> str:
    """``length`` characters from a small alphabet (runs of "a" for overlapping pairs, a 2-byte "é", spaces)."""
    picks = torch.randint(len(DRAWN_ALPHABET), (length,), generator=ctx.generator(offset)).tolist()
    return "".join(DRAWN_ALPHABET[i] for i in picks)


def drawn_check(ctx: Context, check):
    """``check`` (train_check or encode_check) on a corpus and a merge count drawn from the seed."""
    n, length = ctx.sizes(20, (7, 24), (50, 160), avoid=(12, 25))  # never a merge count of the fixed checks
    corpus = drawn_text(ctx, 21, length)
    result = check(ctx, corpus, n) if check is train_check else check(ctx, drawn_text(ctx, 22, length // 2), corpus, n)
    drawn = Ev("a configuration drawn from the seed (n_merges={n}, length={length})", n=n, length=length)
    result.message = Ev("{label}: {what}", label=drawn, what=result.message)
    return result


def roundtrip_check(ctx: Context):
    """The user's own merges and ids decode to the text's bytes (judged with the user's vocabulary)."""
    merges = train(ctx, CORPUS, 30)
    table = vocab(merges)
    ids = encode(ctx, UNSEEN + UNICODE, merges)
    unknown = [t for t in ids if t not in table]
    if unknown:
        return outcome("fail", Ev("encode returned id {id}, which no merge of train_bpe defines", id=unknown[0]))
    decoded = b"".join(table[t] for t in ids)
    want = (UNSEEN + UNICODE).encode("utf-8")
    if decoded != want:
        at = next((i for i, (a, b) in enumerate(zip(decoded, want)) if a != b), min(len(decoded), len(want)))
        around = slice(max(0, at - 8), at + 8)
        return outcome("fail", Ev("decoding your ids gives {got} where the text's bytes are {want}", got=repr(decoded[around]),
                                  want=repr(want[around])))  # fmt: skip
    return outcome("pass", Ev("your {merges} merges and {ids} ids decode back to the text's {bytes} bytes", merges=len(merges), ids=len(ids),
                              bytes=len(want)))  # fmt: skip


def empty_check(ctx: Context):
    got = encode(ctx, "", train_reference(CORPUS, 5))
    if got:
        return outcome("fail", Ev("encode('') returned {got}, expected []", got=got))
    single = encode(ctx, "é", train_reference(CORPUS, 5))
    if single != [0xC3, 0xA9]:
        return outcome("fail", Ev("encode('é') returned {got}, expected its UTF-8 bytes [195, 169]", got=single))
    return outcome("pass", Ev("encode('') is [], encode('é') its two UTF-8 bytes"))


def lists_check(ctx: Context):
    merges = [tuple(p) for p in train_reference(CORPUS, 12)]
    as_lists = ids_of(ctx.call(encoder(ctx), UNSEEN, [list(p) for p in merges]))
    as_tuples = ids_of(ctx.call(encoder(ctx), UNSEEN, merges))
    if as_lists != as_tuples:
        return outcome("fail", Ev("encode gives different ids for merges as lists and as tuples"))
    return outcome("pass", Ev("merges as lists or tuples give the same ids"))


@dataclass(frozen=True)
class Probe:
    kind: str  # train | encode
    text: str
    n: int = 0  # train: the number of merges
    merges: tuple = ()  # encode: the judge's merges (encode is judged on its own)

    @staticmethod
    def encode_list(values, width: int) -> torch.Tensor:
        flat = [len(values), *values][:width]
        return torch.tensor(flat + [-1] * (width - len(flat)), dtype=torch.float64)

    def user(self, ctx: Context):
        if self.kind == "train":
            got = train(ctx, self.text, self.n)
            return self.encode_list([t for p in got for t in p], 2 * self.n + 1)
        got = encode(ctx, self.text, self.merges)
        return self.encode_list(got, 4 * len(self.text) + 1)

    def expected(self, variant):
        variant = variant if isinstance(variant, Variant) else Variant()  # the engine's baseline means "correct"
        if self.kind == "train":
            got = train_reference(self.text, self.n, "first", variant)
            return self.encode_list([t for p in got for t in p], 2 * self.n + 1)
        return self.encode_list(encode_reference(self.text, self.merges, variant), 4 * len(self.text) + 1)


HYPOTHESES = (
    ("bpe-encode-not-by-rank", Variant(encode_order="frequency")),
    ("bpe-encode-not-by-rank", Variant(encode_order="leftmost")),
    ("bpe-overlapping-merge", Variant(overlap="advance")),
    ("bpe-overlapping-merge", Variant(overlap="back")),
    ("bpe-overlapping-merge", Variant(overlap="windows")),
    ("bpe-code-points", Variant(code_points=True)),
)

# Texts on which both tie rules give the same merges, correct and in every overlapping form
# (so a hypothesis does not hinge on the rule).
PROBE_TRAIN = (("aaaaaaaaaaaa xyxyxyxyxy aaaa", 3), ("abababababab aaaaaaaaa", 3))  # shown as is


class BpeTask:
    name = "bpe"

    def checks(self, ctx: Context) -> list[CheckDef]:
        return [
            CheckDef("shape.merges", "shape", partial(train_check, ctx, "low lower lowest low low", 4)),  # shown as is
            CheckDef("numerical.train-corpus", "numerical", partial(train_check, ctx, CORPUS, 25)),
            CheckDef("numerical.train-repeats", "numerical", partial(train_check, ctx, "aaaaaaa aaa aa ba ba", 6)),  # shown as is
            CheckDef("numerical.train-unicode", "numerical", partial(train_check, ctx, UNICODE, 12)),
            CheckDef("numerical.encode-seen", "numerical", partial(encode_check, ctx, CORPUS[:60], CORPUS, 25)),
            CheckDef("numerical.encode-unseen", "numerical", partial(encode_check, ctx, UNSEEN, CORPUS, 25)),
            CheckDef("numerical.encode-unicode", "numerical", partial(encode_check, ctx, ENCODED, UNICODE, 12)),
            CheckDef("numerical.encode-rank-order", "numerical", partial(encode_check, ctx, RANKED_TEXT, "", 0, RANKED)),
            CheckDef("numerical.encode-repeats", "numerical", partial(encode_check, ctx, "aaaaaaaaa bababab", "aaaaaaa aaa aa ba ba", 6)),  # shown as is
            CheckDef("numerical.train-drawn", "numerical", partial(drawn_check, ctx, train_check)),
            CheckDef("numerical.encode-drawn", "numerical", partial(drawn_check, ctx, encode_check)),
            CheckDef("robustness.roundtrip", "robustness", partial(roundtrip_check, ctx)),
            CheckDef("robustness.empty-and-one-char", "robustness", partial(empty_check, ctx)),
            CheckDef("robustness.merges-as-lists", "robustness", partial(lists_check, ctx)),
        ]

    def probes(self, ctx: Context) -> list[Probe]:
        return [Probe("train", t, n) for t, n in PROBE_TRAIN] + [
            Probe("encode", RANKED_TEXT, merges=RANKED),
            Probe("encode", "aaaaaaa that rat", merges=tuple(train_reference(CORPUS, 25))),  # shown as is
            Probe("encode", ACCENTED, merges=tuple(train_reference(UNICODE, 12))),
        ]

    def hypotheses(self, ctx: Context):
        return list(HYPOTHESES)


TASK = BpeTask()
