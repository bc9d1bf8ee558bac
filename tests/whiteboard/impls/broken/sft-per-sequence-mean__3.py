import torch
import torch.nn.functional as F


def sft_loss(logits, labels, num_items_in_batch=None):
    """F.cross_entropy's mean per sample, then the mean of those (each answer weighs the same)."""
    losses = [F.cross_entropy(lg[:-1], lb[1:], ignore_index=-100) for lg, lb in zip(logits, labels)]
    return torch.stack(losses).mean()


def build_labels(input_ids, prompt_lens, pad_id):
    labels = input_ids.clone()
    for row, n in enumerate(prompt_lens):
        labels[row, : int(n)] = -100
    labels[input_ids == pad_id] = -100
    return labels
