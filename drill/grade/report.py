"""The grade's result as plain data: built in the judge, sent as JSON, rendered by the CLI.

Torch-free on purpose, so the parent process can rebuild a report without importing torch.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

from drill.text.messages import Msg, translated

ROW_WORDS, DIVERGENCE_WORDS, PICTURE_WORDS = ("match",), ("expected", "message", "input"), ("title",)  # Ev, str or None
CATEGORIES = ("shape", "mask-leak", "numerical", "stability", "gradient", "rules", "robustness")
STATUSES = ("pass", "fail", "warn", "skip", "error")
FAILING = frozenset({"fail", "error"})


@dataclass
class Check:
    id: str
    category: str
    status: str
    message: str = ""  # the evidence: an Ev (id and values), English as a str; rendered in the user's language at the edge
    codes: list[str] = field(default_factory=list)  # diagnosis codes this check proves on its own

    def text(self, lang: str) -> str:
        """The evidence in ``lang``, from the evidence catalog."""
        return translated(self.message, lang)

    def to_dict(self) -> dict:
        """The documented ``--json`` form: the evidence rendered in both languages, and as id and values."""
        return {**self.to_wire(), "message_zh": self.text("zh")}

    def to_wire(self) -> dict:
        wire = {"id": self.id, "category": self.category, "status": self.status, "message": str(self.message)}
        return {**wire, "evidence": self.message.to_wire()} if isinstance(self.message, Msg) else wire

    @classmethod
    def from_dict(cls, data: dict) -> Check:
        """Raises ValueError unless ``data`` is a check as the judge writes it."""
        _require(isinstance(data, dict) and _text(data.get("id")) and data.get("category") in CATEGORIES
                 and data.get("status") in STATUSES and _text(data.get("message", ""))
                 and isinstance(data.get("evidence", {}), dict)
                 and isinstance(data.get("codes", []), list) and all(_text(c) for c in data.get("codes", [])), "a check")  # fmt: skip
        message = Msg.from_wire(data["evidence"]) if "evidence" in data else data.get("message", "")
        return cls(data["id"], data["category"], data["status"], message, list(data.get("codes", [])))


@dataclass
class Diagnosis:
    code: str
    message: str
    fix: str
    message_zh: str
    fix_zh: str
    evidence: str = ""

    def text(self, lang: str) -> tuple[str, str]:
        """(message, fix) in ``lang``."""
        return (self.message_zh, self.fix_zh) if lang == "zh" else (self.message, self.fix)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Diagnosis:
        names = [f.name for f in fields(cls)]
        _require(isinstance(data, dict) and set(data) <= set(names) and all(_text(data.get(n, "")) for n in names)
                 and all(n in data for n in names[:5]), "a diagnosis")  # fmt: skip
        return cls(**data)


@dataclass
class Report:
    task: str
    device: str
    checks: list[Check] = field(default_factory=list)
    diagnosis: list[Diagnosis] = field(default_factory=list)  # confirmed: stored, counted, used to schedule
    candidates: list[Diagnosis] = field(default_factory=list)  # possible only: shown as "possibly", never counted
    duration_s: float = 0.0
    trace: list[dict] | None = None  # --trace: one row per op called from the user's file (drill.grade.tracing)
    first_divergence: dict | None = None  # the line where the user's tensors leave the reference
    pictures: list[dict] = field(default_factory=list)  # leak matrices and weight heat maps to draw
    seed: int | None = None  # the probe inputs' seed: ``--seed`` with it grades the same inputs again

    @property
    def passed(self) -> bool:
        return bool(self.checks) and not any(c.status in FAILING for c in self.checks)

    def to_dict(self) -> dict:
        """The documented ``--json`` object: the trace's words in both languages, and as id and values."""
        return self._data([c.to_dict() for c in self.checks], rendered=True)

    def to_wire(self) -> dict:
        """Like :meth:`to_dict`, with the per-check codes the parent needs to rebuild the report, and words as id and
        values only: the CLI renders them."""
        return self._data([{**c.to_wire(), "codes": c.codes} for c in self.checks], rendered=False)

    def _data(self, checks: list[dict], *, rendered: bool) -> dict:
        divergence = _words_out(self.first_divergence, DIVERGENCE_WORDS, rendered)
        return {
            "task": self.task,
            "device": self.device,
            "passed": self.passed,
            "checks": checks,
            "diagnosis": [d.to_dict() for d in self.diagnosis],
            **({"candidates": [d.to_dict() for d in self.candidates]} if self.candidates else {}),
            "duration_s": round(self.duration_s, 3),
            **({"seed": self.seed} if self.seed is not None else {}),
            **({"trace": [_words_out(r, ROW_WORDS, rendered) for r in self.trace]} if self.trace is not None else {}),
            **({"first_divergence": divergence} if self.trace is not None or self.first_divergence else {}),
            **({"pictures": [_words_out(p, PICTURE_WORDS, rendered) for p in self.pictures]} if self.pictures else {}),
        }

    @classmethod
    def from_wire(cls, data: dict) -> Report:
        """The report the judge sent; ValueError for anything else (the CLI calls it a protocol failure)."""
        _require(isinstance(data, dict) and _text(data.get("task")) and _text(data.get("device"))
                 and isinstance(data.get("checks"), list) and isinstance(data.get("diagnosis"), list), "a report")  # fmt: skip
        duration, seed = data.get("duration_s", 0.0), data.get("seed")
        _require(type(duration) in (int, float) and math.isfinite(duration) and (seed is None or type(seed) is int), "a report's numbers")
        _require(isinstance(data.get("candidates", []), list), "a report's candidates")
        trace, divergence, pictures = data.get("trace"), data.get("first_divergence"), data.get("pictures", [])
        _require((trace is None or isinstance(trace, list) and all(isinstance(r, dict) for r in trace))
                 and (divergence is None or isinstance(divergence, dict))
                 and isinstance(pictures, list) and all(isinstance(p, dict) for p in pictures), "a report's trace or pictures")  # fmt: skip
        return cls(
            task=data["task"],
            device=data["device"],
            checks=[Check.from_dict(c) for c in data["checks"]],
            diagnosis=[Diagnosis.from_dict(d) for d in data["diagnosis"]],
            candidates=[Diagnosis.from_dict(d) for d in data.get("candidates", [])],
            duration_s=float(duration),
            trace=None if trace is None else [_words_in(r, ROW_WORDS) for r in trace],
            first_divergence=None if divergence is None else _words_in(divergence, DIVERGENCE_WORDS),
            pictures=[_words_in(p, PICTURE_WORDS) for p in pictures],
            seed=seed,
        )


def _words_out(item: dict | None, words: tuple[str, ...], rendered: bool) -> dict | None:
    """A trace row, divergence or picture for JSON: each word as its English and its id and values (``word_evidence``),
    and with ``rendered`` also in Chinese (``word_zh``)."""
    if item is None:
        return None
    out = dict(item)
    for key in words:
        if key not in item:
            continue
        value = item[key]
        out[key] = None if value is None else str(value)
        if isinstance(value, Msg):
            out[f"{key}_evidence"] = value.to_wire()
        if rendered:
            out[f"{key}_zh"] = None if value is None else translated(value, "zh")
    return out


def _words_in(item: dict, words: tuple[str, ...]) -> dict:
    """The words of :func:`_words_out` as messages again (rendered by the views in the user's language)."""
    out = {k: v for k, v in item.items() if k not in {f"{w}{end}" for w in words for end in ("_evidence", "_zh")}}
    for key in words:
        if isinstance(item.get(f"{key}_evidence"), dict):
            out[key] = Msg.from_wire(item[f"{key}_evidence"])
    return out


def _text(value) -> bool:
    return isinstance(value, str)


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise ValueError(f"not {what}")
