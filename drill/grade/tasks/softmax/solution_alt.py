import torch


def softmax(x, dim=-1):
    """Through the log-sum-exp: log softmax(x) = x - m - log(sum(exp(x - m))), with m the max along dim."""
    m = torch.amax(x, dim=dim, keepdim=True)
    lse = m + torch.log(torch.sum(torch.exp(x - m), dim=dim, keepdim=True))
    return torch.exp(x - lse)
