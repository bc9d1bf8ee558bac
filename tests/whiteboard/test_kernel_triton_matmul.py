"""triton_matmul under Triton's interpreter: broken GEMMs written unlike the mutants get their own code, an
out-of-bounds store is named (never a crash), swapped program ids are told apart from a grid that is
legitimately N-major, and the wire's strided views carry a transposed b. The correct styles
(impls/correct/triton_matmul_*.py) and the mutants are graded in test_grade_battery.py (its slow part)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton", reason="Triton is not installed: pip install 'llm-drill[kernels]'")

from drill.grade.battery import run_battery  # noqa: E402
from drill.grade.user import wire  # noqa: E402

from whiteboard_impls import correct_files  # noqa: E402

CORRECT = {p.stem.removeprefix("triton_matmul_"): p for p in correct_files("triton_matmul")}


def variant(tmp_path: Path, style: str, *edits: tuple[str, str]) -> Path:
    text = CORRECT[style].read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / f"{style}.py"
    path.write_text(text)
    return path


def grade(path: Path):
    report = run_battery(path, task="triton_matmul", device="cpu")
    return report, [d.code for d in report.diagnosis], {c.id: c for c in report.checks}


BROKEN = {
    "kernel-contiguous-strides": ("n_major", ("*a.stride(), *b.stride(), *c.stride()", "K, 1, N, 1, N, 1")),
    "kernel-fp16-accumulation": ("n_major", ("acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
                                             "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=c_ptr.dtype.element_ty)"),
                                ("other=0.0).to(tl.float32)", "other=0.0)"), ("acc += tl.dot(a, b)", "acc += tl.dot(a, b).to(acc.dtype)")),
    "kernel-pid-wrong-axis": ("n_major", ("grid = (triton.cdiv(N, BLOCK_N), triton.cdiv(M, BLOCK_M))",
                                          "grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))")),
    "kernel-block-must-divide": ("grouped", ("(triton.cdiv(M, meta[\"BLOCK_M\"]) * triton.cdiv(N, meta[\"BLOCK_N\"]),)",
                                             "((M // meta[\"BLOCK_M\"]) * (N // meta[\"BLOCK_N\"]),)")),
    "kernel-uses-torch-op": ("grouped", ("    c = torch.empty((M, N), device=a.device, dtype=a.dtype)\n",
                                         "    return torch.nn.functional.linear(a, b.t())\n")),
}  # fmt: skip


@pytest.mark.slow  # about a minute under the interpreter: CI's second run
@pytest.mark.parametrize("code", list(BROKEN))
def test_a_broken_gemm_in_another_style_gets_its_code(tmp_path, code):
    style, *edits = BROKEN[code]
    report, codes, _ = grade(variant(tmp_path, style, *edits))
    assert not report.passed
    assert codes == [code]


@pytest.mark.slow  # a whole grade; the regular run names an unmasked tile in test_grade_battery.py (softmax's mutant)
def test_an_unmasked_k_tail_is_named_not_crashed(tmp_path):
    path = variant(tmp_path, "grouped", ("mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)", "mask=offs_m[:, None] < M, other=0.0)"))
    report, codes, checks = grade(path)
    assert codes == ["kernel-mask-missing"]
    assert "would load from" in checks["mask-leak.out-of-bounds"].message and "past the end of a_ptr" in checks["mask-leak.out-of-bounds"].message


@pytest.mark.slow  # a whole grade: the regular run grades the solution (test_exercises.py), the suite's budget no more
def test_swapped_ids_are_told_from_an_n_major_grid(tmp_path):
    """The same kernel reads pid_n from axis 0: right with an N-major grid, swapped with an M-major one."""
    report, codes, checks = grade(variant(tmp_path, "n_major", ("grid = (triton.cdiv(N, BLOCK_N), triton.cdiv(M, BLOCK_M))",
                                                                "grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))")))  # fmt: skip
    assert codes == ["kernel-pid-wrong-axis"]
    assert "only on [:16, :17]" in checks["numerical.tile-grid"].message  # BLOCK_M 16, BLOCK_N 64: one tile of the [129, 17] output


def test_a_transposed_b_crosses_the_wire_as_a_strided_view():
    b = torch.randn(7, 5, dtype=torch.float64)
    header, buffers = wire.encode((wire.Strided(b, (1, 7)), wire.Strided(b, (12, 2))))
    tensors = wire.tensors_of(header, b"".join(buffers))
    transposed, spaced = wire.build(header["value"], tensors, recipes=True)
    assert transposed.stride() == (1, 7) and torch.equal(transposed, b)
    assert spaced.stride() == (12, 2) and torch.equal(spaced, b)
    flat = torch.tensor([], dtype=torch.float64).set_(spaced.untyped_storage())
    assert flat.numel() == 81 and torch.isnan(flat[1:9:2]).all()  # the gaps between a row's elements are NaN
    with pytest.raises(wire.WireError, match=r"\$view"):
        wire.build(header["value"], tensors)  # a recipe in a reply is forged


@pytest.mark.parametrize("strides", [(1, 1), (2, 1), (0, 7), (1,), (1 << 17, 1)])
def test_a_view_whose_elements_would_share_an_address_is_refused(strides):
    header, buffers = wire.encode(wire.Strided(torch.randn(7, 5), strides))
    with pytest.raises(wire.WireError, match=r"\$view"):
        wire.build(header["value"], wire.tensors_of(header, b"".join(buffers)), recipes=True)
