"""The system's generated pieces (fast tier): the core patch, the header, the linker
script, the register table of docs/system.md, `hwprof system generate`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hwprof.golden.brr_isa import MATCH_MASK, MATCH_VALUE
from hwprof.system import core, dispatch, firmware, regmap

ROOT = Path(__file__).resolve().parents[1]


def test_core_patch_applies_and_decodes_brr_by_the_isa_constants():
    text = core.core_verilog()
    assert "module hwprof_picorv32 #(" in text and "module picorv32 #(" not in text
    assert "module picorv32_wb" not in text and "module picorv32_axi" not in text
    assert f"(mem_rdata_latched & 32'h{MATCH_MASK:08x}) == 32'h{MATCH_VALUE:08x}" in text
    # a brr and a CSR instruction of the system's CSRs are not illegal instructions
    assert "instr_timer, instr_brr, instr_hwprof_csr};" in text


def test_core_patch_refuses_another_picorv32(tmp_path, monkeypatch):
    source = core.core_source().read_text()
    changed = tmp_path / "picorv32.v"
    changed.write_text(source.replace("is_beq_bne_blt_bge_bltu_bgeu <= mem_rdata_latched",
                                      "is_branch <= mem_rdata_latched"))  # fmt: skip
    monkeypatch.setattr(core, "core_source", lambda: changed)
    core.core_verilog.cache_clear()
    try:
        with pytest.raises(core.PatchError, match="anchor found 0 times"):
            core.core_verilog()
    finally:
        core.core_verilog.cache_clear()


def test_core_package_version_is_the_pinned_one():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'"{core.CORE_PACKAGE}=={core.CORE_VERSION}"' in pyproject
    assert core.core_source().is_file()


def test_firmware_files_are_generated_from_the_map():
    assert (firmware.FIRMWARE / "hwprof.h").read_text() == firmware.header()
    assert (firmware.FIRMWARE / "link.ld").read_text() == firmware.linker_script()
    for b in regmap.BLOCKS:
        for r in b.registers:
            addr = regmap.address(b.name, r.name)
            line = f"#define HWPROF_{b.name.upper()}_{r.name} 0x{addr:08x}"
            assert line in firmware.header()


def test_docs_register_table_is_generated():
    page = (ROOT / "docs" / "system.md").read_text()
    assert f"{regmap.BEGIN}\n{regmap.markdown_table()}{regmap.END}" in page


def test_generate_writes_everything(tmp_path, capsys):
    from hwprof.cli import main

    assert main(["system", "generate", "-o", str(tmp_path / "out")]) == 0
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["hwprof.h", "hwprof_system.v", "link.ld", "pfspill.c", "regmap.json",
                     "regmap.md", "start.S"]  # fmt: skip
    verilog = (tmp_path / "out" / "hwprof_system.v").read_text()
    assert "module hwprof_system(" in verilog and "module hwprof_picorv32 #(" in verilog
    assert "module \\hwprof_system.peripherals.brr " in verilog  # the catalog's brr unit
    assert (tmp_path / "out" / "hwprof.h").read_text() == firmware.header()
    assert main(["system", "generate", "-o", str(tmp_path / "out" / "hwprof.h")]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_docs_csr_table_lists_the_cores_csrs():
    """docs/system.md's CSR table names exactly the CSRs the core decodes."""
    text = (ROOT / "docs" / "system.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| `0x([0-9A-F]{3})` \|", text, re.MULTILINE)
    assert {name: int(number, 16) for name, number in rows} == dispatch.CSRS
