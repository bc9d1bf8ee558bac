import torch
import torch.nn.functional as F


def sft_loss(logits, labels, num_items_in_batch=None):
    shift_labels = F.pad(labels, (0, 1), value=-100)[:, 1:]
    total = F.cross_entropy(logits.flatten(0, 1), shift_labels.flatten(), ignore_index=-100, reduction="sum")
    return total / ((shift_labels != -100).sum() if num_items_in_batch is None else num_items_in_batch)


def build_labels(input_ids, prompt_lens, pad_id):
    """Only the padding is masked: a pretraining-style labels = input_ids copy."""
    return torch.where(input_ids == pad_id, -100, input_ids)
