import torch


def softmax(x, dim=-1):
    """Move dim last, work on rows, move it back."""
    rows = x.movedim(dim, -1)
    e = (rows - rows.max(dim=-1, keepdim=True).values).exp()
    return (e / e.sum(-1, keepdim=True)).movedim(-1, dim)
