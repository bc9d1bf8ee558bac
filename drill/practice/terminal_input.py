"""Timed answers in a real terminal with prompt_toolkit (imported only on this interactive path).

A bottom toolbar redraws every second with the time left, or the overtime under
the default soft deadline. Open answers are multi-line and submitted with
Esc Enter or Ctrl-D, never plain Enter, which Chinese input methods use to commit
a composition. A single-answer choice is submitted by one key press.
"""

from __future__ import annotations

import time

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.application import get_app
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.utils import get_cwidth

from drill.practice.answers import LETTERS, Rating, judge
from drill.bank.schema import ChoiceQuestion
from drill.text.i18n import t
from drill.practice.quiz import Reply

RATING_KEYS = {"1": Rating.AGAIN, "2": Rating.HARD, "3": Rating.GOOD, "4": Rating.EASY}
TOOLBAR_COLUMNS = 60  # the toolbar never wraps onto a second line in a narrow (split) terminal
ALARM = "bg:ansired fg:ansiwhite"


def fit_toolbar(clocks: list[tuple[str, str]], hints: list[str], columns: int = TOOLBAR_COLUMNS) -> FormattedText:
    """The clocks (style, text) always, then each key hint that still fits in ``columns`` cells, in order, between dots."""
    parts: list[tuple[str, str]] = []

    def add(style: str, text: str) -> None:
        parts.extend([*([("", "·")] if parts else []), (style, f" {text} ")])

    for style, text in clocks:
        add(style, text)
    for hint in hints:
        if sum(get_cwidth(text) for _, text in parts) + get_cwidth(f"· {hint} ") <= columns:
            add("", hint)
    return FormattedText(parts)


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


def _single_keys(keys: list[str]) -> KeyBindings:
    """Bindings that submit on one of ``keys`` (either case) and ignore every other printable key."""
    kb = KeyBindings()

    @kb.add(Keys.Any)
    def _ignore(event) -> None:
        pass

    @kb.add(Keys.Enter)
    def _ignore_enter(event) -> None:
        pass

    def submit(key: str):
        def handler(event) -> None:
            event.current_buffer.insert_text(key)
            event.app.exit(result=key)

        return handler

    for key in keys:
        for variant in {key.lower(), key.upper()}:
            kb.add(variant, eager=True)(submit(key))
    return kb


def _multiline_keys() -> KeyBindings:
    kb = KeyBindings()

    @kb.add("escape", "enter")
    @kb.add("c-d")
    def _submit(event) -> None:
        event.app.exit(result=event.app.current_buffer.text)

    return kb


class TerminalReader:
    """``stop_at``: a mock interview's end (monotonic), shown as a second clock and rung at 0:00."""

    def __init__(self, lang: str = "en", stop_at: float | None = None):
        self.lang, self.stop_at = lang, stop_at

    def answer(self, q, limit: int, strict: bool) -> Reply:
        lang = self.lang
        single = isinstance(q, ChoiceQuestion) and len(q.correct_set) == 1
        if single:
            keys, hint = _single_keys(list(LETTERS[: len(q.choices)])), f"{t('press', lang)} {LETTERS[0]}-{LETTERS[len(q.choices) - 1]}"
        elif not q.objective:
            keys, hint = _multiline_keys(), t("submit_multiline", lang)
        else:
            keys, hint = None, t("submit_enter", lang)
        hints = [hint, t("stop", lang)]
        start = time.monotonic()
        cut = {"off": False}
        rung: set[str] = set()

        def bell_once(which: str) -> None:
            """The terminal's bell at 0:00 of the question (or of the mock), once."""
            if which not in rung:
                rung.add(which)
                get_app().output.bell()

        def mock_clock() -> list[tuple[str, str]]:
            if self.stop_at is None:
                return []
            left = self.stop_at - time.monotonic()
            if left > 0:
                return [("", t("mock_left", lang, clock=_clock(left)))]
            bell_once("mock")
            return [(ALARM, f"⏰ {t('mock_left', lang, clock='0:00')}")]

        def toolbar() -> FormattedText:
            used = time.monotonic() - start
            if used < limit:
                return fit_toolbar([("", f"⏱ {_clock(limit - used)} {t('left', lang)}"), *mock_clock()], hints)
            bell_once("question")
            return fit_toolbar([(ALARM, f"⏰ 0:00 {t('times_up', lang)} +{_clock(used - limit)}"), *mock_clock()], hints)

        async def deadline() -> None:
            import asyncio

            await asyncio.sleep(max(0.0, limit - (time.monotonic() - start)))
            app = get_app()
            if not app.is_done:
                cut["off"] = True
                app.exit(result=app.current_buffer.text)

        def pre_run() -> None:
            if strict:
                get_app().create_background_task(deadline())

        session: PromptSession[str] = PromptSession()
        while True:
            text = session.prompt(
                "› ",
                multiline=not q.objective,
                key_bindings=keys,
                bottom_toolbar=toolbar,
                refresh_interval=1.0,
                pre_run=pre_run,
            ) or ""
            verdict = None if cut["off"] else judge(q, text)
            if verdict is None or verdict.unreadable is None:
                return Reply(text, time.monotonic() - start, cut_off=cut["off"])
            # Not graded: say why and ask again; the clock (and a strict deadline) keeps running from the first prompt.
            why = t(verdict.unreadable, lang, **verdict.values)
            print_formatted_text(FormattedText([("fg:ansired", f"✘ {why} · {t('type_again', lang)}")]))

    def rating(self, buttons: str = "") -> Rating:
        """``buttons``: each rating with the interval it gives (quiz.rating_buttons), shown before the key press."""
        session: PromptSession[str] = PromptSession()
        key = session.prompt(
            t("rate_prompt", self.lang),
            key_bindings=_single_keys(list(RATING_KEYS)),
            bottom_toolbar=fit_toolbar([("", buttons or t("ratings", self.lang).strip())], [t("stop", self.lang)]),
        )
        return RATING_KEYS[key]
