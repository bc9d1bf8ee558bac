import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    """Temperature, top-k and top-p (nucleus) filtering over the last dim, in this order.

    logits: [..., V] (any leading dims)   returns: a new tensor shaped like logits (do not modify logits)
    1. divide by temperature;
    2. top_k > 0: keep the top_k largest logits of each row (0 = off);
    3. top_p < 1: keep the smallest set of most probable tokens whose cumulative probability
       (softmax of what is left) reaches top_p, the token that crosses it included; always at least one.
    Kept tokens hold logits / temperature, removed ones float('-inf').
    """
    raise NotImplementedError


def sample(logits, generator):
    """One token id per row drawn from softmax(logits) over the last dim, using `generator`.

    logits: [..., V] (may hold -inf)   generator: a torch.Generator   returns: int64 ids [...]
    """
    raise NotImplementedError
