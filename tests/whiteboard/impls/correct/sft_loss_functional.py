import torch
import torch.nn.functional as F


def sft_loss(logits, labels, num_items_in_batch=None):
    """The shape of Hugging Face's ForCausalLMLoss: labels padded with -100 on the right and shifted, F.cross_entropy summed."""
    shift_labels = F.pad(labels, (0, 1), value=-100)[:, 1:]
    total = F.cross_entropy(logits.flatten(0, 1), shift_labels.flatten(), ignore_index=-100, reduction="sum")
    if num_items_in_batch is None:
        num_items_in_batch = (shift_labels != -100).sum()
    return total / num_items_in_batch


def build_labels(input_ids, prompt_lens, pad_id):
    labels = input_ids.clone()
    for row, n in enumerate(prompt_lens):
        labels[row, : int(n)] = -100
    labels[input_ids == pad_id] = -100
    return labels
