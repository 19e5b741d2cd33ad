# Two commands matter: `make demo` runs the demo stack, `make test` runs every gate and suite.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PATH := $(CURDIR)/$(BIN):/usr/sbin:$(PATH)

.PHONY: test test-local test-cluster-local divergence demo lint typecheck unit integration scenarios crds bench tools clean e2e

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

tools:
	./scripts/ensure-tools.sh

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# Two pytest workers per core: the local-tier cells (real haproxy, the controller as a subprocess) mostly wait on
# real time, so one per core leaves the cores idle (2 cores: 13 min with 2 workers, 8.6 min with 4).
WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))

test: $(STAMP) tools lint typecheck
	$(BIN)/pytest -n $(WORKERS) -q

unit: $(STAMP)
	$(BIN)/pytest -q tests/unit

# The whole scenario library on `local` (real haproxy, the controller as subprocesses); see the README
# for its wall time. Reports (JUnit, summary, traces) in build/local.
test-local: $(STAMP) tools
	$(BIN)/haptic-sim run scenarios --backend local --report build/local

# Every promoted scenario (those opting in to local) on the cluster backend against a local stack taken as
# the cluster; make test runs a selection of them.
test-cluster-local: $(STAMP) tools
	HAPTIC_CLUSTER_PROMOTED=all $(BIN)/pytest -q tests/integration/simulator/scenario/test_cluster_backend_on_local_stack.py

# Every scenario on sim and on local, with the divergence report (verdicts side by side).
divergence: $(STAMP) tools
	$(BIN)/haptic-sim run scenarios --backend sim,local --report build/divergence

# Kind: create the cluster (kind-config.yaml), build the image with the docker SDK, kind load it, apply
# deploy/, run the promoted scenarios with --backend cluster; `make e2e E2E_ARGS=--keep-cluster` keeps it.
# Skipped, with the reason printed, where kind, kubectl or a Docker engine is missing.
e2e: $(STAMP)
	$(BIN)/pip install -q -e '.[e2e]'
	$(BIN)/pytest -rs -v tests/e2e $(E2E_ARGS)

demo: $(STAMP) tools
	$(BIN)/haptic-sim demo

crds: $(STAMP)
	$(BIN)/haptic crds -o deploy/crds

# Every bench script with its default sizes (several minutes; each script takes flags for smaller runs).
bench: $(STAMP)
	./scripts/ensure-tools.sh --bench
	for f in bench/[!_]*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache build
