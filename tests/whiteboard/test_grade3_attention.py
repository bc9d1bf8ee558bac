"""Issue 26 in the attention tasks: each mistake named in the forms candidates write it, and no code for a mistake
the file does not make (a NaN from a query with no allowed key is not unstable-softmax; a latent cache kept in
another form is not mla-caches-kv). The fixtures are candidate-style files in impls/broken/, none a mutant's copy."""

from __future__ import annotations

import pytest
import torch

from drill.grade.battery import run_battery
from drill.grade.checks.common import large_logits_verdict

from whiteboard_impls import IMPLS, TASKS_DIR, expected_code

FORMS = [
    "softmax-wrong-dim__sdpa_dim1.py",  # F.softmax(dim=1): right for [T, T], over the heads of [B, H, T, T]
    "softmax-wrong-dim__mha_einsum_dim1.py",
    "softmax-wrong-dim__causal_dim1.py",  # and a -1e9 fill, which -inf would turn into NaN over the heads
    "softmax-wrong-dim__window_dim1.py",
    "alibi-slopes-off-by-one__paper_from0.py",  # the paper's rule for other H, its power-of-two base from h = 0
    "alibi-slopes-off-by-one__exp_h_plus_2.py",
    "alibi-slopes-non-power-of-two__odd_interleave.py",  # the right base, the rest from [1::2]
    "causal-mask-missing__flash_two_pass.py",  # L from masked scores, exp(S - L) recomputed without the mask
    "causal-mask-missing__flash_two_pass_all_blocks.py",
    "rope-frequency-exponent__meta_float32.py",  # base^(+2i/D), angles in float32 through 1 / base^(-2i/D)
    "cross-qkv-source-swapped__v_from_x.py",  # q and v from x, k from the context
    "kv-cache-not-appended__mla_latent_overwrite.py",  # the cache is the latent, of the newest chunk only
    "mask-inverted__causal_future_buffer.py",  # the last query sees no key: NaN, but no overflow
]


def codes(path) -> list[str]:
    report = run_battery(path)
    assert not report.passed
    return [d.code for d in report.diagnosis]


@pytest.mark.parametrize("name", FORMS, ids=lambda n: n.removesuffix(".py"))
def test_each_form_is_named_alone(name):
    path = IMPLS / "broken" / name
    assert codes(path) == [expected_code(path)]


def test_a_nan_already_there_at_ordinary_logits_is_not_unstable_softmax():
    truth = torch.zeros(2, 3)
    big = torch.tensor([[0.0, 0.0, 0.0], [float("nan")] * 3])
    found = large_logits_verdict(big, truth, lambda: big.clone())
    assert found.status == "fail" and found.codes == [] and "not an overflow" in found.message
    overflow = large_logits_verdict(big, truth, lambda: torch.zeros(2, 3))
    assert overflow.codes == ["unstable-softmax"]
    both = torch.tensor([[float("nan"), 0.0, 0.0], [float("nan")] * 3])  # row 1 masked out, and row 0 overflowing
    found = large_logits_verdict(both, truth, lambda: big.clone())
    assert found.codes == ["unstable-softmax"] and "[0, 0]" in found.message


SOLUTION = (TASKS_DIR / "mla" / "solution.py").read_text()
RETURNED = "return self.W_o(out.transpose(1, 2).reshape(B, n, d)), c_kv"
LATENT_FORMS = {  # the latent itself, kept in a form the contract does not ask for
    "list": ("chunks = [] if cache is None else list(cache)\n        c_kv = torch.cat([*chunks, self.W_dkv(x)], dim=1)",
             RETURNED.replace("c_kv", "[*chunks, c_kv[:, -n:]]")),
    "dict": ("c_kv = self.W_dkv(x) if cache is None else torch.cat([cache['latent'], self.W_dkv(x)], 1)",
             RETURNED.replace(", c_kv", ", {'latent': c_kv}")),
    "transposed": ("c_kv = self.W_dkv(x) if cache is None else torch.cat([cache.mT, self.W_dkv(x)], 1)",
                   RETURNED.replace(", c_kv", ", c_kv.mT.contiguous()")),
}
BUILT = """c_kv = self.W_dkv(x)  # [B, n, d_latent]: all a decode step has to keep
        if cache is not None:
            c_kv = torch.cat([cache, c_kv], dim=1)"""


@pytest.mark.parametrize("form", LATENT_FORMS)
def test_a_latent_cache_in_another_form_is_not_caching_k_and_v(form, tmp_path):
    built, returned = LATENT_FORMS[form]
    source = SOLUTION.replace(BUILT, built).replace(RETURNED, returned)
    assert source.count(built) == 1 and source.count(returned) == 1
    path = tmp_path / f"mla_{form}.py"
    path.write_text(source)
    report = run_battery(path, task="mla")
    check = next(c for c in report.checks if c.id == "rules.cache-is-latent")
    assert check.status == "fail" and "the latent c_kv's values" in check.message
    assert [d.code for d in report.diagnosis] == []
    assert all(c.status == "pass" for c in report.checks if c.id.startswith("numerical.decode"))
