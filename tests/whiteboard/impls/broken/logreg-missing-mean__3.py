import torch


# ML-From-Scratch (eriklindernoren), supervised_learning/logistic_regression.py, the gradient descent step:
#     y_pred = self.sigmoid(X.dot(self.param))
#     self.param -= self.learning_rate * -(y - y_pred).dot(X)
# ported to torch; the adapter starts from zeros (the original draws a random init) and keeps b, which it never has.
def bce_with_logits(logits, targets):
    return (logits.clamp(min=0) - logits * targets + torch.log1p(torch.exp(-logits.abs()))).mean()


def fit_logistic_regression(x, y, lr, steps):
    param = torch.zeros(x.shape[1], dtype=x.dtype, device=x.device)
    for _ in range(steps):
        y_pred = torch.sigmoid(x @ param)
        param -= lr * -(y - y_pred) @ x
    return param, torch.zeros((), dtype=x.dtype, device=x.device)
