"""The system on the FPGA (hwprof/system/fpga.py, docs/system-fpga.md): the board's pin
constraints, the console's UART transmitter against a reference written here, the
table generated from place-and-route records, and ``hwprof system bitstream``'s
argument errors. Place and route itself is in the soak tier (minutes)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from amaranth.sim import Simulator

from hwprof.cli import main
from hwprof.system import fpga, soc
from hwprof.system.fpga import BOARDS, BoardTop, UartTx, lpf, markdown_table
from tests.unelaborated import unelaborated


def frame_waveform(byte: int, divisor: int) -> list[int]:
    """Reference: the line levels of one 8N1 frame, ``divisor`` cycles per bit."""
    bits = [0] + [(byte >> i) & 1 for i in range(8)] + [1]
    return [b for b in bits for _ in range(divisor)]


def check_line(line: list[int], accepted: list[int], sent: list[int], divisor: int) -> None:
    """Each byte's frame, bit for bit and cycle for cycle, starting the cycle after it
    was accepted; the line idle (1) everywhere else."""
    assert len(accepted) == len(sent), (len(accepted), len(sent))
    expected = [1] * len(line)
    for cycle, byte in zip(accepted, sent, strict=True):
        wave = frame_waveform(byte, divisor)
        expected[cycle + 1:cycle + 1 + len(wave)] = wave
    expected = expected[:len(line)]
    first = next((i for i, (a, b) in enumerate(zip(line, expected, strict=True)) if a != b), None)
    assert first is None, f"line differs from the reference first at cycle {first}"


def run_uart(dut: UartTx, sent: list[int], rng) -> tuple[list[int], list[int]]:
    """Offer ``sent`` with random gaps; the line level each cycle and the accept cycles."""
    line, accepted = [], []

    async def bench(ctx):
        cycle, pending = 0, list(sent)
        wait = 0
        while pending or cycle < (accepted[-1] if accepted else 0) + 12 * dut.divisor:
            offer = bool(pending) and wait == 0
            ctx.set(dut.data.valid, offer)
            if offer:
                ctx.set(dut.data.payload, pending[0])
            line.append(ctx.get(dut.tx))
            if offer and ctx.get(dut.data.ready):
                accepted.append(cycle)
                pending.pop(0)
                wait = int(rng.choice([0, 0, 1, 7, 3 * dut.divisor]))
            elif wait:
                wait -= 1
            await ctx.tick()
            cycle += 1

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return line, accepted


@pytest.mark.parametrize("divisor", [2, 5])
def test_uart_tx_matches_the_reference(divisor, seed):
    rng = np.random.default_rng(seed)
    sent = [0x00, 0xFF, 0x55, 0xAA] + [int(b) for b in rng.integers(0, 256, 24)]
    line, accepted = run_uart(UartTx(divisor), sent, rng)
    check_line(line, accepted, sent, divisor)
    # back-to-back bytes: one frame (10 bits) and one idle cycle apart at most
    assert all(b - a >= 10 * divisor for a, b in zip(accepted, accepted[1:], strict=False))


def test_uart_checker_fails_on_a_wrong_divisor(seed):
    rng = np.random.default_rng(seed)
    sent = [int(b) for b in rng.integers(0, 256, 4)]
    line, accepted = run_uart(UartTx(4), sent, rng)
    with pytest.raises(AssertionError, match="differs from the reference"):
        check_line(line, accepted, sent, 3)


def test_uart_tx_rejects_a_bad_divisor():
    with pytest.raises(ValueError, match="divisor"):
        UartTx(1)


def test_ulx3s_constraints_have_clock_and_uart_pins():
    text = lpf(BOARDS["ulx3s-85f"])
    # the board's published pin list: 25 MHz oscillator on G2, FTDI receive (the
    # FPGA's transmit) on L4, LEDs 0-3 on B2, C2, C1, D2
    assert 'LOCATE COMP "clk" SITE "G2";' in text
    assert 'FREQUENCY PORT "clk" 25 MHZ;' in text
    assert 'LOCATE COMP "uart_tx" SITE "L4";' in text
    for i, pin in enumerate(["B2", "C2", "C1", "D2"]):
        assert f'LOCATE COMP "led[{i}]" SITE "{pin}";' in text
    # every port of the board top is placed, and nothing else is
    with unelaborated():  # only its signature is read
        top = BoardTop(BOARDS["ulx3s-85f"], b"\x13\x00\x00\x00", ram_size=64)
        ports = {name: len(port) for name, port in
                 ((n, getattr(top, n)) for n in top.signature.members)}  # fmt: skip
        del top
    located = re.findall(r'LOCATE COMP "(\w+)(?:\[(\d+)\])?"', text)
    assert {name for name, _ in located} == set(ports)
    assert sum(1 for name, _ in located if name == "led") == ports["led"]


def test_board_top_refuses_a_program_larger_than_ram():
    with pytest.raises(ValueError, match="does not fit in RAM"):
        BoardTop(BOARDS["ulx3s-85f"], bytes(128), ram_size=64)


RECORD = {"luts": 100, "ffs": 50, "bram": 8, "dist_ram": 0, "prof_target_mhz": None,
          "fmax_by_clock": {"clk": 60.0}, "doc": "core alone"}  # fmt: skip


def test_table_rows_deltas_and_dispatch_marker(monkeypatch):
    monkeypatch.setattr(soc, "ATTACH", {k: v for k, v in soc.ATTACH.items() if k != "dispatch"})
    assert not fpga.dispatch_in_system()
    assert fpga.measure(["dispatch"]) == [fpga._dispatch_row()]  # not placed and routed
    with_prof = RECORD | {"luts": 130, "ffs": 80, "bram": 10, "prof_target_mhz": 100,
                          "fmax_by_clock": {"clk": 55.5, "prof_clk": 70.25},
                          "doc": "+ profiler"}  # fmt: skip
    table = markdown_table([RECORD, with_prof, fpga._dispatch_row()]).splitlines()
    assert table[2] == "| core alone | 100 | 50 | 8 | 0 | 60.0 | - |"
    assert table[3] == "| + profiler | 130 (+30) | 80 (+30) | 10 (+2) | 0 (+0) | 55.5 | " \
                       "70.2 (target 100) |"
    assert "not in the system yet" in table[4]


@pytest.mark.parametrize("args, message", [
    (["--board", "nope", "-o", "{tmp}/x.bit"], "unknown board 'nope' (known: ulx3s-85f)"),
    (["--board", "ulx3s-85f", "-o", "{tmp}/no/x.bit"], "/no: no such directory"),
    (["--board", "ulx3s-85f", "-o", "{tmp}"], "is a directory"),
    (["--board", "ulx3s-85f", "-o", "{tmp}/x.bit", "--program", "{tmp}/none.c"],
     "none.c: no such file"),
])  # fmt: skip
def test_bitstream_bad_arguments(args, message, tmp_path, capsys):
    args = [a.format(tmp=tmp_path) for a in args]
    assert main(["system", "bitstream", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hwprof: error: ") and message in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.soak
def test_bitstream_for_ulx3s(tmp_path):
    # minutes: synthesis, place and route of the whole system, ecppack
    out = tmp_path / "ulx3s.bit"
    assert main(["system", "bitstream", "--board", "ulx3s-85f", "-o", str(out)]) == 0
    data = out.read_bytes()
    assert len(data) > 100_000 and b"\xff\xff\xbd\xb3" in data[:1024]  # ECP5 preamble
