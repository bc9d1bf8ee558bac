"""The references of group B's tasks (auc, clip_loss, kd_loss) against independent code: scikit-learn's
roc_auc_score, torch's own F.kl_div, and a closed form of the CLIP loss. Judge-side only: no user process."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
metrics = pytest.importorskip("sklearn.metrics")

from drill.grade.tasks.auc.task import AUCVariant, reference_auc, reference_gauc  # noqa: E402
from drill.grade.tasks.clip_loss.task import reference as clip_reference  # noqa: E402
from drill.grade.tasks.kd_loss.task import reference as kd_reference  # noqa: E402


@pytest.mark.parametrize("levels", [0, 3, 10])
@pytest.mark.parametrize("seed", range(4))
def test_auc_reference_equals_sklearn_with_and_without_ties(seed, levels):
    gen = torch.Generator().manual_seed(seed)
    n = 50 + 37 * seed
    labels = torch.rand(n, generator=gen) < 0.3
    labels[:2] = torch.tensor([True, False])
    scores = torch.randn(n, generator=gen, dtype=torch.float64) + 0.5 * labels
    if levels:
        scores = torch.round(scores * levels) / levels
    assert reference_auc(scores, labels) == pytest.approx(metrics.roc_auc_score(labels.numpy(), scores.numpy()), abs=1e-12)


def test_auc_tie_variants_bracket_the_half_count():
    scores = torch.tensor([0.0, 0.0, 1.0, 1.0])
    labels = torch.tensor([1, 0, 1, 0])
    assert reference_auc(scores, labels) == 0.5  # sklearn: one win, two ties, one loss over 4 pairs
    assert reference_auc(scores, labels, AUCVariant(ties="win")) == 0.75
    assert reference_auc(scores, labels, AUCVariant(ties="loss")) == 0.25


def test_gauc_reference_is_the_size_weighted_sklearn_mean_over_two_class_groups():
    gen = torch.Generator().manual_seed(5)
    groups = torch.randint(0, 9, (120,), generator=gen) * 7 - 20
    labels = torch.rand(120, generator=gen) < 0.4
    labels[groups == groups[0]] = True  # one group with positives only: skipped
    scores = torch.round(torch.randn(120, generator=gen, dtype=torch.float64) * 3) / 3
    total = weight = 0.0
    for g in torch.unique(groups):
        at = groups == g
        if labels[at].all() or not labels[at].any():
            continue
        total += int(at.sum()) * metrics.roc_auc_score(labels[at].numpy(), scores[at].numpy())
        weight += int(at.sum())
    assert reference_gauc(scores, labels, groups) == pytest.approx(total / weight, abs=1e-12)


@pytest.mark.parametrize("reverse", [False, True])
def test_kd_reference_equals_torch_kl_div_times_t_squared(reverse):
    gen = torch.Generator().manual_seed(1)
    student, teacher = (torch.randn(13, 9, generator=gen, dtype=torch.float64) * 2 for _ in range(2))
    temperature = 2.5
    log_s, log_t = (torch.log_softmax(x / temperature, dim=-1) for x in (student, teacher))
    first, second = (log_t, log_s) if reverse else (log_s, log_t)  # F.kl_div(input, target) = KL(target || input)
    torch_kl = torch.nn.functional.kl_div(first, second, log_target=True, reduction="batchmean") * temperature**2
    assert kd_reference(student, teacher, temperature, reverse).item() == pytest.approx(torch_kl.item(), rel=1e-12)


def test_kd_reference_mask_counts_only_true_tokens():
    gen = torch.Generator().manual_seed(2)
    student, teacher = (torch.randn(2, 4, 6, generator=gen, dtype=torch.float64) for _ in range(2))
    mask = torch.tensor([[True, True, True, True], [True, False, False, False]])
    kept = kd_reference(student[mask], teacher[mask], 1.5)  # the 5 counted tokens alone, as [N, V]
    assert kd_reference(student, teacher, 1.5, mask=mask).item() == pytest.approx(kept.item(), rel=1e-12)


@pytest.mark.parametrize("n, scale", [(4, 1.0), (7, 14.3), (3, 100.0)])
def test_clip_reference_matches_the_closed_form_for_orthonormal_pairs(n, scale):
    """Image i = text i = e_i (scaled arbitrarily): every row is one logit `scale` and n - 1 zeros."""
    eye = torch.eye(n, dtype=torch.float64)
    norms = torch.arange(1, n + 1, dtype=torch.float64)[:, None]
    expected = math.log1p((n - 1) * math.exp(-scale))
    assert clip_reference(eye * norms, eye * 3.0, scale).item() == pytest.approx(expected, rel=1e-12)
