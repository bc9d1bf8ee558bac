"""Answers read line by line when stdin is not a terminal, so quizzes can be scripted and tested.

One line answers a choice, numeric or shape question; an open answer is every line
up to a blank one, followed by one line with the self-rating 1-4.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from drill.practice.answers import Rating, parse_rating
from drill.errors import DrillError
from drill.practice.quiz import Reply


class LineReader:
    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stdin
        self.line_no = 0

    def _line(self) -> str:
        line = self.stream.readline()
        if not line:
            raise EOFError
        self.line_no += 1
        return line.rstrip("\r\n")

    def answer(self, q, limit: int, strict: bool) -> Reply:
        start = time.monotonic()
        if q.objective:
            text = self._line().strip()
        else:
            lines: list[str] = []
            try:
                while (line := self._line()).strip():
                    lines.append(line)
            except EOFError:
                if not lines:
                    raise
            text = "\n".join(lines)
        seconds = time.monotonic() - start
        return Reply(text, seconds, cut_off=strict and seconds > limit)

    def rating(self, buttons: str = "") -> Rating:
        line = self._line()
        rating = parse_rating(line)
        if rating is None:
            raise DrillError("stdin line {n}: expected a self-rating 1-4 (Again, Hard, Good, Easy), got {line!r}", n=self.line_no, line=line)
        return rating
