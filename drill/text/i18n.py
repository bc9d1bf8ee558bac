"""Interface labels as message ids (drill.text.messages), rendered from the catalog in the user's language, so
`--lang zh` is Chinese end to end; a table of them is looked up by key, and rendered where it is shown."""

from __future__ import annotations

from drill.text.messages import Msg, translated

LABELS: dict[str, Msg | tuple[Msg, Msg]] = {
    "right": Msg("right"),
    "wrong": Msg("wrong"),
    "answer_is": Msg("answer: {answer}"),
    "reference": Msg("reference answer"),
    "key_points": Msg("Key points"),
    "pitfalls": Msg("Pitfalls"),
    "follow_ups": Msg("Follow-ups"),
    "key_point_hint": Msg("(✔ = a keyword of it is in your answer)"),
    "rate_hint": Msg("Rate yourself: 1 Again, 2 Hard, 3 Good, 4 Easy."),
    "rate_prompt": Msg("rate yourself › "),
    "rate_hint_buttons": Msg("Rate yourself (next review after each rating): {buttons}"),
    "times_up": Msg("time's up"),
    "mock_left": Msg("interview {clock} left"),
    "mock_over": Msg("⏰ Time's up: the {minutes}-minute interview is over; the {n} answers given are saved."),
    "ratings": Msg(" 1 Again  ·  2 Hard  ·  3 Good  ·  4 Easy"),
    "left": Msg("left"),
    "over_time": Msg("over time"),
    "time_ran_out": Msg("time ran out"),
    "press": Msg("press"),
    "submit_enter": Msg("Enter: submit"),
    "submit_multiline": Msg("Esc Enter or Ctrl-D: submit"),
    "stop": Msg("Ctrl-C: stop"),
    "question": Msg("question"),
    "level": Msg("level"),
    "result": Msg("result"),
    "time": Msg("time"),
    "score": Msg("score"),
    "answered": Msg("answered"),
    "not_rated": Msg("not rated"),
    "stopped_early": Msg("stopped early ({why}): the {n} answers given are saved."),
    "stopped_interrupt": Msg("interrupt"),  # why a quiz or an interview stopped early
    "stopped_hangup": Msg("hangup"),
    "stopped_eof": Msg("eof"),
    "select_all": Msg("select all that apply"),
    "unreadable": Msg("unreadable"),
    "unreadable_because": Msg("unreadable: {why}"),
    "unreadable_number": Msg("can't read {text!r} as a number (try 29/38, 0.76, 76%, 2^29 or 4 GiB)"),
    "unreadable_shape": Msg("can't read {text!r} as a shape (try (B, H, T, T) or [2, 8, 1, 21])"),
    "unreadable_choice": Msg("can't read {text!r} as options {letters} (type letters, e.g. AC)"),
    "type_again": Msg("type it again; an empty answer gives up"),
    "note_read_as": Msg("read {typed} as {value}"),
    "note_gb_gib": Msg("read {typed} as {value}: GB and MB are powers of 10 (10⁹ bytes), GiB and MiB powers of 2 (2³⁰ bytes, 7% more); the tolerance decides"),
    "Again": Msg("Again"),
    "Hard": Msg("Hard"),
    "Good": Msg("Good"),
    "Easy": Msg("Easy"),
    "nothing_answered": Msg("Stopped before the first answer: nothing to save."),
    # drill quiz --resume / --wrong and multi-select feedback (issue 29)
    "resume_hint": (Msg("Go on with the {n} question left: drill quiz --resume"), Msg("Go on with the {n} questions left: drill quiz --resume")),
    "nothing_to_resume": Msg("nothing to resume: the last quiz was finished (start one with drill quiz)"),
    "resume_missing": Msg("the {n} questions left of the last quiz are not in the loaded banks: add the --bank it used"),
    "no_wrong": Msg("no wrong answers to redo among the selected questions (drill mistakes lists them)"),
    "missed": Msg("missed {letters}"),
    "extra": Msg("extra {letters}"),
}  # fmt: skip
# Question types and session kinds in headers and titles (in English the bank's own words, which commands also use).
NAMES = {"open": Msg("open"), "choice": Msg("choice"), "numeric": Msg("numeric"), "shape": Msg("shape"), "quiz": Msg("quiz"),
         "review": Msg("review"), "mock": Msg("mock"), "pitch": Msg("pitch")}  # fmt: skip


def plural(label, *counts: int) -> Msg:
    """A label's English variant for its counts (``1 hint`` but ``2 hints``): a tuple ``(one, many)``, nested once per
    count; a label with one form takes no count. Chinese has one form, which every variant holds in the catalog."""
    for n in counts:
        if not isinstance(label, tuple):
            break
        label = label[n != 1]
    return label


def text(msg: str, lang: str, **values: object) -> str:
    """A label in ``lang`` with its placeholders filled in (a value that is a message, in ``lang`` too)."""
    return translated(msg, lang).format(**{k: translated(v, lang) if isinstance(v, Msg) else v for k, v in values.items()})


def word_label(word: str, lang: str) -> str:
    """A question type or session kind as shown: ``numeric``, or ``数值`` in Chinese."""
    return translated(NAMES.get(word, word), lang)


def t(key: str, lang: str, *counts: int, **values: object) -> str:
    return text(plural(LABELS[key], *counts), lang, **values)
