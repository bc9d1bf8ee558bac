import torch
import torch.nn.functional as F


def dropout(x, p, training, generator=None):
    seed = int(torch.randint(2**62, (1,), generator=generator, device=x.device))
    with torch.random.fork_rng(devices=[x.device] if x.is_cuda else []):
        torch.manual_seed(seed)  # the generator picks the seed, so a run is reproducible
        return F.dropout(x, p, training)
