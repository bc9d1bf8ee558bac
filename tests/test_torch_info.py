"""drill doctor reads torch's build without importing torch, and asks a CUDA build for its device in a child."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from drill import torch_info
from drill.cli import app

runner = CliRunner()


def fake_torch(root, *, cuda: str | None, sleep: float = 0.0, device: str = "") -> None:
    """A package named torch with a real build's version.py layout; importing it sleeps, then reports a device."""
    pkg = root / "torch"
    (pkg / "cuda").mkdir(parents=True)
    (pkg / "version.py").write_text(
        "from typing import Optional\n\n__version__ = '9.9.0+fake'\ndebug = False\n"
        f"cuda: Optional[str] = {cuda!r}\ngit_version = 'abc'\n"
    )
    (pkg / "__init__.py").write_text(f"import time\ntime.sleep({sleep})\nfrom torch import cuda\n")
    (pkg / "cuda" / "__init__.py").write_text(
        f"def is_available():\n    return {bool(device)!r}\n\ndef get_device_name(i):\n    return {device!r}\n"
    )


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    return tmp_path


def test_the_installed_build_is_read_as_torch_itself_reports_it():
    torch = pytest.importorskip("torch")
    build = torch_info.installed()
    assert build == torch_info.TorchBuild(torch.__version__, torch.version.cuda)


def test_a_cpu_build_never_starts_torch(on_path):
    fake_torch(on_path, cuda=None, sleep=30)
    result = runner.invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "9.9.0+fake" in result.stdout and "no (torch build: CPU only)" in result.stdout
    assert "torch" not in sys.modules  # read from version.py, not imported


def test_a_cuda_build_names_its_device_from_a_child(on_path):
    fake_torch(on_path, cuda="12.4", device="NVIDIA H200")
    result = runner.invoke(app, ["doctor", "--lang", "zh"], env={"COLUMNS": "200"})
    assert "可用（NVIDIA H200）" in result.stdout
    assert "torch" not in sys.modules


def test_a_cuda_build_without_a_device_says_which_build(on_path):
    fake_torch(on_path, cuda="12.4")
    result = runner.invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert "no (torch build: 12.4)" in result.stdout


def test_a_torch_slow_to_start_is_reported_not_waited_for(on_path, monkeypatch):
    fake_torch(on_path, cuda="12.4", sleep=30, device="NVIDIA H200")
    monkeypatch.setattr(torch_info, "DEVICE_TIMEOUT_S", 0.5)
    result = runner.invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "unknown: torch took over 0.5 s to start in a child process" in result.stdout
    assert "NVIDIA" not in result.stdout
