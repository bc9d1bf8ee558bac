import torch


def sft_loss(logits, labels, num_items_in_batch=None):
    logits, labels = logits[:, :-1], labels[:, 1:]
    valid = labels != -100
    logp = torch.log_softmax(logits, dim=-1)
    nll = -logp.gather(-1, torch.where(valid, labels, 0)[..., None]).squeeze(-1) * valid
    per_sequence = nll.sum(dim=1) / valid.sum(dim=1)  # a mean per sequence, then over sequences
    return per_sequence.mean()


def build_labels(input_ids, prompt_lens, pad_id):
    positions = torch.arange(input_ids.shape[1], device=input_ids.device)
    prompt_lens = torch.as_tensor(prompt_lens, device=input_ids.device)
    prompt = positions[None, :] < prompt_lens[:, None]
    return input_ids.masked_fill(prompt | (input_ids == pad_id), -100)
