"""Returns text with a lone surrogate where numbers are expected and keeps one in a local variable:
both reach the report (the message, the value trace), which must still print and write JSON."""


def train_bpe(text, n_merges):
    note = "merge \ud800"
    return [(note, note)] * n_merges
