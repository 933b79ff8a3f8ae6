"""PicoRV32's own instruction tests (``tests/*.S`` of the core's PyPI package, from
riscv-tests rv32ui/rv32um) built with our toolchain and run on the patched core.

As the package's own firmware does, the tests are chained in one program: test
``t`` ends by jumping to ``t_ret``, which jumps to the next test. The package's
``riscv_test.h`` prints the test's name and ``OK`` to address 0x10000000 (the
system's ``CONSOLE_PUTC``) or ``ERROR`` and executes ``ebreak`` (a trap here).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from .core import core_source
from .regmap import address

__all__ = ["test_sources", "build_chain", "run_core_tests"]


def test_sources() -> list[Path]:
    """Every ``tests/*.S`` of the package."""
    return sorted((core_source().parent / "tests").glob("*.S"))


def build_chain(work: Path, tests: list[Path] | None = None) -> list[Path]:
    """One wrapper per test (its function names) and the chaining ``main``; the sources.

    ``tests``: the ``.S`` files (default :func:`test_sources`)."""
    if address("console", "PUTC") != 0x10000000:
        raise RuntimeError("riscv_test.h prints to 0x10000000, which is not CONSOLE_PUTC")
    work.mkdir(parents=True, exist_ok=True)
    tests = test_sources() if tests is None else list(tests)
    names = [s.stem for s in tests]
    sources = []
    for src in tests:
        wrapper = work / f"t_{src.stem}.S"
        wrapper.write_text(f'#define TEST_FUNC_NAME {src.stem}_test\n'
                           f'#define TEST_FUNC_TXT "{src.stem}"\n'
                           f'#define TEST_FUNC_RET {src.stem}_ret\n'
                           f'#include "{src}"\n')  # fmt: skip
        sources.append(wrapper)
    chain = ["\t.text", "\t.global main", "main:", f"\tjal zero, {names[0]}_test"]
    for name, following in zip(names, [*names[1:], None], strict=True):
        chain += [f"\t.global {name}_ret", f"{name}_ret:"]
        chain.append(f"\tjal zero, {following}_test" if following else "\tli a0, 0")
    chain += [f"\tli t0, {address('console', 'EXIT'):#x}", "\tsw a0, 0(t0)", "1:\tj 1b", ""]
    main = work / "chain.S"
    main.write_text("\n".join(chain))
    return [main, *sources]


def run_core_tests(exe=None, tests: list[Path] | None = None) -> dict:
    """Build and run the tests; ``{"passed": [...], "failed": [...], "run": Run}``.

    A failing test prints ERROR and traps (ebreak): the tests after it do not run."""
    from .sim import run_program

    tests_dir = core_source().parent / "tests"
    with tempfile.TemporaryDirectory(prefix="hwprof-core-tests-") as work:
        sources = build_chain(Path(work) / "src", tests)
        run = run_program(sources, exe=exe, work=Path(work) / "run", events=False,
                          cycles=5_000_000, extra_flags=(f"-I{tests_dir}",))  # fmt: skip
    passed, failed = [], []
    for line in run.output.splitlines():
        name, _, verdict = line.partition("..")
        (passed if verdict == "OK" else failed).append(name)
    return {"passed": passed, "failed": failed, "run": run}
