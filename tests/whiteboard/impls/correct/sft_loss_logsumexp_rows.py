import torch


def sft_loss(logits, labels, num_items_in_batch=None):
    """Row by row: the log-sum-exp written out, the losses and the count accumulated over the batch."""
    total = logits.new_zeros(())
    count = 0
    for row_logits, row_labels in zip(logits, labels):
        scores, targets = row_logits[:-1], row_labels[1:]
        keep = targets != -100
        scores, targets = scores[keep], targets[keep]
        m = scores.amax(dim=-1, keepdim=True)
        lse = (scores - m).exp().sum(dim=-1).log() + m.squeeze(-1)
        total = total + (lse - scores.gather(-1, targets[:, None]).squeeze(-1)).sum()
        count += int(keep.sum())
    return total / (count if num_items_in_batch is None else num_items_in_batch)


def build_labels(input_ids, prompt_lens, pad_id):
    t = input_ids.shape[1]
    lens = torch.as_tensor(prompt_lens).reshape(-1, 1)
    drop = (torch.arange(t).expand_as(input_ids) < lens) | input_ids.eq(pad_id)
    return torch.where(drop, torch.full_like(input_ids, -100), input_ids)
