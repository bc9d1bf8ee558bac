import torch


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr, betas, eps, weight_decay):
    """One AdamW update of one parameter tensor, in place, exactly as torch.optim.AdamW does it.

    param, grad, exp_avg, exp_avg_sq: tensors of the same shape (any shape); param may be a leaf
        that requires grad (an nn.Parameter), so update it under torch.no_grad() as optimizer.step does
    step: int, the step count after this update (1 at the first call)
    lr: float   betas: (beta1, beta2)   eps: float   weight_decay: float (decoupled, as in AdamW)
    Update param, exp_avg (first moment) and exp_avg_sq (second moment) in place; returns nothing.
    Rules: no torch.optim.AdamW / Adam (or their functional forms); do not modify grad.
    """
    raise NotImplementedError
