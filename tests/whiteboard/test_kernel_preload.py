"""A kernel task graded on CPU gets Triton from its zygote, imported while the judge starts, not by each user
side after its fork; a GPU grade or another task's never does (drill.grade.kernel_env.preload_for)."""

from __future__ import annotations

import pytest

from drill import torch_info
from drill.grade.kernel_env import preload_for
from drill.grade.run import grade_file

pytest.importorskip("triton")


def test_the_user_side_finds_triton_already_imported(tmp_path):
    """The file refuses to run unless triton was in sys.modules before its own import line."""
    from whiteboard_impls import TASKS_DIR

    source = (TASKS_DIR / "triton_softmax" / "solution.py").read_text()
    path = tmp_path / "preloaded.py"
    path.write_text("import sys\n\nPRELOADED = 'triton' in sys.modules\n" + source.replace(
        '    m, n = x.shape\n', '    if not PRELOADED:\n        raise RuntimeError("triton was not preloaded")\n    m, n = x.shape\n'))
    report = grade_file(path, task="triton_softmax", device="cpu", seed=1)
    assert report.passed, [c.message for c in report.checks if c.status != "pass"]


@pytest.mark.parametrize(
    ("request_", "cuda", "expected"),
    [
        ({"task": "triton_softmax", "device": "cpu"}, "12.4", ("triton",)),
        ({"task": "triton_matmul", "device": "auto"}, None, ("triton",)),
        ({"task": "triton_matmul", "device": "auto"}, "12.4", ()),  # a CUDA build grades on the GPU: compiled
        ({"task": "triton_softmax", "device": "cuda"}, None, ()),
        ({"task": "sdpa", "device": "cpu"}, None, ()),
    ],
)
def test_preload_only_for_an_interpreted_kernel_grade(monkeypatch, tmp_path, request_, cuda, expected):
    monkeypatch.setattr(torch_info, "installed", lambda: torch_info.TorchBuild("2.13.0", cuda))
    path = tmp_path / "f.py"
    path.write_text("x = 1\n")
    assert preload_for({**request_, "path": str(path)}) == expected


def test_a_file_of_no_named_task_is_preloaded_when_it_mentions_triton(monkeypatch, tmp_path):
    monkeypatch.setattr(torch_info, "installed", lambda: torch_info.TorchBuild("2.13.0", None))
    kernel, plain = tmp_path / "k.py", tmp_path / "p.py"
    kernel.write_text("import triton\n")
    plain.write_text("import torch\n")
    assert preload_for({"task": None, "device": "auto", "path": str(kernel)}) == ("triton",)
    assert preload_for({"task": None, "device": "auto", "path": str(plain)}) == ()
