"""The closed forms the lr_schedule and rmsnorm tasks grade against, checked against torch itself."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from drill.grade.tasks import detect
from drill.grade.tasks.lr_schedule.task import reference as lr_reference
from drill.grade.tasks.rmsnorm.task import llama


def test_cosine_decay_equals_torch_cosine_annealing_after_the_warmup():
    warmup, total, max_lr, min_lr = 5, 45, 3e-4, 3e-5
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=max_lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup, eta_min=min_lr)
    for step in range(warmup, total + 1):
        assert abs(opt.param_groups[0]["lr"] - lr_reference(step, warmup, total, max_lr, min_lr)) < 1e-15
        opt.step()
        sched.step()


def test_warmup_joins_the_decay_and_the_bank_question_value():
    assert lr_reference(0, 10, 100, 1e-3) == 0.0
    assert lr_reference(10, 10, 100, 1e-3) == 1e-3
    assert lr_reference(150, 10, 100, 1e-3, 1e-4) == 1e-4
    # train-cosine-lr-numeric: 2,000 warmup steps to 3e-4, cosine to 3e-5 over the next 100,000; step 77,000
    assert abs(lr_reference(77_000, 2000, 102_000, 3e-4, 3e-5) - 6.954e-5) < 1e-8


def test_llama_recipe_equals_f_rms_norm_in_full_precision():
    x, w = torch.randn(3, 5, 8, dtype=torch.float64), torch.randn(8, dtype=torch.float64)
    assert torch.allclose(llama(x, w, 1e-6), F.rms_norm(x, (8,), w, 1e-6), rtol=0, atol=1e-14)
    assert torch.allclose(llama(x.float(), w.float(), 1e-6), F.rms_norm(x.float(), (8,), w.float(), 1e-6), atol=1e-6)


def test_a_cross_entropy_file_with_its_own_softmax_helper_is_graded_as_cross_entropy():
    assert detect(["softmax", "cross_entropy"]).name == "cross_entropy"
    assert detect(["softmax"]).name == "softmax"


def test_adamw_reference_is_torch_adamw_bit_for_bit_fresh_and_resumed():
    from drill.grade.tasks.adamw.task import torch_steps

    gen = torch.Generator().manual_seed(3)
    for dtype in (torch.float64, torch.float32):
        param, m, v = (torch.randn(4, 5, generator=gen, dtype=torch.float64).to(dtype) for _ in range(3))
        v = v.abs()
        grads = [torch.randn(4, 5, generator=gen, dtype=torch.float64).to(dtype) for _ in range(3)]
        hyper = (0.05, (0.8, 0.95), 1e-6, 0.1)
        for start in (1, 10):
            p = torch.nn.Parameter(param.clone())
            opt = torch.optim.AdamW([p], lr=hyper[0], betas=hyper[1], eps=hyper[2], weight_decay=hyper[3], foreach=False)
            if start > 1:
                opt.state[p] = {"step": torch.tensor(float(start - 1)), "exp_avg": m.clone(), "exp_avg_sq": v.clone()}
            for g, (ours, exp_avg, exp_avg_sq) in zip(grads, torch_steps(param, grads, m if start > 1 else torch.zeros_like(m), v if start > 1 else torch.zeros_like(v), start, hyper)):
                p.grad = g.clone()
                opt.step()
                assert torch.equal(ours, p.detach()) and torch.equal(exp_avg, opt.state[p]["exp_avg"]), (dtype, start)
                assert torch.equal(exp_avg_sq, opt.state[p]["exp_avg_sq"]), (dtype, start)
