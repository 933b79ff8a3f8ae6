# hwprof: `make` installs everything into .venv and runs the main job;
# `make test` runs the whole test suite (fast tier + cocotb tier on Verilator).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.hwprof-installed

.PHONY: all report test test-fast soak lint clean experiments

all: report

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(STAMP)

report: $(STAMP)
	$(BIN)/hwprof report

test: $(STAMP)
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not cocotb"

soak: $(STAMP)
	$(BIN)/python -m pytest --soak -m soak

# every paper reproduction at full size (results in docs/results/; some capture traces)
experiments: $(STAMP)
	for e in $$($(BIN)/python -c 'from hwprof.experiments import all_experiments as a; print(*a())'); \
	do $(BIN)/hwprof experiment $$e || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check hwprof tests cocotb_tests bench

clean:
	rm -rf build
