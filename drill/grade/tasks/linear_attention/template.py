import torch
import torch.nn.functional as F


def linear_attention(q, k, v, causal=False, eps=1e-6):
    """Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs") in O(T), never O(T^2).

    q, k: [..., T, D]   v: [..., T, Dv]   (any leading dims)
    phi(x) = elu(x) + 1;  out_i = phi(q_i) . S_i / (phi(q_i) . z_i + eps), where
    S_i = sum_j phi(k_j) v_j^T  [D, Dv]  and  z_i = sum_j phi(k_j)  [D]
    over all j, or over j <= i when causal (prefix sums). No 1/sqrt(D) scale.
    returns: [..., T, Dv]
    Rule: no tensor may grow as T x T (prefix-sum states of T * D * Dv elements are fine).
    """
    raise NotImplementedError
