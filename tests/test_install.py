"""The package installs without make: the source distribution into a fresh virtual
environment (pip runs maturin, which compiles the extension), then `dsim validate` on a
scenario the package ships and `python -m dsim`. Needs the network (pip fetches maturin and
the dependencies): `-m 'not network'` leaves it out offline; `make test` runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _clean_env() -> dict[str, str]:
    """The environment without this virtual environment in it; cargo's build folder kept
    between runs (the crates.io dependencies compile once) and the release profile without
    link-time optimization (the test checks the package, not its speed)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "CONDA_PREFIX")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT / ".venv")))
    env["CARGO_TARGET_DIR"] = str(ROOT / "target" / "sdist-test")
    env["CARGO_PROFILE_RELEASE_LTO"] = "false"
    env["CARGO_PROFILE_RELEASE_CODEGEN_UNITS"] = "16"
    return env


@pytest.mark.network
@pytest.mark.timeout(1800)
def test_the_sdist_installs_into_a_fresh_venv(tmp_path: Path) -> None:
    maturin = shutil.which("maturin", path=str(Path(sys.executable).parent)) or shutil.which("maturin")
    assert maturin, "maturin is installed with the development environment (make)"
    subprocess.run([maturin, "sdist", "--out", str(tmp_path / "dist")], cwd=ROOT, check=True, capture_output=True)
    [sdist] = (tmp_path / "dist").glob("dsim-*.tar.gz")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    env = _clean_env()
    # The sdist's files carry the archive's fixed mtimes, older than the last build's outputs in
    # the kept build folder, so cargo would take dsim's own crates as fresh and link a stale
    # derive macro: drop their outputs (the dependencies stay compiled).
    clean = ["cargo", "clean", "--release", "-p", "dsim-derive", "-p", "dsim-core", "-p", "dsim-py"]
    subprocess.run(clean, cwd=ROOT, env=env, check=True, capture_output=True)
    install = subprocess.run([str(bin_dir / "pip"), "install", "--quiet", str(sdist)], env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    # A scenario the package ships, found inside the installed package.
    shipped = subprocess.run(
        [str(bin_dir / "python"), "-c", "import dsim, pathlib; print(pathlib.Path(dsim.__file__).parent / 'scenarios' / 'ef' / 'policer.toml')"],
        env=env, capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.strip()
    assert str(env_dir) in shipped
    p = subprocess.run([str(bin_dir / "dsim"), "validate", shipped], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.startswith(f"ok: {shipped} ("), p.stdout + p.stderr
    version = subprocess.run([str(bin_dir / "python"), "-m", "dsim", "--version"], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip() == f"dsim {sdist.name.removeprefix('dsim-').removesuffix('.tar.gz')}"
