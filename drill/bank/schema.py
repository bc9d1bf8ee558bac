"""The question-bank schema, declared once with msgspec.

msgspec (not pydantic) because ``drill bank list`` must start fast: it imports
in ~30 ms and decodes 10k questions straight into these structs in ~0.5 s. Every question type
is a tagged struct keyed by ``type``; unknown fields are rejected so typos in
hand-written YAML surface as errors instead of silently vanishing. Defaults are
omitted when encoding, so re-encoding a decoded file gives back exactly its keys
(how the fast loader notices a key given twice).
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from msgspec import Meta, Struct

FORMAT_VERSION = 1
LEVELS = ("L1", "L2", "L3")
TYPES = ("open", "choice", "numeric", "shape")

# Blank-text and slug-pattern checks run in drill.bank.checks after decoding: msgspec's
# regex constraints cost half the load time of a 10k-question bank.
NonEmpty = Annotated[str, Meta(min_length=1)]
Slug = Annotated[str, Meta(min_length=1, max_length=80)]
SLUG_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
Level = Literal["L1", "L2", "L3"]


class Text(Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True, gc=False):
    """Bilingual Markdown text; both languages are required."""

    en: NonEmpty
    zh: NonEmpty

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


class Keywords(Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True, gc=False):
    en: Annotated[list[NonEmpty], Meta(min_length=1)]
    zh: Annotated[list[NonEmpty], Meta(min_length=1)]

    def all(self) -> list[str]:
        return [*self.en, *self.zh]


class KeyPoint(Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True, gc=False):
    en: NonEmpty
    zh: NonEmpty
    keywords: Keywords

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


class _Base(Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True, kw_only=True, gc=False, tag_field="type"):
    id: Slug
    prompt: Text
    answer: Text
    key_points: Annotated[list[KeyPoint], Meta(min_length=2, max_length=5)]
    tags: list[Slug] = []
    time_limit: Annotated[int, Meta(gt=0, le=3600)] | None = None
    follow_ups: list[Slug] = []
    pitfalls: list[Text] = []
    references: list[NonEmpty] = []
    level: Level | None = None  # None only until the file's default is applied
    topic: Slug | None = None

    @property
    def type(self) -> str:
        return self.__struct_config__.tag  # type: ignore[return-value]

    @property
    def objective(self) -> bool:
        return self.type != "open"


class OpenQuestion(_Base, tag="open"):
    """Free text, self-rated against the key points."""


class ChoiceQuestion(_Base, tag="choice"):
    choices: Annotated[list[Text], Meta(min_length=2, max_length=8)]
    correct: Annotated[int, Meta(ge=0)] | Annotated[list[Annotated[int, Meta(ge=0)]], Meta(min_length=1)]

    @property
    def correct_set(self) -> frozenset[int]:
        return frozenset([self.correct] if isinstance(self.correct, int) else self.correct)


class NumericQuestion(_Base, tag="numeric"):
    value: float
    tolerance: Annotated[float, Meta(ge=0)] = 0.0
    unit: str = ""


class ShapeQuestion(_Base, tag="shape"):
    shape: NonEmpty


Question = Union[OpenQuestion, ChoiceQuestion, NumericQuestion, ShapeQuestion]


class BankFile(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """One YAML file: a format version, optional defaults and its questions."""

    format_version: int
    questions: Annotated[list[Question], Meta(min_length=1)]
    topic: Slug | None = None
    level: Level | None = None
QUESTION_FIELDS = frozenset(
    name for cls in (OpenQuestion, ChoiceQuestion, NumericQuestion, ShapeQuestion) for name in cls.__struct_fields__
) | {"type"}
FILE_FIELDS = frozenset({"format_version", "topic", "level", "questions"})
