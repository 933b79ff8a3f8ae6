"""The multi-hash profiler split into stage submodules is the design it replaced.

The split (two components, the CAM and the block RAM accumulator, each with its
pipeline stages as submodules) changed the Verilog on purpose, not the function:
:func:`hwprof.verify.equivalence.check_equivalence` (yosys ``equiv_make``,
``equiv_simple``, ``equiv_induct``, then the base case from reset) proves every
catalog parameter set of ``multihash`` equivalent to the design of :data:`BEFORE`
(generated from that commit's source, so the test needs the git history). The
check's own failure: a design that differs (the CAM without its bypass register)
is not proved equivalent.

Soak tier (``--soak``). Cost: the two formal sets, the check that fails and the
old design's generation together about 80 s wall (20 s CPU in the test process);
the defaults and the slow variants (2,048 counters become flops for ``memory_map``)
many minutes each.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import pytest

from hwprof.catalog import get_top
from hwprof.rtl.multihash import MultiHash
from hwprof.synth import to_verilog
from hwprof.tops.multihash import FORMAL
from hwprof.verify.equivalence import check_equivalence, renames

#: the last commit with the multi-hash designs before the split (one module each)
BEFORE = "b52f902ed96d06e32002fe59a97c22317dc09005"
ROOT = Path(__file__).resolve().parents[1]

_TOP = get_top("multihash")
#: every catalog parameter set: the default top, its variants, the slow variants, the
#: proved (formal) sets
PARAM_SETS = {
    "default": {},
    **{f"variant{i}": v for i, v in enumerate(_TOP.variants) if v},
    **{f"slow{i}": v for i, v in enumerate(_TOP.slow_variants)},
    "formal_bram": {**FORMAL, "ways": 2},
    "formal_cam": {**FORMAL, "ways": 0},
}


@pytest.fixture(scope="module")
def before(tmp_path_factory):
    """A directory holding the package ``hwprof`` as it was at :data:`BEFORE`."""
    if shutil.which("git") is None:
        pytest.skip("git is needed to read the design before the split")
    done = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", BEFORE, "hwprof"],
                          capture_output=True)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"commit {BEFORE[:10]} is not in this checkout's history")
    where = tmp_path_factory.mktemp("before")
    with tarfile.open(fileobj=BytesIO(done.stdout)) as tar:
        tar.extractall(where, filter="data")
    return where


def _verilog_before(where: Path, params: dict, out: Path) -> str:
    args = [a for k, v in params.items() for a in ("-p", f"{k}={v}")]
    subprocess.run([sys.executable, "-m", "hwprof.cli", "generate", "multihash", *args,
                    "-o", str(out)], cwd=where, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(where)})  # fmt: skip
    return (out / "multihash.v").read_text()


def test_renames_match_split_names():
    """A gate name is renamed to the gold one it stands for, only when that is unique."""
    gold = {"hit", "fifo.level", "position", "$12", "x"}
    gate = {"stage_d.hit", "readout.fifo.level", "stage_a.position", "config.position",
            "stage_b.$12", "x", "stage_c.x"}
    assert renames(gold, gate) == {"stage_d.hit": "hit", "readout.fifo.level": "fifo.level"}


@pytest.mark.soak
@pytest.mark.parametrize("name", sorted(PARAM_SETS))
def test_split_design_is_equivalent(name, before, tmp_path):
    params = PARAM_SETS[name]
    gold = _verilog_before(before, params, tmp_path / "before")
    gate = to_verilog(_TOP.construct(params), "multihash")
    assert gold != gate  # the Verilog did change
    proved, what = check_equivalence(gold, gate, "multihash", tmp_path / "equiv")
    assert proved, (name, what)


@pytest.mark.soak
def test_equivalence_check_rejects_a_different_design(before, tmp_path):
    """The CAM design without its bypass register (it misses the previous tuple's write)
    against the design before the split: not proved equivalent."""
    params = PARAM_SETS["formal_cam"]
    gold = _verilog_before(before, params, tmp_path / "before")
    broken = to_verilog(MultiHash(**_TOP.resolve(params), bypass=False), "multihash")
    proved, what = check_equivalence(gold, broken, "multihash", tmp_path / "equiv")
    assert not proved, what
