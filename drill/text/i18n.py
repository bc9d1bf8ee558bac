"""Interface labels in English and Chinese, so `--lang zh` is Chinese end to end."""

from __future__ import annotations

LABELS: dict[str, tuple[str, str]] = {
    "right": ("right", "正确"),
    "wrong": ("wrong", "错误"),
    "answer_is": ("answer: {answer}", "答案：{answer}"),
    "reference": ("reference answer", "参考答案"),
    "key_points": ("Key points", "要点"),
    "pitfalls": ("Pitfalls", "常见误区"),
    "follow_ups": ("Follow-ups", "追问"),
    "key_point_hint": ("(✔ = a keyword of it is in your answer)", "（✔ = 你的回答里出现了该要点的关键词）"),
    "rate_hint": ("Rate yourself: 1 Again, 2 Hard, 3 Good, 4 Easy.", "自评：1 重来，2 困难，3 良好，4 简单。"),
    "rate_prompt": ("rate yourself › ", "自评 › "),
    "rate_hint_buttons": ("Rate yourself (next review after each rating): {buttons}", "自评（每档后面是下次复习的间隔）：{buttons}"),
    "times_up": ("time's up", "时间到"),
    "mock_left": ("interview {clock} left", "面试剩余 {clock}"),
    "mock_over": ("⏰ Time's up: the {minutes}-minute interview is over; the {n} answers given are saved.", "⏰ 时间到：{minutes} 分钟的面试结束，已作答的 {n} 题都已保存。"),
    "ratings": (" 1 Again  ·  2 Hard  ·  3 Good  ·  4 Easy", " 1 重来  ·  2 困难  ·  3 良好  ·  4 简单"),
    "left": ("left", "剩余"),
    "over_time": ("over time", "超时"),
    "time_ran_out": ("time ran out", "时间到"),
    "press": ("press", "按"),
    "submit_enter": ("Enter: submit", "Enter 提交"),
    "submit_multiline": ("Esc Enter or Ctrl-D: submit", "Esc Enter 或 Ctrl-D 提交"),
    "stop": ("Ctrl-C: stop", "Ctrl-C 结束"),
    "question": ("question", "题目"),
    "level": ("level", "级别"),
    "result": ("result", "结果"),
    "time": ("time", "用时"),
    "score": ("score", "得分"),
    "answered": ("answered", "已答"),
    "not_rated": ("not rated", "未自评"),
    "stopped_early": ("stopped early ({why}): the {n} answers given are saved.", "提前结束（{why}）：已作答的 {n} 题都已保存。"),
    "stopped_interrupt": ("interrupt", "按了 Ctrl-C"),  # why a quiz or an interview stopped early
    "stopped_hangup": ("hangup", "终端已断开"),
    "stopped_eof": ("eof", "输入已结束"),
    "select_all": ("select all that apply", "多选：选出所有正确的选项"),
    "unreadable": ("unreadable", "无法识别"),
    "unreadable_because": ("unreadable: {why}", "无法识别：{why}"),
    "unreadable_number": ("can't read {text!r} as a number (try 29/38, 0.76, 76%, 2^29 or 4 GiB)", "无法把 {text!r} 识别为数字（可以写 29/38、0.76、76%、2^29 或 4 GiB）"),
    "unreadable_shape": ("can't read {text!r} as a shape (try (B, H, T, T) or [2, 8, 1, 21])", "无法把 {text!r} 识别为形状（可以写 (B, H, T, T) 或 [2, 8, 1, 21]）"),
    "unreadable_choice": ("can't read {text!r} as options {letters} (type letters, e.g. AC)", "无法把 {text!r} 识别为选项 {letters}（请输入字母，如 AC）"),
    "type_again": ("type it again; an empty answer gives up", "请重新输入；直接回车表示放弃"),
    "note_read_as": ("read {typed} as {value}", "{typed} 按 {value} 计"),
    "note_gb_gib": (
        "read {typed} as {value}: GB and MB are powers of 10 (10⁹ bytes), GiB and MiB powers of 2 (2³⁰ bytes, 7% more); the tolerance decides",
        "{typed} 按 {value} 计：GB、MB 是 10 的幂（10⁹ 字节），GiB、MiB 是 2 的幂（2³⁰ 字节，多约 7%），对错由容差决定",
    ),
    "Again": ("Again", "重来"),
    "Hard": ("Hard", "困难"),
    "Good": ("Good", "良好"),
    "Easy": ("Easy", "简单"),
}


LABELS["nothing_answered"] = ("Stopped before the first answer: nothing to save.", "在第一题作答前就结束了：没有需要保存的作答。")
# drill quiz --resume / --wrong and multi-select feedback (issue 29)
LABELS["resume_hint"] = ("Go on with the {n} question{s} left: drill quiz --resume", "继续剩下的 {n} 题：drill quiz --resume")
LABELS["nothing_to_resume"] = ("nothing to resume: the last quiz was finished (start one with drill quiz)",
                               "没有可继续的测验：上一次测验已经做完（用 drill quiz 开始新的）")
LABELS["resume_missing"] = ("the {n} questions left of the last quiz are not in the loaded banks: add the --bank it used",
                            "上次测验剩下的 {n} 题不在已加载的题库里：请加上当时用的 --bank")
LABELS["no_wrong"] = ("no wrong answers to redo among the selected questions (drill mistakes lists them)",
                      "所选范围内没有答错的题可重做（drill mistakes 列出错题）")
LABELS["missed"] = ("missed {letters}", "漏选 {letters}")
LABELS["extra"] = ("extra {letters}", "多选 {letters}")
# Question types and session kinds in headers and titles (in English the bank's own words, which commands also use).
NAMES_ZH = {"open": "问答", "choice": "选择", "numeric": "数值", "shape": "形状",
            "quiz": "测验", "review": "复习", "mock": "模拟面试", "pitch": "一分钟陈述"}  # fmt: skip


def word_label(word: str, lang: str) -> str:
    """A question type or session kind as shown: ``numeric``, or ``数值`` in Chinese."""
    return NAMES_ZH.get(word, word) if lang == "zh" else word


def t(key: str, lang: str, **values: object) -> str:
    en, zh = LABELS[key]
    return (zh if lang == "zh" else en).format(**values)
