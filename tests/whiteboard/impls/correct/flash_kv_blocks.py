import torch


def flash_attention(q, k, v, causal=False, block_size=64):
    """All queries at once, one key/value block at a time (online softmax over the key blocks)."""
    scale = q.shape[-1] ** -0.5
    q_pos = torch.arange(q.shape[-2], device=q.device)[:, None]
    m = q.new_full(q.shape[:-1] + (1,), float("-inf"))
    l = q.new_zeros(q.shape[:-1] + (1,))
    acc = q.new_zeros(q.shape[:-1] + (v.shape[-1],))
    for start in range(0, k.shape[-2], block_size):
        kb, vb = k[..., start:start + block_size, :], v[..., start:start + block_size, :]
        s = torch.einsum("...qd,...kd->...qk", q, kb) * scale
        if causal:
            k_pos = torch.arange(start, start + kb.shape[-2], device=q.device)[None, :]
            s = s.masked_fill(k_pos > q_pos, float("-inf"))
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        correction = torch.exp(m - m_new)
        p = torch.exp(s - m_new)
        l = l * correction + p.sum(dim=-1, keepdim=True)
        acc = acc * correction + p @ vb
        m = m_new
    return acc / l
