import torch.nn.functional as F


def sft_loss(logits, labels, num_items_in_batch=None):
    """Labels taken as already shifted: F.cross_entropy on the raw [B*T] pairs."""
    total = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100, reduction="sum")
    return total / ((labels != -100).sum() if num_items_in_batch is None else num_items_in_batch)


def build_labels(input_ids, prompt_lens, pad_id):
    labels = input_ids.clone()
    for row, n in enumerate(prompt_lens):
        labels[row, : int(n)] = -100
    labels[input_ids == pad_id] = -100
    return labels
