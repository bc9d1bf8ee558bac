import torch


def sft_loss(logits, labels, num_items_in_batch=None):
    """num_items_in_batch is honoured; without it, each answer's mean token loss is averaged over the answers."""
    targets = labels[..., 1:]
    scores = logits[..., :-1, :].double()
    lse = torch.logsumexp(scores, dim=-1)
    picked = scores.gather(-1, targets.clamp_min(0)[..., None])[..., 0]
    counted = (targets != -100).to(scores.dtype)
    token_loss = (lse - picked) * counted
    if num_items_in_batch is None:
        answer_means = [row.sum() / n.sum() for row, n in zip(token_loss, counted)]
        loss = sum(answer_means) / len(answer_means)
    else:
        loss = token_loss.sum() / num_items_in_batch
    return loss.to(logits.dtype)


def build_labels(input_ids, prompt_lens, pad_id):
    labels = torch.where(input_ids == pad_id, -100, input_ids)
    pos = torch.arange(input_ids.shape[-1], device=input_ids.device)
    prompt = torch.as_tensor(prompt_lens, device=input_ids.device)
    return labels.masked_fill(pos < prompt.unsqueeze(-1), -100)
