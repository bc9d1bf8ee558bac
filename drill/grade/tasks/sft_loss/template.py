import torch


def sft_loss(logits, labels, num_items_in_batch=None):
    """The supervised fine-tuning loss of a causal LM: next-token cross-entropy on the response tokens.

    logits: [B, T, V], the model's output at every position
    labels: [B, T] int64, NOT shifted: labels[b, t] is the token at position t, or -100 (ignored: prompt, padding)
    the logits at position t predict the token at t + 1: shift by one inside (the last position predicts nothing)
    num_items_in_batch: None, an int or a 0-d tensor. None: the mean over every counted (non -100) token of the
        whole batch; given: the sum of the token losses divided by it (the number of counted tokens over all the
        micro-batches of a gradient-accumulation step, so that the micro-batch losses add up to the full batch's)
    returns: a 0-dim tensor in the logits' dtype
    """
    raise NotImplementedError


def build_labels(input_ids, prompt_lens, pad_id):
    """The labels for sft_loss: input_ids with the prompt and the padding replaced by -100.

    input_ids: [B, T] int64, each row the prompt, then the response, then right padding with pad_id
    prompt_lens: [B] int64 tensor (or a list of ints): row b's first prompt_lens[b] tokens are its prompt
    pad_id: the padding token's id (it appears nowhere else)
    returns: [B, T] int64, a new tensor (input_ids unchanged)
    """
    raise NotImplementedError
