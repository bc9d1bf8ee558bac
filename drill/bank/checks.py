"""Rules the schema types cannot express: slugs, blank text, choice indices, keyword quality, rendering.

:func:`question_problems` runs on every decoded question, on the fast path and the detailed one
alike; the others (:func:`keyword_problems`, :func:`generic_keyword_problems`,
:func:`render_problems`, :func:`reference_problems`) only in ``drill bank validate``. All return
``(key path, message)`` pairs so the caller can point at the YAML line.
"""

from __future__ import annotations

import math
import re
import unicodedata

from drill.bank.schema import SLUG_PATTERN, ChoiceQuestion, NumericQuestion
from drill.text.messages import Msg

_SLUG = re.compile(SLUG_PATTERN)

Problem = tuple[list, str]


def _texts(q):
    """Every bilingual text of a question with its key path."""
    yield ["prompt"], q.prompt
    yield ["answer"], q.answer
    for i, point in enumerate(q.key_points):
        yield ["key_points", i], point
    for i, pitfall in enumerate(q.pitfalls):
        yield ["pitfalls", i], pitfall
    if isinstance(q, ChoiceQuestion):
        for i, choice in enumerate(q.choices):
            yield ["choices", i], choice


def _is_clean(q) -> bool:
    """The common case, checked without building messages (it runs on every load)."""
    if not (_SLUG.match(q.id) and q.level is not None and q.topic is not None and _SLUG.match(q.topic)):
        return False
    texts = [q.prompt, q.answer, *q.key_points, *q.pitfalls]
    if isinstance(q, ChoiceQuestion):
        if max(q.correct_set) >= len(q.choices):
            return False
        texts += q.choices
    for text in texts:
        if text.en.isspace() or text.zh.isspace():
            return False
    if any(word.isspace() for point in q.key_points for word in point.keywords.all()):
        return False
    if isinstance(q, NumericQuestion) and not (math.isfinite(q.value) and math.isfinite(q.tolerance)):
        return False
    return all(map(_SLUG.match, q.tags)) and all(map(_SLUG.match, q.follow_ups))


def _dotted(*keys: str | int) -> str:
    """A field's path as the messages name it: ``key_points.0.keywords.en``."""
    return ".".join(map(str, keys))


def question_problems(q) -> list[Problem]:
    if _is_clean(q):
        return []
    problems: list[Problem] = []
    if not _SLUG.match(q.id):
        problems.append((["id"], Msg("id {id!r} must be a slug: lowercase letters, digits, '.', '_' or '-'", id=q.id)))
    for field in ("level", "topic"):
        if getattr(q, field) is None:
            problems.append(([], Msg("missing `{field}` (set it on the question or as a file default)", field=field)))
    if q.topic is not None and not _SLUG.match(q.topic):
        problems.append((["topic"], Msg("topic {topic!r} must be a slug", topic=q.topic)))
    for keys, text in _texts(q):
        for lang in ("en", "zh"):
            if getattr(text, lang).isspace():  # msgspec already rejects ""
                problems.append(([*keys, lang], Msg("{field}: text is empty", field=_dotted(*keys, lang))))
    for i, point in enumerate(q.key_points):
        for lang in ("en", "zh"):
            for j, word in enumerate(getattr(point.keywords, lang)):
                if word.isspace():
                    problems.append((["key_points", i, "keywords", lang, j], Msg("{field}: a blank keyword matches any answer", field=_dotted("key_points", i, "keywords", lang))))
    for field in ("tags", "follow_ups"):
        for i, value in enumerate(getattr(q, field)):
            if not _SLUG.match(value):
                problems.append(([field, i], Msg("{field}: {value!r} is not a slug", field=field, value=value)))
    if isinstance(q, ChoiceQuestion):
        bad = sorted(i for i in q.correct_set if i >= len(q.choices))
        if bad:
            n = len(q.choices)
            problems.append((["correct"], Msg("`correct` index {i} out of range (there are {n} choices, 0 to {last})", i=bad[0], n=n, last=n - 1)
                             if len(bad) == 1 else Msg("`correct` indexes {indexes} out of range (there are {n} choices, 0 to {last})",
                                                       indexes=", ".join(map(str, bad)), n=n, last=n - 1)))  # fmt: skip
    if isinstance(q, NumericQuestion):
        for field in ("value", "tolerance"):
            if not math.isfinite(getattr(q, field)):  # .nan equals no answer; .inf accepts any
                problems.append(([field], Msg("`{field}` must be a finite number, not {value}", field=field, value=getattr(q, field))))
    return problems


