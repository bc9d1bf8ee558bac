import torch
import torch.nn.functional as F


def sft_loss(logits, labels, num_items_in_batch=None):
    shift_logits = logits[:, :-1, :]
    shift_labels = labels[:, 1:]
    logp = torch.log_softmax(shift_logits, dim=-1)
    valid = shift_labels != -100
    tok = -logp.gather(-1, shift_labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    total = (tok * valid).sum()
    denom = valid.sum()
    return (total / denom).to(logits.dtype)


def build_labels(input_ids, prompt_lens, pad_id):
    labels = input_ids.clone()
    pl = torch.as_tensor(prompt_lens, device=input_ids.device)
    pos = torch.arange(input_ids.shape[1], device=input_ids.device)
    labels[pos[None, :] <= pl[:, None]] = -100
    labels[input_ids == pad_id] = -100
    return labels
