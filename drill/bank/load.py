"""Load and validate question banks: one YAML file or a folder of them.

All problems in all files are collected before failing, so ``drill bank validate``
can report every one of them at once as ``file:line: message``.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from drill.bank import cache
from drill.bank.schema import FILE_FIELDS, FORMAT_VERSION, QUESTION_FIELDS, BankFile, Question
from drill.errors import BankError, DrillError
from drill.text.messages import NAME, Msg
from drill.paths import bundled_bank_dir, extra_bank_paths

_UNKNOWN_FIELD = re.compile(r"Object contains unknown field `([^`]+)`")


@dataclass
class Bank:
    """Every loaded question by id, in load order, and where each came from."""

    questions: dict[str, Question] = field(default_factory=dict)
    origins: dict[str, tuple[Path, int]] = field(default_factory=dict)  # id -> (file, index)
    files: list[Path] = field(default_factory=list)

    def select(self, levels=None, topics=None, types=None, tags=None) -> list[Question]:
        return [
            q
            for q in self.questions.values()
            if (not levels or q.level in levels)
            and (not topics or q.topic in topics)
            and (not types or q.type in types)
            and (not tags or set(q.tags) & set(tags))
        ]

    def known_topics(self, topics: list[str]) -> list[str]:
        """``topics`` unchanged when each is in the bank; else a usage error with a did-you-mean."""
        from drill.text.suggest import hint

        for topic in topics:
            if topic not in self.topics:
                raise DrillError("--topic: no topic {topic!r}{hint} (drill bank stats lists them)", topic=topic, hint=hint(topic, self.topics))
        return topics

    def get(self, qid: str) -> Question:
        try:
            return self.questions[qid]
        except KeyError:
            from drill.text.suggest import hint

            raise DrillError("no question with id {id!r} in the loaded banks{hint}", id=qid, hint=hint(qid, self.questions)) from None

    @property
    def topics(self) -> list[str]:
        return sorted({q.topic for q in self.questions.values()})


class _File:
    """One YAML file; its text and node tree (for line numbers) are read only when needed."""

    def __init__(self, path: Path, raw: bytes | None = None):
        self.path, self._raw = path, raw
        self._root = None
        self._composed = False

    @property
    def raw(self) -> bytes:
        if self._raw is None:
            self._raw = self.path.read_bytes()
        return self._raw

    @functools.cached_property
    def text(self) -> str:
        return self.raw.decode("utf-8", errors="replace")

    def line(self, keys: list[str | int]) -> int:
        from drill.bank import locate

        if not self._composed:
            self._root, self._composed = locate.compose(self.text), True
        return locate.line_of(self._root, keys)

    def where(self, keys: list[str | int]) -> str:
        return f"{self.path}:{self.line(keys)}"

    def problem(self, keys: list[str | int], message: str) -> str:
        return Msg("{where}: {problem}", where=self.where(keys), problem=message)


def _yaml_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    return [path]


def _read(path: Path, problems: list[str]) -> bytes | None:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.append(Msg("{path}:1: cannot read file: {why}", path=str(path), why=exc.strerror or str(exc)))
        return None
    if not raw.strip():
        problems.append(Msg("{path}:1: file is empty", path=str(path)))
        return None
    return raw


def _utf8(file: _File, problems: list[str]) -> bool:
    try:
        file.raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = file.raw[: exc.start].count(b"\n") + 1
        problems.append(Msg("{path}:{line}: file is not UTF-8 (byte 0x{byte:02x} at offset {offset})", path=str(file.path), line=line, byte=file.raw[exc.start], offset=exc.start))
        return False
    return True


# Characters YAML does not allow in a stream (outside its c-printable set): C0 controls but tab, LF
# and CR; DEL; C1 controls but NEL; U+FFFE and U+FFFF. Matched on the UTF-8 bytes.
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x84\x86-\x9f]|\xef\xbf[\xbe\xbf]")
_CONTROL_NAMES = {0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x1B: "ESC", 0x7F: "DEL"}
MAX_REPORTED = 20  # lines per file: a binary file would otherwise flood the report


def _control_chars(file: _File, problems: list[str]) -> bool:
    """Report each line holding a character YAML forbids; True if there was one."""
    lines, start, line = set(), 0, 1
    for match in _CONTROL.finditer(file.raw):
        line += file.raw.count(b"\n", start, match.start())
        start = match.start()
        if line in lines:
            continue
        lines.add(line)
        code = ord(match.group().decode("utf-8"))
        name = f" ({_CONTROL_NAMES[code]})" if code in _CONTROL_NAMES else ""
        problems.append(Msg("{path}:{line}: control character U+{code:04X}{name} is not allowed in YAML; delete it", path=str(file.path), line=line, code=code, name=name))
        if len(lines) == MAX_REPORTED:
            break
    return bool(lines)


def _key_count(text: bytes) -> int:
    """Object keys in JSON text: each ends with a quote and a colon (a quote inside a string is escaped)."""
    return text.count(b'":') - text.count(b'\\":')


def _distinct_keys(emitted: bytes) -> int:
    """Keys left once each mapping keeps one of each name (a dict per mapping, as JSON decoders build)."""
    count, stack = 0, [msgspec.json.decode(emitted)]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            count += len(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def _repeats_a_key(emitted: bytes, data: BankFile) -> bool:
    """True if a mapping of the file gives a key twice (msgspec would keep the last one silently).

    Re-encoding the decoded file (defaults omitted) gives back each key once, so equal counts prove
    there is no repeat. They also differ when a field is spelled out at its default (``tags: []``):
    only then are the file's mappings decoded as dicts and counted, which is exact but slower.
    """
    given = _key_count(emitted)
    return given != _key_count(msgspec.json.encode(data)) and given != _distinct_keys(emitted)


def _with_defaults(q: Question, level: str | None, topic: str | None) -> Question:
    if (q.level is None and level) or (q.topic is None and topic):
        return msgspec.structs.replace(q, level=q.level or level, topic=q.topic or topic)
    return q


def _emit_json(ryml, tree) -> memoryview:
    """The tree as JSON bytes (msgspec decodes bytes ~2x faster than str).

    A guessed buffer saves measuring the output first; a short guess raises and is redone exactly.
    """
    root = tree.root_id()
    try:
        return ryml.emit_json_in_place(tree, bytearray(2 * tree.arena_size() + 4096), root)
    except IndexError:
        return ryml.emit_json_in_place(tree, bytearray(ryml.compute_json_length(tree, root)), root)


@contextmanager
def _quiet_stderr():
    """rapidyaml's C++ core writes parse errors to fd 2 before raising; the detailed path reports them."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _fast(raw: bytes) -> list[Question] | None:
    """Decode a valid file quickly (rapidyaml to JSON, then typed msgspec); None if anything is off.

    PyYAML builds Python objects in Python and needs ~10 s for a 10k-question bank;
    this path needs well under one. Files it rejects go through :func:`_detailed`,
    which is slower but finds every problem and its line.
    """
    import ryml

    if _CONTROL.search(raw):  # rapidyaml reads them; YAML (and the detailed path) does not
        return None
    try:
        with _quiet_stderr():  # parse and emit both print to fd 2 on failure (nesting too deep, ...)
            tree = ryml.parse_in_arena(raw)
            emitted = bytes(_emit_json(ryml, tree))
        data = msgspec.json.decode(emitted, type=BankFile)
    except Exception:  # any failure: let the detailed path explain it
        return None
    if data.format_version != FORMAT_VERSION:
        return None
    if _repeats_a_key(emitted, data):
        return None
    from drill.bank.checks import question_problems  # a bank read from the cache was checked when it was cached

    questions = [_with_defaults(q, data.level, data.topic) for q in data.questions]
    if any(question_problems(q) for q in questions):
        return None
    return questions