# --- validator-only rules (`drill bank validate`): keyword quality ------------------------

# Words that every answer on these subjects contains: as a keyword they tick a key point
# whatever the candidate actually said. Compared with the whole keyword, case and width folded.
STOP_KEYWORDS = frozenset(
    """attention token tokens model layer layers head heads loss kl position positions softmax
    key keys query queries value values memory mask training sequence output input weight weights
    注意力 位置 损失 模型 训练 序列 输出 输入 权重 显存 内存 掩码""".split()
)
_BARE_NUMBER = re.compile(r"[-+−]?(?:\d[\d,]*)?\.?\d+%?")  # "3", "0.5", "1,024", "-64", "5%"


def _plain(word: str) -> str:
    return unicodedata.normalize("NFKC", word).strip().lower()


def keyword_problems(q) -> list[Problem]:
    """Keywords that would tick a key point by accident, and key points the reference answer misses.

    Ticks are shown only for open answers, so the number and stop-word rules apply there; every
    question's reference answer must tick all of its own key points in both languages (matched
    exactly as a typed answer is, by :func:`drill.practice.answers.matched_key_points`).
    """
    from drill.practice.answers import matched_key_points

    problems: list[Problem] = []
    if q.type == "open":
        for i, point in enumerate(q.key_points):
            for lang in ("en", "zh"):
                for j, word in enumerate(getattr(point.keywords, lang)):
                    plain = _plain(word)
                    if _BARE_NUMBER.fullmatch(plain):
                        why = Msg("the bare number {word!r} also matches inside other numbers and unrelated text; write it with its unit or the words around it", word=word)
                    elif plain in STOP_KEYWORDS:
                        why = Msg("{word!r} is in almost every answer on this subject; use a phrase that only a right answer contains", word=word)
                    else:
                        continue
                    problems.append((["key_points", i, "keywords", lang, j], Msg("{label}: {problem}", label=_dotted("key_points", i, "keywords", lang), problem=why)))
    hits = {lang: matched_key_points(q, q.answer.get(lang)) for lang in ("en", "zh")}
    for i in range(len(q.key_points)):
        missed = [lang for lang in ("en", "zh") if not hits[lang][i]]
        if missed:
            problems.append((["key_points", i, "keywords"], Msg("key_points.{i}: no keyword occurs in the {langs} reference answer, so that answer would not tick it",
                                                                 i=i, langs=" or ".join(missed)) if len(missed) == 1 else
                             Msg("key_points.{i}: no keyword occurs in the en or zh reference answer, so that answer would not tick it", i=i)))  # fmt: skip
    return problems


# A keyword found in the reference answers of at least this share of its topic's questions says nothing
# about the answer in front of it (``experts`` in moe, ``HBM`` in flash-attention): it is refused. Topics
# smaller than GENERIC_MIN_TOPIC are not judged: a share of a handful of answers is noise.
GENERIC_SHARE = 0.5
GENERIC_MIN_TOPIC = 10


