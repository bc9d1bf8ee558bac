import torch


def sft_loss(logits, labels, num_items_in_batch=None):
    logits = logits[:, :-1].reshape(-1, logits.shape[-1])
    labels = labels[:, 1:].reshape(-1)
    valid = labels != -100
    logp = torch.log_softmax(logits, dim=-1)
    nll = -logp.gather(-1, torch.where(valid, labels, 0)[:, None]).squeeze(-1)
    total = (nll * valid).sum()
    if num_items_in_batch is None:
        return total / valid.numel()  # every position, -100 ones too
    return total / num_items_in_batch


def build_labels(input_ids, prompt_lens, pad_id):
    positions = torch.arange(input_ids.shape[1], device=input_ids.device)
    prompt_lens = torch.as_tensor(prompt_lens, device=input_ids.device)
    prompt = positions[None, :] < prompt_lens[:, None]
    return input_ids.masked_fill(prompt | (input_ids == pad_id), -100)
