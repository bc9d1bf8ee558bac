"""Interface labels in English and Chinese, so `--lang zh` is Chinese end to end."""

from __future__ import annotations

LABELS: dict[str, tuple[str, str]] = {
    "right": ("right", "正确"),
    "wrong": ("wrong", "错误"),
    "answer": ("answer", "答案"),
    "reference": ("reference answer", "参考答案"),
    "key_points": ("Key points", "要点"),
    "pitfalls": ("Pitfalls", "常见误区"),
    "follow_ups": ("Follow-ups", "追问"),
    "key_point_hint": ("(✔ = a keyword of it is in your answer)", "（✔ = 你的回答里出现了该要点的关键词）"),
    "rate_hint": ("Rate yourself: 1 Again, 2 Hard, 3 Good, 4 Easy.", "自评：1 重来，2 困难，3 良好，4 简单。"),
    "rate_prompt": ("rate yourself › ", "自评 › "),
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
    "Again": ("Again", "重来"),
    "Hard": ("Hard", "困难"),
    "Good": ("Good", "良好"),
    "Easy": ("Easy", "简单"),
}


def t(key: str, lang: str, **values: object) -> str:
    en, zh = LABELS[key]
    return (zh if lang == "zh" else en).format(**values)
