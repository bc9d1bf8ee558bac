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

# A pair at or above this score is reported. On the bundled bank the reviewers' duplicates that were
# copies of one template scored 92-95, while the closest pair asking different things (the Q shape and
# the GQA K shape after the head split) scored 89. Reworded duplicates score lower still: review finds those.
THRESHOLD = 90.0
MIN_WORDS = 4  # "Explain LoRA." vs "Explain QLoRA." says nothing; short prompts are left alone

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
    """``(i, j, score)`` for each pair of questions (i < j) whose English prompts nearly repeat."""
    from rapidfuzz import fuzz, process  # process.extract needs no numpy, unlike cdist

    texts = [normalise(q.prompt.en) for q in questions]
    keep = [i for i, text in enumerate(texts) if len(text.split()) >= MIN_WORDS]
    found = []
    for a, i in enumerate(keep):
        later = [texts[j] for j in keep[a + 1 :]]
        for _, score, b in process.extract(texts[i], later, scorer=fuzz.token_set_ratio, score_cutoff=THRESHOLD, limit=None):
            found.append((i, keep[a + 1 + b], float(score)))
    return found
