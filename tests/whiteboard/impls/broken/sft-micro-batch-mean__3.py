import torch
from torch import nn


def sft_loss(logits, labels, num_items_in_batch=None):
    """The pre-2024 Trainer: CrossEntropyLoss's mean per micro-batch, whatever the accumulation step holds."""
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    return nn.CrossEntropyLoss()(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))


def build_labels(input_ids, prompt_lens, pad_id):
    labels = input_ids.clone()
    for row, n in enumerate(prompt_lens):
        labels[row, : int(n)] = -100
    labels[input_ids == pad_id] = -100
    return labels