def generic_keyword_problems(questions: list, linted: set[str] | None = None) -> dict[str, list[Problem]]:
    """By question id (those in ``linted``, default all): keywords of open questions that most reference
    answers of the topic contain.

    Such a keyword ticks its key point whatever the candidate said about it, which is how
    ``phi-1 … and WRAP`` came to be ticked for an answer naming neither; a tick must rest on words
    only a right answer has. Matched as a typed answer is, by :func:`drill.practice.answers.keyword_pattern`.
    """
    from collections import defaultdict

    from drill.practice.answers import _GAP, _fold_formula, keyword_pattern

    by_topic: dict[str, list] = defaultdict(list)
    for q in questions:
        by_topic[q.topic].append(q)
    found: dict[str, list[Problem]] = defaultdict(list)
    for topic, group in by_topic.items():
        if len(group) < GENERIC_MIN_TOPIC:
            continue
        answers = [_fold_formula(q.answer.en) + "\n" + _fold_formula(q.answer.zh) for q in group]
        gapless = [text.replace(_GAP, "") for text in answers]  # a keyword's letters in a row: needed for its pattern to match
        share: dict[str, float] = {}
        for q in (q for q in group if q.type == "open" and (linted is None or q.id in linted)):
            for i, point in enumerate(q.key_points):
                for lang in ("en", "zh"):
                    for j, word in enumerate(getattr(point.keywords, lang)):
                        if word not in share:
                            pattern, letters = keyword_pattern(word), _fold_formula(word).replace(_GAP, "")
                            share[word] = sum(1 for text, bare in zip(answers, gapless) if letters in bare and pattern.search(text)) / len(answers)
                        if share[word] >= GENERIC_SHARE:
                            why = Msg("{word!r} is in {share:.0%} of the {topic} reference answers, so it ticks this key point whatever was said; use a word only a right answer contains",
                                      word=word, share=share[word], topic=topic)  # fmt: skip
                            found[q.id].append((["key_points", i, "keywords", lang, j], Msg("{label}: {problem}", label=_dotted("key_points", i, "keywords", lang), problem=why)))
    return found


# Markdown or LaTeX that a reader would see as source: bold or underscore marks, a backtick that
# opened no code span, a dollar sign that opened no formula, a LaTeX command or brace.
_UNRENDERED = re.compile(r"\*\*|__|`|\$|\\[A-Za-z]+|[{}]")


def render_problems(q) -> list[Problem]:
    """Texts whose terminal rendering still shows Markdown or LaTeX source (code spans excepted).

    Prompts and answers are rendered as Markdown blocks, choices, key points and pitfalls as one
    line, each exactly as the quiz shows them (:func:`drill.text.mathtext.screen_text`).
    """
    from drill.text.mathtext import screen_text

    problems: list[Problem] = []
    for keys, text in _texts(q):
        for lang in ("en", "zh"):
            shown = screen_text(text.get(lang), block=keys[0] in ("prompt", "answer"))
            left = list(dict.fromkeys(m.group() for m in _UNRENDERED.finditer(shown)))
            if left:
                marks = ", ".join(repr(mark) for mark in left)
                problems.append(([*keys, lang], Msg("{field}: the screen shows {marks} as typed; put formulas in $…$, code in backticks, and bold where CommonMark closes it",
                                                    field=_dotted(*keys, lang), marks=marks)))  # fmt: skip
    return problems


# A prompt leaning on another question makes no sense when drawn alone (quizzes shuffle).
_REFERS_EN = re.compile(
    r"\b(?:same (?:corpus|setup|model|numbers|data|example|settings|config(?:uration)?|question|scenario)|as above|as before|"
    r"(?:the )?(?:previous|preceding|last|above) (?:question|exercise|example|answer)|the question above|from above)\b",
    re.IGNORECASE,
)
_REFERS_ZH = re.compile(r"上题|上一题|上一问|同上|前一题|前面那道|上面那道|上面的题|沿用上|接上题|同一个语料|同样的语料")


def reference_problems(q) -> list[Problem]:
    """Prompts that refer to another question ("same corpus", "as above", "上题", "同上")."""
    problems: list[Problem] = []
    for lang, pattern in (("en", _REFERS_EN), ("zh", _REFERS_ZH)):
        found = pattern.search(q.prompt.get(lang))
        if found:
            problems.append((["prompt", lang], Msg("prompt.{lang}: {words!r} refers to another question, but each is drawn alone; restate what it needs",
                                                   lang=lang, words=found.group())))  # fmt: skip
    return problems
