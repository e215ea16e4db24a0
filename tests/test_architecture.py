"""The package keeps its shape (docs/architecture.md): no import circle anywhere in ``lnetgen``
(deferred imports inside functions count too, so none can hide one), modules of a few hundred
lines, no class over ~300 lines, and every module importable on its own in a fresh interpreter
in dependency order.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "lnetgen"
MAX_MODULE_LINES = 550  # "about 500"
MAX_CLASS_LINES = 300


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The lnetgen modules ``name`` imports, anywhere in its body."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            subs = {f"{mod}.{a.name}" for a in node.names} & MODULES.keys()
            found.update(subs)
            if len(subs) < len(node.names):  # some names come from the module (package face)
                found.add(mod)
    return {m for m in found if m in MODULES and m != name}


def _graph() -> dict[str, set[str]]:
    return {name: _imports(name, path) for name, path in MODULES.items()}


def test_no_import_circle() -> None:
    try:
        order = list(TopologicalSorter(_graph()).static_order())
    except CycleError as exc:
        raise AssertionError(f"import circle: {' -> '.join(exc.args[1])}") from None
    assert set(order) == set(MODULES)


def test_modules_and_classes_stay_small() -> None:
    big = []
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES:
            big.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    big.append(f"{name}.{node.name}: class of {size} lines")
    assert not big, big


def test_every_module_has_a_docstring() -> None:
    missing = [
        name for name, path in MODULES.items() if not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert not missing, missing


def test_modules_import_alone_in_dependency_order() -> None:
    order = [m for m in TopologicalSorter(_graph()).static_order() if m != "lnetgen.__main__"]
    code = "import importlib, sys\nfor m in sys.argv[1:]:\n    importlib.import_module(m)\n"
    proc = subprocess.run(
        [sys.executable, "-c", code, *order],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
