"""Every file the code and docs point a reader to is in the repository (issue 12)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATH = re.compile(
    r"(?<![\w/.-])((?:docs|formulations|instances|scripts|heuristics|tests|gpuaas)/[\w./*-]+\.(?:md|jsonl|json|yaml|py|csv|command))"
)
SOURCES = [
    "gpuaas/**/*.py",
    "*.md",
    "docs/*.md",
    "formulations/*.md",
    "heuristics/*.md",
    "instances/*.md",
    "instances/*.json",
    "scripts/**/*.md",
    "scripts/**/*.yaml",
    "scripts/*.py",
]


def referenced() -> dict[str, set[str]]:
    """Repository paths named in the sources (the CHANGELOG and scripts/results/archive are
    history: they name retired files)."""
    out: dict[str, set[str]] = {}
    for pattern in SOURCES:
        for f in ROOT.glob(pattern):
            if f.name == "CHANGELOG.md" or "archive" in f.relative_to(ROOT).parts:
                continue  # history: the CHANGELOG and the frozen results name retired files
            for m in PATH.finditer(f.read_text(encoding="utf-8")):
                out.setdefault(m.group(1).rstrip("."), set()).add(str(f.relative_to(ROOT)))
    return out


def test_referenced_files_exist():
    refs = referenced()
    assert len(refs) > 30  # the scan finds the references
    missing = {p: sorted(w) for p, w in refs.items() if "*" not in p and not (ROOT / p).exists()}
    assert not missing, missing


def test_no_reference_to_the_old_design_notes():
    hits = [
        str(f.relative_to(ROOT))
        for pattern in SOURCES + ["CHANGELOG.md", "tests/*.py"]
        for f in ROOT.glob(pattern)
        if f.name != "test_references.py" and "DESIGN.md" in f.read_text(encoding="utf-8")
    ]
    assert not hits


def test_readme_layout_names_every_module():
    """The README's layout table names every module and package of gpuaas/ and every top-level
    folder; docs/design.md names every gpuaas/ subpackage."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `gpuaas/` |"))
    names = {
        p.stem for p in (ROOT / "gpuaas").glob("*.py") if p.stem not in ("__init__", "__main__")
    }
    packages = {p.name for p in (ROOT / "gpuaas").iterdir() if (p / "__init__.py").exists()}
    assert not [n for n in names if f"`{n}`" not in row and f"`{n} " not in row]
    assert not [n for n in packages if f"`{n}/`" not in row]
    # folders .gitignore names (a user's own `itp/` copy, `build/`, ...) are not the project's
    gitignore = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    ignored = {name for line in gitignore if (name := line.strip().strip("/"))}
    folders = {
        p.name
        for p in ROOT.iterdir()
        if p.is_dir()
        and p.name[0] not in "._"
        and not p.name.endswith(".egg-info")
        and p.name not in ignored | {"gpuaas"}
    }
    assert not [d for d in folders if f"| `{d}/` |" not in readme]
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    assert not [n for n in packages if f"gpuaas/{n}/" not in design]


def test_no_merge_conflict_markers():
    """A merge's conflict markers left in a text file (one reached the CHANGELOG once)."""
    marker = re.compile(r"^(<<<<<<< |=======$|>>>>>>> )", re.MULTILINE)
    left = [
        str(f.relative_to(ROOT))
        for pattern in [*SOURCES, "CHANGELOG.md", "tests/*.py", "pyproject.toml"]
        for f in ROOT.glob(pattern)
        if marker.search(f.read_text(encoding="utf-8"))
    ]
    assert not left, left
