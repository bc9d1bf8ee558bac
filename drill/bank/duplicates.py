"""Near-duplicate prompts across every loaded bank (``drill bank validate`` only).

Two questions that ask the same thing waste a candidate's review time and split one fact's
history in two. Prompts are compared in English after folding case, width, LaTeX commands,
punctuation and the words every prompt shares ("which", "statements", "select all that apply"),
with rapidfuzz's token-set ratio: word order does not matter, and a prompt whose words are
all contained in another's scores high, which is how copies with an extra clause look.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict

# A pair at or above this score is reported. On the bundled bank the reviewers' duplicates that were
# copies of one template scored 92-95, while the closest pair asking different things (the Q shape and
# the GQA K shape after the head split) scored 89. Reworded duplicates score lower still: review finds those.
THRESHOLD = 90.0
MIN_WORDS = 4  # "Explain LoRA." vs "Explain QLoRA." says nothing; short prompts are left alone
SHARED = 0.3  # the prefix filter scores every pair sharing words worth 30% of either prompt's letters

_COMMANDS = re.compile(r"\\[a-zA-Z]+")
_WORDS = re.compile(r"[a-z0-9_]+")
_FILLER = frozenset(
    """a an the of in on at to for and or with by from as is are be it its this that these those
    which what why how when where who does do can would should will you your we one each any all
    select apply true false statement statements about following given explain describe""".split()
)


def normalise(prompt: str) -> str:
    text = _COMMANDS.sub(" ", unicodedata.normalize("NFKC", prompt).lower())
    return " ".join(w for w in _WORDS.findall(text) if w not in _FILLER)


def near_duplicates(questions: list) -> list[tuple[int, int, float]]:
    """``(i, j, score)`` for each pair of questions (i < j) whose English prompts nearly repeat.

    Scoring every pair is quadratic (~0.5 s at 500 questions), so pairs are first filtered the way
    set-similarity joins do (prefix filtering): each prompt is indexed by its rarest words, those that
    carry more than ``1 - SHARED`` of its letters, and only prompts sharing one of them are scored. Any
    pair whose common words carry at least ``SHARED`` of either prompt's letters is therefore scored;
    a pair scoring 90 shares far more than that (about 80% of the shorter prompt).
    """
    from rapidfuzz import fuzz, process

    texts = [normalise(q.prompt.en) for q in questions]
    words = [set(text.split()) if len(text.split()) >= MIN_WORDS else set() for text in texts]
    frequency = Counter(word for ws in words for word in ws)
    postings: dict[str, list[int]] = defaultdict(list)
    for i, ws in enumerate(words):
        for word in ws:
            postings[word].append(i)
    later: list[set[int]] = [set() for _ in texts]  # later[i]: candidates j > i
    for i, ws in enumerate(words):
        rest = sum(map(len, ws))
        need = SHARED * rest
        for word in sorted(ws, key=lambda w: (frequency[w], w)):  # rarest first
            if rest < need:
                break
            rest -= len(word)
            for j in postings[word]:
                if j > i:
                    later[i].add(j)
                elif j < i:
                    later[j].add(i)
    found = []
    for i, js in enumerate(later):
        if js:
            ordered = sorted(js)
            hits = process.extract(texts[i], [texts[j] for j in ordered], scorer=fuzz.token_set_ratio, score_cutoff=THRESHOLD, limit=None)
            found.extend((i, ordered[k], float(score)) for _, score, k in hits)
    return sorted(found)
