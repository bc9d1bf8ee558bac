"""The bundled bank ships inside the wheel: build it, install it in a fresh venv, list the bank."""

from __future__ import annotations

import json
import site
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Run inside the fresh venv: every dependency the wheel declares must be installed there, at a version it accepts.
CHECK_REQUIREMENTS = """
import importlib.metadata as md, json
from packaging.requirements import Requirement
missing = []
for line in md.requires("llm-drill") or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue  # an extra (test, grade), not needed to run drill
    try:
        found = md.version(req.name)
    except md.PackageNotFoundError:
        missing.append(f"{req}: not installed")
        continue
    if not req.specifier.contains(found, prereleases=True):
        missing.append(f"{req}: {found} installed")
print(json.dumps(missing))
"""


def _this_interpreters_site_packages() -> list[str]:
    """Where the running interpreter (the project's venv) keeps the dependencies it was installed with."""
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    return sorted(p for p in paths if Path(p).is_dir())


@pytest.mark.slow
def test_wheel_installed_in_a_fresh_venv_finds_the_bundled_bank(tmp_path, drill_home):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT)],
        check=True, timeout=300,
    )
    wheel = next(dist.glob("llm_drill-*.whl"))
    env_dir = tmp_path / "venv"
    # A venv of its own (not system_site_packages, which means the base interpreter's, where typer may well be
    # missing); the dependencies this test process runs with are made visible on purpose by a .pth file. Only
    # paths are added: the .pth files inside them (this checkout's editable install) are not run.
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    env_site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    (Path(env_site) / "drill_test_dependencies.pth").write_text("\n".join(_this_interpreters_site_packages()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)], check=True, timeout=300)

    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    run_env = {"DRILL_HOME": str(drill_home), "PATH": f"{env_dir / 'bin'}:/usr/bin:/bin", "LANG": "C.UTF-8"}
    unmet = subprocess.run([str(python), "-c", CHECK_REQUIREMENTS], cwd=elsewhere, env=run_env, capture_output=True, text=True, check=True)
    assert json.loads(unmet.stdout) == [], "the venv lacks dependencies the wheel declares"
    where = subprocess.run([str(python), "-c", "import drill, drill.paths; print(drill.__file__); print(drill.paths.bundled_bank_dir())"],
                           cwd=elsewhere, env=run_env, capture_output=True, text=True, check=True)
    module_file, bank_dir = where.stdout.split()
    assert module_file.startswith(str(env_dir)), "drill was not imported from the venv"
    assert bank_dir.startswith(str(env_dir)), "the bank was not found inside the installed wheel"

    listed = subprocess.run([str(env_dir / "bin" / "drill"), "bank", "list", "--json"], cwd=elsewhere, env=run_env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    from drill.bank.load import load_bundled

    assert {row["id"] for row in json.loads(listed.stdout)} == set(load_bundled().questions)
    shown = subprocess.run([str(env_dir / "bin" / "drill"), "bank", "show", "attn-why-sqrt-dk", "--lang", "en"], cwd=elsewhere, env=run_env,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert shown.returncode == 0 and "√d_k" in shown.stdout and "$" not in shown.stdout, shown.stderr  # pylatexenc came along