def _parse(file: _File, problems: list[str]) -> list | None:
    """The file's raw question list with file defaults applied, or None after recording why not."""
    import yaml  # the detailed path only: valid banks never pay for PyYAML

    from drill.bank import locate

    try:
        data = yaml.load(file.text, Loader=locate._Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        label = "" if isinstance(exc, locate.Refused) else Msg("YAML syntax error: ")
        problems.append(Msg("{path}:{line}: {label}{why}", path=str(file.path), line=line, label=label, why=getattr(exc, "problem", None) or str(exc).splitlines()[0]))
        return None
    except RecursionError:  # the pure-Python loader, where libyaml is missing, recurses per nesting level
        problems.append(Msg("{path}:1: YAML syntax error: nested too deeply", path=str(file.path)))
        return None
    if not isinstance(data, dict):
        problems.append(file.problem([], Msg("a bank file must be a mapping with `format_version` and `questions`")))
        return None
    for key in data:
        if key not in FILE_FIELDS:
            problems.append(file.problem([key], Msg("unknown top-level field `{key}` (allowed: {allowed})", key=key, allowed=", ".join(sorted(FILE_FIELDS)))))
    version = data.get("format_version")
    if type(version) is not int or version != FORMAT_VERSION:  # not `true` or `1.0`, which equal 1 in Python
        given = Msg("missing") if version is None else Msg("not {given}", given=yaml.safe_dump(version).splitlines()[0])
        problems.append(file.problem(["format_version"], Msg("`format_version` must be {version} ({given})", version=FORMAT_VERSION, given=given)))
        return None
    questions = data.get("questions")
    if not isinstance(questions, list) or not questions:
        problems.append(file.problem(["questions"], Msg("`questions` must be a non-empty list")))
        return None
    defaults = {k: data[k] for k in ("topic", "level") if k in data}
    return [{**defaults, **q} if isinstance(q, dict) else q for q in questions]


def _describe(message: str, keys: list[str | int]) -> Msg:
    """msgspec's wording (English only) as a message: its usual forms by id and values, anything else as it is;
    drill's own problems are messages already."""
    problem = message if isinstance(message, Msg) else _msgspec_problem(message.removeprefix("Object "))
    where = ".".join(str(k) for k in keys)
    return Msg("{label}: {problem}", label=where, problem=problem) if where else problem


def _msgspec_problem(text: str) -> Msg:
    for pattern, make in _MSGSPEC:
        found = pattern.fullmatch(text)
        if found:
            return make(*found.groups())
    return Msg(NAME, name=text[:1].lower() + text[1:])


_MSGSPEC = (  # the forms msgspec's ValidationError takes for a question (msgspec/_core.c)
    (re.compile(r"[Mm]issing required field `([^`]+)`"), lambda field: Msg("missing required field `{field}`", field=field)),
    (re.compile(r"Invalid enum value (.+)"), lambda value: Msg("invalid value {value}", value=value)),
    (re.compile(r"Expected `([^`]+)`, got `([^`]+)`"), lambda want, got: Msg("expected `{want}`, got `{got}`", want=want, got=got)),
    (re.compile(r"Expected `([^`]+)` of length (>=|<=) (\d+)"),
     lambda want, op, n: Msg("expected `{want}` of length {op} {n}", want=want, op=op, n=int(n))),
    (re.compile(r"Expected `([^`]+)` (>=|<=|>|<) ([-\d.e]+)"),
     lambda want, op, n: Msg("expected `{want}` {op} {n}", want=want, op=op, n=n)),
)


_TEXT = {"en": "x", "zh": "x"}
# A valid stand-in for each field, put in place of a bad value so the rest of the question is still checked.
_STAND_INS = {"id": "x", "level": "L1", "topic": "x", "prompt": _TEXT, "answer": _TEXT, "tags": [], "follow_ups": [], "pitfalls": [],
              "references": [], "time_limit": None, "choices": [_TEXT, _TEXT], "correct": 0, "value": 0.0, "tolerance": 0.0, "unit": "",
              "shape": "x", "key_points": [{**_TEXT, "keywords": {"en": ["x"], "zh": ["x"]}}] * 2}  # fmt: skip
_MISSING = re.compile(r"missing required field `([^`]+)`")


def _schema_problems(raw: dict) -> tuple[Question | None, list[tuple[list, str]]]:
    """Every schema problem of one question, not only the first msgspec meets: each bad or missing field
    is reported, then replaced by a stand-in and the question decoded again. The question comes back
    (stand-ins and all) only when every field could be checked; ``type`` decides the others, so a bad
    type stops there."""
    patched, found = dict(raw), []
    for _ in range(len(_STAND_INS) + 1):
        try:
            return msgspec.convert(patched, Question), found
        except msgspec.ValidationError as exc:
            from drill.bank.locate import parse_msgspec_path

            message, keys = parse_msgspec_path(str(exc))
            unknown, missing = _UNKNOWN_FIELD.match(message), _MISSING.search(message)
            if unknown:
                keys, message = [*keys, unknown.group(1)], Msg("unknown field `{key}` (a typo?)", key=unknown.group(1))
            found.append((keys, message))
            field = keys[0] if keys else missing.group(1) if missing else None
            if unknown or field not in _STAND_INS or patched.get(field) is _STAND_INS[field]:
                return None, found
            patched[field] = _STAND_INS[field]
    return None, found


def _convert(file: _File, index: int, raw: object, problems: list[str]) -> Question | None:
    qid = raw.get("id") if isinstance(raw, dict) else None
    label = Msg("question {id!r}", id=qid) if isinstance(qid, str) else Msg("question #{n}", n=index + 1)
    if isinstance(raw, dict):
        typos = [key for key in raw if key not in QUESTION_FIELDS]
        for key in typos:
            problems.append(file.problem(["questions", index, key], Msg("{label}: unknown field `{key}` (a typo?)", label=label, key=key)))
        if typos:
            return None
    question, found = _schema_problems(raw) if isinstance(raw, dict) else (None, [])
    if not isinstance(raw, dict):
        try:
            msgspec.convert(raw, Question)
        except msgspec.ValidationError as exc:
            from drill.bank.locate import parse_msgspec_path

            message, keys = parse_msgspec_path(str(exc))
            found = [(keys, message)]
    for keys, message in found:
        problems.append(file.problem(["questions", index, *keys], Msg("{label}: {problem}", label=label, problem=_describe(message, keys))))
    if question is None:
        return None
    from drill.bank.checks import question_problems

    stood_in = {keys[0] for keys, _ in found if keys} | {m.group(1) for _, msg in found if (m := _MISSING.search(msg))}
    rules = [(keys, message) for keys, message in question_problems(question) if not (keys and keys[0] in stood_in)]
    for keys, message in rules:
        problems.append(file.problem(["questions", index, *keys], Msg("{label}: {problem}", label=label, problem=message)))
    return None if found or rules else question


def _detailed(file: _File, problems: list[str]) -> list[Question | None]:
    """Every question of a file that failed the fast path, None where it has problems."""
    if not _utf8(file, problems) or _control_chars(file, problems):
        return []
    return [_convert(file, index, raw, problems) for index, raw in enumerate(_parse(file, problems) or [])]


def _load_file(path: Path, real: Path, problems: list[str], use_cache: bool) -> tuple[_File, list[Question | None]] | None:
    """A file's questions (None where invalid): from the cache, the fast path, or the detailed one."""
    stat = path.stat()
    cached = cache.load(real, stat) if use_cache else None
    if cached is not None:
        return _File(path), cached
    raw = _read(path, problems)
    if raw is None:
        return None
    file = _File(path, raw)
    questions = _fast(raw)
    if questions is None:
        return file, _detailed(file, problems)
    if use_cache:
        cache.save(real, stat, questions)
    return file, questions


def load_paths(paths: list[Path], use_cache: bool = True, lint: bool = False, linted: list[Path] | None = None) -> Bank:
    """Load every bank in ``paths``; raise :class:`BankError` listing every problem found.

    ``use_cache=False`` (``drill bank validate``) re-validates every file from its YAML;
    ``lint=True`` adds the validator-only rules: keyword quality, rendering, self-contained prompts
    and near-duplicate prompts, for the questions of the files under ``linted`` (default: all).
    Checking one's own bank then costs what that bank costs, not a re-lint of the bundled one
    (whose questions still count for ids, topics and near duplicates).
    """
    bank, problems = Bank(), []
    files: dict[Path, _File] = {}
    seen: set[Path] = set()  # a file named twice (bundled bank passed explicitly) loads once
    for root in paths:
        if not root.exists():
            problems.append(Msg("{path}:1: no such file or folder", path=str(root)))
            continue
        found = _yaml_files(root)
        if not found:
            problems.append(Msg("{path}:1: no .yaml files in this folder", path=str(root)))
        for path in found:
            real = path.resolve()
            if real in seen:
                continue
            seen.add(real)
            loaded = _load_file(path, real, problems, use_cache)
            if loaded is None:
                continue
            file, questions = loaded
            files[path] = file
            bank.files.append(path)
            for index, question in enumerate(questions):
                if question is None:
                    continue
                if question.id in bank.questions:
                    first_path, first_index = bank.origins[question.id]
                    first = files[first_path].where(["questions", first_index, "id"])
                    problems.append(file.problem(["questions", index, "id"], Msg("duplicate id {id!r} (first defined at {first})", id=question.id, first=first)))
                    continue
                bank.questions[question.id] = question
                bank.origins[question.id] = (path, index)
    for qid, question in bank.questions.items():
        for j, target in enumerate(question.follow_ups):
            if target not in bank.questions:
                path, index = bank.origins[qid]
                problems.append(files[path].problem(["questions", index, "follow_ups", j], Msg("question {id!r}: follow_ups names unknown id {target!r}", id=qid, target=target)))
    if lint:
        problems += _lint(bank, files, linted)
    if problems:
        raise BankError(problems)
    return bank


def _under(path: Path, roots: list[Path]) -> bool:
    real = path.resolve()
    return any(real == root or root in real.parents for root in roots)


def _lint(bank: Bank, files: dict[Path, _File], linted: list[Path] | None) -> list[str]:
    from drill.bank.checks import generic_keyword_problems, keyword_problems, reference_problems, render_problems
    from drill.bank.duplicates import near_duplicates

    def at(qid: str, keys: list) -> tuple[_File, list]:
        path, index = bank.origins[qid]
        return files.get(path) or files.setdefault(path, _File(path)), ["questions", index, *keys]

    problems = []
    questions = list(bank.questions.values())
    roots = [root.resolve() for root in linted] if linted is not None else None
    mine = {qid for qid, (path, _) in bank.origins.items() if roots is None or _under(path, roots)}
    generic = generic_keyword_problems(questions, mine)
    for qid, question in bank.questions.items():
        if qid not in mine:
            continue
        found = [*keyword_problems(question), *generic.get(qid, []), *render_problems(question), *reference_problems(question)]
        for keys, message in found:
            file, where = at(qid, keys)
            problems.append(file.problem(where, Msg("question {id!r}: {problem}", id=qid, problem=message)))
    for i, j, score in near_duplicates(questions):
        first, second = questions[i].id, questions[j].id
        if first not in mine and second not in mine:
            continue
        file, where = at(second, ["prompt"])
        other = at(first, ["prompt"])
        problems.append(file.problem(where, Msg("question {id!r}: prompt nearly repeats {other!r} at {where} (similarity {score:.0f}/100); merge them or ask something different",
                                                id=second, other=first, where=other[0].where(other[1]), score=score)))  # fmt: skip
    return problems


def default_paths(extra: list[Path] | None = None) -> list[Path]:
    """The bundled bank, then ``$DRILL_BANKS``, then banks given on the command line."""
    return [bundled_bank_dir(), *extra_bank_paths(), *(extra or [])]


def load_bank(extra: list[Path] | None = None) -> Bank:
    return load_paths(default_paths(extra))


def load_bundled() -> Bank:
    return load_paths([bundled_bank_dir()])
