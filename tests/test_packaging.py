"""The built wheel carries the grammars inside the package, every subpackage and the `mbt` console script."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds a wheel and installs it: minutes on a cold machine

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the sources (so the build leaves nothing behind in the checkout)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "mbt", src / "mbt", ignore=ignore)
    shutil.copytree(ROOT / "grammars", src / "grammars", ignore=ignore)
    out = tmp_path_factory.mktemp("wheel")
    # The test environment's own setuptools (the test extra pins the version the build needs): no throwaway build
    # environment to create, which was most of the test's time.
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation", "-q",
                             "-w", str(out)],
                            cwd=src, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = out.glob("mbt_coverage-*.whl")
    return built


def names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def test_the_grammars_ship_inside_the_package(wheel: Path):
    grammars = sorted(p.name for p in (ROOT / "grammars").glob("*.lark"))
    assert grammars, "no grammars in the checkout"
    shipped = sorted(n.removeprefix("mbt/grammars/") for n in names(wheel)
                     if n.startswith("mbt/grammars/") and n.endswith(".lark"))
    assert shipped == grammars
    assert "mbt/grammars/__init__.py" in names(wheel)


def test_every_subpackage_is_in_the_wheel(wheel: Path):
    """A new folder under mbt/ must also be listed in pyproject.toml's packages."""
    packages = {str(p.parent.relative_to(ROOT)) for p in (ROOT / "mbt").rglob("*.py") if "__pycache__" not in p.parts}
    shipped = {str(Path(n).parent) for n in names(wheel) if n.endswith(".py")}
    missing = sorted(p.replace("/", ".") for p in packages - shipped)
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"


def test_the_console_script_is_declared(wheel: Path):
    with zipfile.ZipFile(wheel) as zf:
        entry_points = next(zf.read(n).decode() for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt"))
    assert "mbt = mbt.cli:main" in entry_points


def test_the_installed_package_finds_its_grammars_away_from_the_checkout(wheel: Path, tmp_path: Path):
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    model = tmp_path / "door.fsm"
    model.write_text("fsm door {\n  state closed initial\n}\n", encoding="utf-8")
    probe = ("from mbt.parsing.grammar import grammar_dir; from mbt.parsing.loader import load_file; "
             "import sys; print(grammar_dir()); print(load_file(sys.argv[1]).models[0].name)")
    result = subprocess.run([sys.executable, "-c", probe, str(model)], cwd=tmp_path, capture_output=True, text=True,
                            env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    folder, name = result.stdout.split()
    assert Path(folder) == site / "mbt" / "grammars"
    assert name == "door"


def test_the_html_report_templates_and_assets_ship(wheel: Path):
    shipped = names(wheel)
    for package in ("html", "site"):  # the coverage report, the result viewer
        for folder, pattern in (("templates", "*.html"), ("static", "*.*")):
            found = list((ROOT / "mbt" / "report" / package / folder).glob(pattern))
            assert found
            for p in found:
                assert f"mbt/report/{package}/{folder}/{p.name}" in shipped, p.name


def test_the_release_metadata(wheel: Path):
    """A free distribution name (mbt on PyPI is another project), the licence, the typed API and the long
    description."""
    from email.parser import Parser

    with zipfile.ZipFile(wheel) as zf:
        meta = Parser().parsestr(next(zf.read(n).decode() for n in zf.namelist() if n.endswith(".dist-info/METADATA")))
        shipped = set(zf.namelist())
    assert meta["Name"] == "mbt-coverage"
    assert meta["License-Expression"] == "Apache-2.0"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in shipped)
    assert "mbt/py.typed" in shipped
    assert meta["Author"] and meta["Keywords"] and meta.get_all("Project-URL")
    assert "Typing :: Typed" in meta.get_all("Classifier")
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().startswith("# mbt")  # README.md is the long description
