"""Packaging: the wheel `pip install .` builds holds every module of irc (the tests aside) and works without
the source tree. The wheel is built from a copy of the checkout (the shared tree gets no build/ folder and
a stale one cannot leak in) and installed into a fresh virtual environment. That environment sees the
packages already installed here through a .pth line (nothing is downloaded); a .pth line only adds a path,
so the editable install's import hook there stays off and `irc` is the wheel's. From a folder outside the
checkout it imports every installed module, compiles a function with backend="irc", and runs plain
`pytest` on a few of the tests (about a minute in all)."""

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # the repository root is the `irc` package
NOT_SOURCE = shutil.ignore_patterns(".*", "__pycache__", "build", "dist", "*.egg-info", "irc-dump", "results")
PYTEST_SELECTION = [
    "pyproject.toml",
    "tests/__init__.py",
    "tests/conftest.py",
    "tests/numeric/__init__.py",
    "tests/numeric/test_smoke.py",
]

INSTALLED_CHECK = """
import importlib, sys
from pathlib import Path
import torch
import irc

package = Path(irc.__file__).parent
assert package == Path(sys.argv[1]) / "irc", f"irc imported from {package}, not the wheel's install"
names = sorted(".".join(("irc", *p.relative_to(package).with_suffix("").parts)).removesuffix(".__init__")
               for p in package.rglob("*.py"))
for name in names:
    importlib.import_module(name)
fn = lambda x, y: torch.relu(x @ y + 1).sum(-1)
x, y = torch.randn(8, 16), torch.randn(16, 4)
torch.testing.assert_close(torch.compile(fn, backend="irc", options={"strict": True})(x, y), fn(x, y))
print(f"imported {len(names)} modules; compiled")
"""

INSTALLED_TESTS = """
import irc
import pytest


def test_irc_is_the_installed_wheel():
    assert irc.__file__.startswith({venv!r}), irc.__file__


@pytest.mark.slow
def test_the_default_selection_leaves_out_slow_tests():
    raise AssertionError("pyproject.toml's addopts (-m 'not slow') should have deselected this test")
"""


def run(*argv, cwd: Path, env: dict | None = None) -> str:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(map(str, argv))} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(the wheel, the copy of the checkout it was built from, its modules, the fresh venv's python, its
    site-packages)."""
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "checkout"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    modules = {p.relative_to(source).as_posix() for p in source.rglob("*.py")}  # before the build adds build/
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "--wheel-dir",
        tmp / "wheels",
        source,
        cwd=tmp,
    )
    (wheel,) = (tmp / "wheels").glob("irc_compiler-*.whl")
    run(sys.executable, "-m", "venv", "--without-pip", tmp / "venv", cwd=tmp)
    python = tmp / "venv" / "bin" / "python"
    # Installed before the .pth line exists: pip then sees no irc-compiler to replace (the editable one here).
    run(
        sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index", wheel, cwd=tmp
    )
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp).strip())
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "installed-dependencies.pth").write_text("".join(f"{p}\n" for p in sorted(here)))
    return wheel, source, modules, python, site


def env_outside_the_checkout(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "IRC_CACHE_DIR": str(tmp / "irc-cache")}


def test_the_wheel_holds_every_module_and_only_those(built):
    wheel, _, modules, _, _ = built
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n.removeprefix("irc/") for n in names if n.startswith("irc/")}
    expected = {m for m in modules if not m.startswith("tests/") and m != "setup.py"}
    assert shipped == expected, f"missing: {sorted(expected - shipped)}; extra: {sorted(shipped - expected)}"
    assert any(n.startswith("irc/targets/triton/") for n in names)
    assert all(n.startswith(("irc/", "irc_compiler-")) for n in names), names


def test_the_installed_wheel_imports_every_module_and_compiles(built, tmp_path):
    _, _, _, python, site = built
    out = run(python, "-c", INSTALLED_CHECK, site, cwd=tmp_path, env=env_outside_the_checkout(tmp_path))
    assert out.strip().endswith("; compiled"), out
    assert "usage: irc-opt" in run(
        python.parent / "irc-opt", "--help", cwd=tmp_path, env=env_outside_the_checkout(tmp_path)
    )


def test_plain_pytest_runs_a_selection_against_the_installed_wheel(built, tmp_path):
    _, source, _, python, _ = built
    for name in PYTEST_SELECTION:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, tmp_path / name)
    (tmp_path / "tests" / "test_installed.py").write_text(INSTALLED_TESTS.format(venv=str(python.parents[1])))
    out = run(python, "-m", "pytest", cwd=tmp_path, env=env_outside_the_checkout(tmp_path))
    assert " passed, 1 deselected" in out, out
