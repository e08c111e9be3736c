"""Reading the package's input files (JSON, YAML): every failure is an InputError naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from gpuaas.errors import InputError


def _read_text(path: str | Path, kind: str) -> str:
    source = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise InputError(source, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(source, None, "is a directory, not a file") from None
    except OSError as exc:
        raise InputError(source, None, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InputError(source, None, f"not UTF-8 text (byte {exc.start}); {kind} files are UTF-8") from None


def read_json(path: str | Path) -> Any:
    """The JSON document in `path`."""
    text = _read_text(path, "JSON")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), None, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def read_yaml(path: str | Path) -> Any:
    """The YAML document in `path` (None for an empty file)."""
    text = _read_text(path, "YAML")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise InputError(str(path), None, f"not valid YAML: {problem}{where}") from None


def read_text(path: str | Path, kind: str = "text") -> str:
    """The UTF-8 text of `path` (`kind` names the format in the not-UTF-8 error, e.g. "CSV")."""
    return _read_text(path, kind)
