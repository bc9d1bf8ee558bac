"""Without torch, `drill grade` and `drill whiteboard` say how to get it, exit 2 and write nothing.

The environment is a real venv that sees every package of this one except torch (symlinks),
so the check runs exactly as it would on a machine where only `pip install llm-drill` ran.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import venv
from pathlib import Path

import pexpect
import pytest

ROOT = Path(__file__).resolve().parent.parent
TORCH_PARTS = ("torch", "functorch", "torchgen", "nvidia", "triton")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


@pytest.fixture(scope="module")
def python_without_torch(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("no_torch")
    visible = base / "site"
    visible.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith(TORCH_PARTS) and entry.suffix != ".pth":
            (visible / entry.name).symlink_to(entry)
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    purelib = sysconfig.get_paths(vars={"base": str(env_dir), "platbase": str(env_dir)})["purelib"]
    Path(purelib, "deps.pth").write_text(f"{visible}\n{ROOT}\n", encoding="utf-8")
    return env_dir / "bin" / "python"


def spawn(python: Path, args: list[str], cwd: Path, home: Path) -> pexpect.spawn:
    env = {"DRILL_HOME": str(home), "LANG": "en_US.UTF-8", "TERM": "xterm", "PATH": "/usr/bin:/bin"}
    return pexpect.spawn(str(python), ["-m", "drill", *args], env=env, encoding="utf-8", timeout=30, cwd=str(cwd))


def test_the_environment_really_lacks_torch(python_without_torch, tmp_path, drill_home):
    child = spawn(python_without_torch, ["--version"], tmp_path, drill_home)
    child.expect(r"drill \d")
    child.expect(pexpect.EOF)
    probe = pexpect.spawn(str(python_without_torch), ["-c", "import torch"], encoding="utf-8", timeout=30)
    probe.expect("No module named 'torch'")


@pytest.mark.parametrize("args", [["whiteboard", "sdpa"], ["grade", "my_attn.py"]], ids=["whiteboard", "grade"])
def test_grading_without_torch_says_how_to_install_it(args, python_without_torch, tmp_path, drill_home):
    (tmp_path / "my_attn.py").write_text("def scaled_dot_product_attention(q, k, v, mask=None):\n    return q\n", encoding="utf-8")
    child = spawn(python_without_torch, args, tmp_path, drill_home)
    child.expect(r"grading needs torch.*pip install 'llm-drill\[grade\]'")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my_attn.py"]  # no template written
    assert "Traceback" not in (child.before or "")
