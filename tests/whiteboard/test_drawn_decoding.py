"""Drawn shapes for the decoding and RL-loss tasks (issue 27): a file right only at the grader's fixed
configurations passes every fixed check and fails the check whose sizes come from the grade's seed,
and that check's message names the drawn configuration so ``--seed N`` reproduces it."""

from __future__ import annotations

import pytest

from drill.grade.battery import run_battery

BEAM_MEMORISED = '''
import torch


def beam_search(step_fn, bos_id, eos_id, beam_size, max_len):
    """Right at the vocabularies the author tried; greedy anywhere else."""
    beams, finished = [([bos_id], 0.0)], []
    for _ in range(max_len):
        if not beams:
            break
        logp = step_fn(torch.tensor([seq for seq, _ in beams]))
        width = beam_size if logp.shape[-1] in (4, 5, 6, 7, 8, 12, 20) else 1
        totals = torch.tensor([score for _, score in beams], dtype=logp.dtype)[:, None] + logp
        best = torch.topk(totals.flatten(), min(width, totals.numel())).indices.tolist()
        survivors = []
        for index in best:
            i, token = divmod(index, logp.shape[-1])
            hyp = (beams[i][0] + [token], totals[i, token].item())
            (finished if token == eos_id else survivors).append(hyp)
        beams = survivors
    seq, score = max(finished + beams, key=lambda h: h[1])
    return seq[1:], score
'''

BPE_MEMORISED = '''
from collections import Counter


def _merge(ids, pair, new, step):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new)
            i += step
        else:
            out.append(ids[i])
            i += 1
    return out


def train_bpe(text, n_merges):
    """Merges without overlap at the merge counts the author tried; overlapping windows otherwise."""
    step = 2 if n_merges in (3, 4, 5, 6, 12, 25, 30) else 1
    ids, merges = list(text.encode("utf-8")), []
    for k in range(n_merges):
        counts = Counter(zip(ids, ids[1:]))
        if not counts:
            break
        best = counts.most_common(1)[0][0]
        merges.append(best)
        ids = _merge(ids, best, 256 + k, step)
    return merges


def encode(text, merges):
    ranks = {tuple(p): k for k, p in enumerate(merges)}
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        pair = min(zip(ids, ids[1:]), key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        ids = _merge(ids, pair, 256 + ranks[pair], 2)
    return ids
'''

SAMPLING_MEMORISED = '''
import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    """Top-p only at the vocabulary sizes the author tried."""
    logits = logits / temperature
    if top_k > 0:
        kth = torch.topk(logits, min(top_k, logits.size(-1)), dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0 and logits.size(-1) in (5, 7, 9, 10, 11, 12, 16):
        probs, order = torch.sort(torch.softmax(logits, dim=-1), dim=-1, descending=True)
        remove = probs.cumsum(dim=-1) - probs >= top_p
        remove[..., 0] = False
        logits = logits.masked_fill(remove.scatter(-1, order, remove), float("-inf"))
    return logits


def sample(logits, generator):
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs.reshape(-1, probs.size(-1)), 1, generator=generator).reshape(probs.shape[:-1])
'''

SPECULATIVE_MEMORISED = '''
import torch


def _draw(probs, u):
    return int(torch.searchsorted(probs.cumsum(0), u.reshape(1), right=True).clamp(max=probs.numel() - 1))


def speculative_accept(draft_tokens, draft_probs, target_probs, uniforms):
    """The bonus token only for the numbers of drafts the author tried."""
    out, gamma = [], len(draft_tokens)
    for i, x in enumerate(draft_tokens.tolist()):
        if uniforms[i] < torch.clamp(target_probs[i, x] / draft_probs[i, x], max=1.0):
            out.append(x)
            continue
        residual = (target_probs[i] - draft_probs[i]).clamp(min=0)
        out.append(_draw(residual / residual.sum(), uniforms[i + 1]))
        return torch.tensor(out, dtype=torch.int64, device=draft_tokens.device)
    if gamma in (1, 3, 4, 5):
        out.append(_draw(target_probs[gamma], uniforms[gamma]))
    return torch.tensor(out, dtype=torch.int64, device=draft_tokens.device)
'''

DPO_BATCH_8 = '''
import torch.nn.functional as F


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, beta=0.1):
    """The mean over a batch size written in as 8."""
    margin = (policy_chosen_logps - policy_rejected_logps) - (ref_chosen_logps - ref_rejected_logps)
    loss = -F.logsigmoid(beta * margin).sum() / 8
    return loss, beta * (policy_chosen_logps - ref_chosen_logps).detach(), beta * (policy_rejected_logps - ref_rejected_logps).detach()
'''

GRPO_GROUP_4 = '''
import torch


def grpo_loss(logps, old_logps, ref_logps, rewards, mask, clip_eps=0.2, beta=0.04):
    """Groups of 4 written in: the rewards are regrouped by 4 whatever their shape."""
    grouped = rewards.reshape(-1, 4)
    advantages = ((grouped - grouped.mean(dim=1, keepdim=True)) / (grouped.std(dim=1, keepdim=True) + 1e-4)).reshape(-1, 1)
    logps, old_logps, ref_logps = (t.reshape(advantages.shape[0], -1) for t in (logps, old_logps, ref_logps))
    mask = mask.reshape(advantages.shape[0], -1).to(logps.dtype)
    ratio = torch.exp(logps - old_logps)
    objective = torch.min(ratio * advantages, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages)
    kl = torch.exp(ref_logps - logps) - (ref_logps - logps) - 1
    return (-(objective - beta * kl) * mask).sum() / mask.sum()
'''

PADDING_BUFFER_7 = '''
import torch

CAUSAL = torch.tril(torch.ones(7, 7, dtype=torch.bool))  # long enough for every T the author tried


def make_attention_mask(lengths, T, causal=False):
    keys = torch.arange(T, device=lengths.device)[None, :] < lengths[:, None]
    mask = keys[:, None, None, :].expand(-1, 1, T, T)
    if causal:
        mask = mask & CAUSAL[:T, :T].to(lengths.device)
    return mask
'''

# (task, source, seed, the checks it fails): every other check passes.
CASES = [
    ("beam_search", BEAM_MEMORISED, 3, {"numerical.drawn"}),
    ("bpe", BPE_MEMORISED, 3, {"numerical.train-drawn"}),
    ("sampling", SAMPLING_MEMORISED, 3, {"numerical.drawn"}),
    ("speculative", SPECULATIVE_MEMORISED, 3, {"numerical.drawn"}),
    ("dpo_loss", DPO_BATCH_8, 3, {"numerical.drawn"}),
    ("grpo", GRPO_GROUP_4, 3, {"numerical.drawn", "gradient.drawn"}),
    ("padding", PADDING_BUFFER_7, 3, {"numerical.drawn"}),
]


@pytest.mark.parametrize(("task", "source", "seed", "failing"), CASES, ids=[case[0] for case in CASES])
def test_a_file_right_only_at_the_fixed_shapes_fails_the_drawn_check(tmp_path, task, source, seed, failing):
    path = tmp_path / f"{task}.py"
    path.write_text(source)
    report = run_battery(path, task=task, device="cpu", seed=seed)
    failed = {c.id for c in report.checks if c.status != "pass"}
    assert failed == failing, [(c.id, c.message) for c in report.checks if c.status != "pass"]
    for check in (c for c in report.checks if c.id in failing):
        if check.status == "error":  # the user's code raised: the message is its own line
            assert f"{task}.py:" in check.message, check.message
        else:
            assert check.message.startswith("a configuration drawn from the seed ("), check.message
