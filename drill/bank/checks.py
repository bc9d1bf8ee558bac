"""Rules the schema types cannot express: slugs, blank text, choice indices, keyword quality.

:func:`question_problems` runs on every decoded question, on the fast path and the detailed one
alike; :func:`keyword_problems` only in ``drill bank validate``. Both return ``(key path, message)``
pairs so the caller can point at the YAML line.
"""

from __future__ import annotations

import math
import re
import unicodedata

from drill.bank.schema import SLUG_PATTERN, ChoiceQuestion, NumericQuestion

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


def question_problems(q) -> list[Problem]:
    if _is_clean(q):
        return []
    problems: list[Problem] = []
    if not _SLUG.match(q.id):
        problems.append((["id"], f"id {q.id!r} must be a slug: lowercase letters, digits, '.', '_' or '-'"))
    for field in ("level", "topic"):
        if getattr(q, field) is None:
            problems.append(([], f"missing `{field}` (set it on the question or as a file default)"))
    if q.topic is not None and not _SLUG.match(q.topic):
        problems.append((["topic"], f"topic {q.topic!r} must be a slug"))
    for keys, text in _texts(q):
        for lang in ("en", "zh"):
            if getattr(text, lang).isspace():  # msgspec already rejects ""
                problems.append(([*keys, lang], f"{'.'.join(map(str, keys))}.{lang}: text is empty"))
    for i, point in enumerate(q.key_points):
        for lang in ("en", "zh"):
            for j, word in enumerate(getattr(point.keywords, lang)):
                if word.isspace():
                    problems.append((["key_points", i, "keywords", lang, j], f"key_points.{i}.keywords.{lang}: a blank keyword matches any answer"))
    for field in ("tags", "follow_ups"):
        for i, value in enumerate(getattr(q, field)):
            if not _SLUG.match(value):
                problems.append(([field, i], f"{field}: {value!r} is not a slug"))
    if isinstance(q, ChoiceQuestion):
        bad = sorted(i for i in q.correct_set if i >= len(q.choices))
        if bad:
            problems.append((["correct"], f"`correct` index {bad[0]} out of range (there are {len(q.choices)} choices)"))
    if isinstance(q, NumericQuestion):
        for field in ("value", "tolerance"):
            if not math.isfinite(getattr(q, field)):  # .nan equals no answer; .inf accepts any
                problems.append(([field], f"`{field}` must be a finite number, not {getattr(q, field)}"))
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
    exactly as a typed answer is, by :func:`drill.answers.matched_key_points`).
    """
    from drill.answers import matched_key_points

    problems: list[Problem] = []
    if q.type == "open":
        for i, point in enumerate(q.key_points):
            for lang in ("en", "zh"):
                for j, word in enumerate(getattr(point.keywords, lang)):
                    plain = _plain(word)
                    if _BARE_NUMBER.fullmatch(plain):
                        why = f"the bare number {word!r} also matches inside other numbers and unrelated text; write it with its unit or the words around it"
                    elif plain in STOP_KEYWORDS:
                        why = f"{word!r} is in almost every answer on this subject; use a phrase that only a right answer contains"
                    else:
                        continue
                    problems.append((["key_points", i, "keywords", lang, j], f"key_points.{i}.keywords.{lang}: {why}"))
    hits = {lang: matched_key_points(q, q.answer.get(lang)) for lang in ("en", "zh")}
    for i in range(len(q.key_points)):
        missed = [lang for lang in ("en", "zh") if not hits[lang][i]]
        if missed:
            problems.append((["key_points", i, "keywords"], f"key_points.{i}: no keyword occurs in the {' or '.join(missed)} reference answer, so that answer would not tick it"))
    return problems
