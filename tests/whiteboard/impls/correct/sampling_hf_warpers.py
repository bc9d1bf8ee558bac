"""Hugging Face's TemperatureLogitsWarper, TopKLogitsWarper and TopPLogitsWarper, and the sampling step of
GenerationMixin._sample, as written.

Source: https://github.com/huggingface/transformers/blob/00857b6cf63a4fa05cbd9bdc8a4fd78b6168c5af/src/transformers/generation/logits_process.py
(the step: src/transformers/generation/utils.py, `probs = softmax(next_token_scores, dim=-1)`,
`torch.multinomial(probs, num_samples=1).squeeze(1)`).
Adapted: the input checks of the constructors and the docstring decorators are left out; the warpers take
[batch, vocab] scores (TopP scatters along dim 1), so filter_logits views any leading dims as rows and applies
them in generate's order (temperature, top-k, top-p), each only when set, as generate builds the list; sample
passes the contract's generator to torch.multinomial (generate uses the global one).
"""
import torch


class TemperatureLogitsWarper:
    def __init__(self, temperature: float):
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        scores_processed = scores / self.temperature
        return scores_processed


class TopPLogitsWarper:
    def __init__(self, top_p: float, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1):
        top_p = float(top_p)
        self.top_p = top_p
        self.filter_value = filter_value
        self.min_tokens_to_keep = min_tokens_to_keep

    def __call__(self, input_ids, scores):
        sorted_logits, sorted_indices = torch.sort(scores, descending=False)
        cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)

        # Remove tokens with cumulative top_p above the threshold (token with 0 are kept)
        sorted_indices_to_remove = cumulative_probs <= (1 - self.top_p)
        # Keep at least min_tokens_to_keep
        sorted_indices_to_remove[..., -self.min_tokens_to_keep :] = 0

        # scatter sorted tensors to original indexing
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
        scores_processed = scores.masked_fill(indices_to_remove, self.filter_value)
        return scores_processed


class TopKLogitsWarper:
    def __init__(self, top_k: int, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1):
        self.top_k = max(top_k, min_tokens_to_keep)
        self.filter_value = filter_value
        self.min_tokens_to_keep = min_tokens_to_keep  # used for CB processor initialization

    def __call__(self, input_ids, scores):
        top_k = min(self.top_k, scores.size(-1))  # Safety check
        # Remove all tokens with a probability less than the last token of the top-k
        indices_to_remove = scores < torch.topk(scores, top_k)[0][..., -1, None]
        scores_processed = scores.masked_fill(indices_to_remove, self.filter_value)
        return scores_processed


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    warpers = []
    if temperature is not None and temperature != 1.0:
        warpers.append(TemperatureLogitsWarper(temperature))
    if top_k is not None and top_k != 0:
        warpers.append(TopKLogitsWarper(top_k=top_k, min_tokens_to_keep=1))
    if top_p is not None and top_p < 1.0:
        warpers.append(TopPLogitsWarper(top_p=top_p, min_tokens_to_keep=1))
    scores = logits.reshape(-1, logits.shape[-1])
    for warper in warpers:
        scores = warper(None, scores)
    return scores.clone().view(logits.shape)


def sample(logits, generator):
    next_token_scores = logits.reshape(-1, logits.shape[-1])
    probs = torch.nn.functional.softmax(next_token_scores, dim=-1)
    next_tokens = torch.multinomial(probs, num_samples=1, generator=generator).squeeze(1)
    return next_tokens.view(logits.shape[:-1])
