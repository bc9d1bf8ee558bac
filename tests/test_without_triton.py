"""Without Triton, a kernel task says in one line how to get it (exit 2, nothing written), `drill doctor`
says the kernels track is not installed, and the other tasks grade as before.

The environment is a real venv that sees every package of this one except triton (symlinks), as
on a machine where `pip install 'llm-drill[grade]'` ran without the kernels extra."""

from __future__ import annotations

import sys
import sysconfig
import venv
from pathlib import Path

import pexpect
import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
KERNEL = "import torch\nimport triton\n\n\ndef softmax(x):\n    return x\n"


@pytest.fixture(scope="module")
def python_without_triton(tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    base = tmp_path_factory.mktemp("no_triton")
    visible = base / "site"
    visible.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith("triton") and entry.suffix != ".pth":
            (visible / entry.name).symlink_to(entry)
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    purelib = sysconfig.get_paths(vars={"base": str(env_dir), "platbase": str(env_dir)})["purelib"]
    Path(purelib, "deps.pth").write_text(f"{visible}\n{ROOT}\n", encoding="utf-8")
    return env_dir / "bin" / "python"


def run(python: Path, args: list[str], cwd: Path, home: Path) -> tuple[str, int]:
    env = {"DRILL_HOME": str(home), "LANG": "en_US.UTF-8", "TERM": "xterm", "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    child = pexpect.spawn(str(python), ["-m", "drill", *args], env=env, encoding="utf-8", timeout=60, cwd=str(cwd), dimensions=(50, 200))
    child.expect(pexpect.EOF)
    child.close()
    return child.before, child.exitstatus


def test_the_environment_lacks_triton_but_has_torch(python_without_triton, tmp_path, drill_home):
    probe = pexpect.spawn(str(python_without_triton), ["-c", "import torch; import triton"], encoding="utf-8", timeout=60)
    probe.expect("No module named 'triton'")


@pytest.mark.parametrize("args", [["whiteboard", "triton_softmax"], ["grade", "k.py"], ["grade", "k.py", "--task", "triton_softmax"],
                                  ["selftest", "--task", "triton_softmax"]], ids=" ".join)  # fmt: skip
def test_a_kernel_task_says_how_to_get_triton(args, python_without_triton, tmp_path, drill_home):
    (tmp_path / "k.py").write_text(KERNEL, encoding="utf-8")
    output, status = run(python_without_triton, args, tmp_path, drill_home)
    assert status == 2, output
    assert "triton_softmax is a Triton kernel task and Triton is not installed here: pip install 'llm-drill[kernels]'" in output
    assert output.count("pip install") == 1 and "Traceback" not in output and "No module named" not in output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.py"]  # no template written


def test_doctor_says_triton_is_missing(python_without_triton, tmp_path, drill_home):
    output, status = run(python_without_triton, ["doctor"], tmp_path, drill_home)
    assert status == 0
    assert "triton     not installed (needed only by the kernels track: pip install 'llm-drill[kernels]')" in output
    output, _ = run(python_without_triton, ["doctor", "--lang", "zh"], tmp_path, drill_home)
    assert "未安装（只有 kernel 题需要" in output


def test_the_matmul_task_says_how_to_get_triton(python_without_triton, tmp_path, drill_home):
    output, status = run(python_without_triton, ["whiteboard", "triton_matmul"], tmp_path, drill_home)
    assert status == 2, output
    assert "triton_matmul is a Triton kernel task and Triton is not installed here: pip install 'llm-drill[kernels]'" in output
    assert not list(tmp_path.iterdir())  # no template written
