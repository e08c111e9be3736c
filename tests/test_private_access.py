"""No module of gpuaas/rescheduler reads another object's private attributes (issue 40).

The Rescheduler's state is one record (`gpuaas.rescheduler.state.RunState`) with public fields
that it passes to the modules of each concern; an access like ``r._jobs`` would tie a module to
another's internals again. Every module is parsed (not imported): an attribute whose name
starts with ``_`` (dunders aside) is allowed only on ``self`` or ``cls``, and a private name
imported from another module only where `ALLOWED` says why. A namedtuple's ``_make``,
``_asdict``, ``_replace`` and ``_fields`` are its public API.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gpuaas" / "rescheduler"
#: the public API of `collections.namedtuple`, underscored to avoid clashing with field names
NAMEDTUPLE_API = {"_make", "_asdict", "_replace", "_fields", "_field_defaults"}
#: (module, imported private name): why it is allowed
ALLOWED = {
    # the placement check of `gpuaas.instance`, shared with restore so that a restored state's
    # placements pass exactly the checks an instance's do (one place for that fact)
    ("persistence.py", "gpuaas.instance._check_placements"): "shared check",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_reads(source: str, module: str) -> list[str]:
    """Each access of another object's private attribute in `source`, as 'module:line: text'."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if node.attr in NAMEDTUPLE_API:
                continue
            found.append(f"{module}:{node.lineno}: .{node.attr} on {ast.unparse(owner)}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                if _private(alias.name) and (module, name) not in ALLOWED:
                    found.append(f"{module}:{node.lineno}: imports {name}")
    return found


def test_no_module_reads_another_objects_private_attributes() -> None:
    found = [
        line
        for path in sorted(PACKAGE.glob("*.py"))
        for line in private_reads(path.read_text(), path.name)
    ]
    assert not found, "private attributes read across objects:\n" + "\n".join(found)


def test_the_check_finds_private_reads() -> None:
    source = (
        "import x\n"
        "from gpuaas.m import _hidden\n"
        "def f(r, self):\n"
        "    a = r._jobs\n"  # another object's: found
        "    b = self._cache\n"  # its own: allowed
        "    c = T._make\n"  # a namedtuple's API: allowed
        "    d = r.__class__\n"  # a dunder: allowed
        "    r.s._nodes = {}\n"  # a write, through a chain: found
    )
    assert private_reads(source, "m.py") == [
        "m.py:2: imports gpuaas.m._hidden",
        "m.py:4: ._jobs on r",
        "m.py:8: ._nodes on r.s",
    ]
