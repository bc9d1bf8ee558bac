"""The bundled bank ships inside the wheel: build it, install it in a fresh venv, list the bank."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_installed_in_a_fresh_venv_finds_the_bundled_bank(tmp_path, drill_home):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT)],
        check=True, timeout=300,
    )
    wheel = next(dist.glob("llm_drill-*.whl"))
    env_dir = tmp_path / "venv"
    # Dependencies come from this interpreter's site-packages; the wheel itself goes into the venv.
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)], check=True, timeout=300)

    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    run_env = {"DRILL_HOME": str(drill_home), "PATH": f"{env_dir / 'bin'}:/usr/bin:/bin", "LANG": "C.UTF-8"}
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
