# Set-up is part of every target: a fresh machine needs only python3 (>= 3.11) and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test unit lint diagrams screenshots

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

## demo: the main job on the embedded default (no external cluster or Redis needed)
demo: $(BIN)/.installed
	$(BIN)/syncflow demo

## test: lint, type-check and the whole test suite
test: lint
	$(BIN)/pytest

## unit: every test that starts no process (no devcluster, syncflow process, kubectl or worker), in under a minute
unit: $(BIN)/.installed
	$(BIN)/pytest -m "not integration"

lint: $(BIN)/.installed
	$(BIN)/ruff check syncflow tests bench
	$(BIN)/ruff format --check syncflow tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

## diagrams: render every docs/diagrams/*.dot to .svg (needs Graphviz's dot; not part of test)
diagrams:
	@for src in docs/diagrams/*.dot; do \
		echo "dot -Tsvg $$src -o $${src%.dot}.svg"; \
		dot -Tsvg "$$src" -o "$${src%.dot}.svg" || exit 1; \
	done

## screenshots: the console's pictures in docs/images from a live stack (needs chromium; not part of test)
screenshots: $(BIN)/.installed
	$(BIN)/python -m tests.browser.screenshots
