# aws-python-keepalive: every target installs what it needs on first use (venvs under .venv/).
# Shell only for glue: the logic lives in Python under layer/, tests/, tools/, bench/ and lab/.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# --- interpreters -----------------------------------------------------------------------------
# CPython minors: the layer supports 3.10 - 3.14; tests and the lab run on 3.10 - 3.13. Each is looked
# up once per make run by tools/find-python (pyenv, then python3.X on PATH, then uv-managed; see
# tools/find_python.py): PYTHON_FOUND holds "3.12=/path" words for the minors this machine has.
PYTHON_MINORS := 3.10 3.11 3.12 3.13
LAYER_MINORS := 3.10 3.11 3.12 3.13 3.14
FIND_PYTHON := tools/find-python
PYTHON_FOUND := $(shell $(FIND_PYTHON) --make 3.9 $(LAYER_MINORS) $(if $(wildcard .venv/uv/bin/uv),--uv .venv/uv/bin/uv))
python_for = $(patsubst $(1)=%,%,$(filter $(1)=%,$(PYTHON_FOUND)))
FOUND_MINORS := $(foreach w,$(PYTHON_FOUND),$(firstword $(subst =, ,$(w))))
# need_python: the interpreter, or stop with one line saying which goal needs which minor and how
# to get it (expanded only where a recipe or prerequisite actually uses it).
need_python = $(or $(call python_for,$(1)),$(error $(shell $(FIND_PYTHON) --missing $(1) --goal "$(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))")))
# Tools (uv, ruff, build scripts) run on one interpreter: 3.12 if present, else any supported one.
TOOL_MINOR := $(firstword $(filter 3.12,$(FOUND_MINORS)) $(filter $(LAYER_MINORS),$(FOUND_MINORS)))
TOOL_PYTHON = $(call need_python,$(or $(TOOL_MINOR),3.12))

VENV := .venv
UV := $(VENV)/uv/bin/uv
# Registries are reached through the machine's CA bundle (a TLS-inspecting proxy may sit in between).
export UV_NATIVE_TLS := 1
export UV_NO_PROGRESS := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export SAM_CLI_TELEMETRY := 0

# botocore versions the hook is tested against besides the pinned one (tests/botocore/<v>.txt).
# 1.27.83 is the last with the old _compute_socket_options signature; 1.42.28/1.42.29 bracket
# BOTOCORE_TCP_KEEPALIVE; 1.12.16/1.12.17 bracket the method's introduction and only run on 3.9.
BOTOCORE_MATRIX := 1.27.83 1.29.165 1.34.162 1.42.28 1.42.29
BOTOCORE_OLD := 1.12.16 1.12.17
OLD_PYTHON := $(call python_for,3.9)

.PHONY: help
help:
	@echo "make demo       the lab: no layer / layer off / layer on, through a NAT that drops idle flows"
	@echo "make test       run every test (installs what it needs on first use; what CI runs)"
	@echo "make layer      build/layer.zip (SERVICES=dynamodb,s3 for a trimmed one); prints sha256 and sizes"
	@echo "make publish    publish build/layer.zip to each region in REGIONS (PUBLIC=1: public)"
	@echo "make deploy     sam build + sam deploy (EXAMPLE=1: with the example function)"
	@echo "make lint       ruff on all Python, sam validate --lint"
	@echo "make bench      the hook's startup cost, switch off and on (build/startup.json)"
	@echo "make coldstart  import boto3 + first client: layer vs the runtime's own copy (build/coldstart.json)"
	@echo "make coldstart-parts  where the layer's extra cold-start time goes (-X importtime, cProfile)"
	@echo "make lock       regenerate every hash-pinned requirements file (newest boto3/botocore)"
	@echo "make clean      remove build outputs and venvs"

# --- bootstrap: uv from a hash-pinned requirement, installed with pip ------------------------
$(UV): tools/uv.txt
	rm -rf $(VENV)/uv
	$(TOOL_PYTHON) -m venv $(VENV)/uv
	$(VENV)/uv/bin/pip install -q --require-hashes --no-deps -r tools/uv.txt
	touch $@

# One test venv per CPython minor: pytest + the layer's pinned boto3/botocore.
$(VENV)/test-%/bin/python: tests/requirements.txt layer/requirements.txt | $(UV)
	rm -rf $(VENV)/test-$*
	$(UV) venv -q --python $(call need_python,$*) $(VENV)/test-$*
	$(UV) pip install -q --python $@ --require-hashes -r tests/requirements.txt -r layer/requirements.txt
	touch $@

# botocore matrix: each version in its own folder, one per interpreter (a stand-in /var/task copy).
BOTOCORE_DIRS := $(filter-out $(VENV)/botocore/3.13/1.27.83/.done,\
                   $(foreach p,$(PYTHON_MINORS),$(foreach v,$(BOTOCORE_MATRIX),$(VENV)/botocore/$(p)/$(v)/.done))) \
                 $(foreach v,$(BOTOCORE_OLD),$(VENV)/botocore/3.9/$(v)/.done)
$(VENV)/botocore/%/.done: | $(UV)
	@p=$$(dirname $*); v=$$(basename $*); rm -rf $(VENV)/botocore/$*; \
	$(UV) pip install -q --target $(VENV)/botocore/$$p/$$v --python $(call need_python,$(firstword $(subst /, ,$*))) \
	  --require-hashes --no-deps -r tests/botocore/$$v.txt
	touch $@

.PHONY: test test-hook
test: test-hook test-build test-lab

# Hook tests run once per interpreter; pytest's exit code 5 (nothing collected) is a failure.
test-hook: $(foreach p,$(PYTHON_MINORS),$(VENV)/test-$(p)/bin/python) $(BOTOCORE_DIRS)
	@for p in $(PYTHON_MINORS); do \
	  echo "== hook tests on CPython $$p"; \
	  AWS_KEEPALIVE_BOTOCORE_DIRS=$(CURDIR)/$(VENV)/botocore AWS_KEEPALIVE_OLD_PYTHON=$(OLD_PYTHON) \
	    $(VENV)/test-$$p/bin/python -m pytest -q -p no:cacheprovider tests/hook || rc=$$?; \
	  rc=$${rc:-0}; if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; \
	  [ $$rc -eq 0 ] || exit $$rc; \
	done

.PHONY: bench
# On every tested CPython this machine has (the test venvs hold the pinned botocore for the patch
# table); prints the table and writes build/startup.json.
BENCH_MINORS := $(filter $(PYTHON_MINORS),$(FOUND_MINORS))
bench: $(foreach p,$(BENCH_MINORS),$(VENV)/test-$(p)/bin/python)
	$(TOOL_PYTHON) bench/startup.py --json $(BUILD_DIR)/startup.json \
	  $(foreach p,$(BENCH_MINORS),--python $(VENV)/test-$(p)/bin/python)

# --- layer build, SAM, publish (issue 3) -------------------------------------------------------
# (targets: layer, lint, deploy, publish, test-build)
# The build runs on the tool interpreter with the stdlib only; bytecode is compiled for every
# supported CPython this machine has (the layer's zip serves python3.10 - python3.14).
BUILD_DIR ?= build
LAYER_ZIP := $(BUILD_DIR)/layer.zip
SERVICES ?=
LAYER_PYTHONS = $(foreach p,$(LAYER_MINORS),$(call python_for,$(p)))
LAYER_NAME ?= aws-python-keepalive
REGIONS ?= us-east-1
PUBLIC ?= 0
# sam build validates a real python3.X of the example function's runtime (the pyenv shim fails).
SAM_RUNTIME_MINOR := 3.13
SAM_PATH = $(dir $(call python_for,$(SAM_RUNTIME_MINOR))):$(PATH)
SAM := $(VENV)/sam/bin/sam
TOOLS_PY := $(VENV)/tools/bin/python

# Tool venvs, each from its own hash-pinned lock (SAM CLI pins its own boto3, so it lives alone).
$(VENV)/tools/bin/python: tools/ruff.txt layer/requirements.txt | $(UV)
	rm -rf $(VENV)/tools
	$(UV) venv -q --python $(TOOL_PYTHON) $(VENV)/tools
	$(UV) pip install -q --python $@ --require-hashes -r tools/ruff.txt -r layer/requirements.txt
	touch $@
$(VENV)/sam/bin/python $(VENV)/moto/bin/python: $(VENV)/%/bin/python: tools/%.txt | $(UV)
	rm -rf $(VENV)/$*
	$(UV) venv -q --python $(TOOL_PYTHON) $(VENV)/$*
	$(UV) pip install -q --python $@ --require-hashes -r tools/$*.txt
	touch $@

# make layer [SERVICES=dynamodb,s3]: always rebuilds (it is reproducible) and prints sha256 and sizes.
.PHONY: layer
layer: | $(UV)
	$(TOOL_PYTHON) tools/build_layer.py --uv $(UV) --requirements layer/requirements.txt --hook layer \
	  --work $(BUILD_DIR)/layer --out $(LAYER_ZIP) --services "$(SERVICES)" $(addprefix --python ,$(LAYER_PYTHONS))

# When missing or older than what goes into it (so test-lab and demo never run a stale hook);
# otherwise publish uses the zip as built (trimmed or not).
$(LAYER_ZIP): $(wildcard layer/*.pth layer/*.py layer/aws_keepalive/*.py) layer/requirements.txt tools/build_layer.py
	$(MAKE) --no-print-directory layer

# sam build (BuildMethod: makefile) runs this with ARTIFACTS_DIR set: the same tree as the zip.
.PHONY: build-KeepAliveLayer
build-KeepAliveLayer: layer
	$(TOOL_PYTHON) -m zipfile -e $(LAYER_ZIP) "$(ARTIFACTS_DIR)"

.PHONY: lint
lint: $(TOOLS_PY) $(SAM)
	$(VENV)/tools/bin/ruff check .
	PATH=$(SAM_PATH) $(SAM) validate --lint

.PHONY: deploy
# make deploy [EXAMPLE=1]: the layer alone, or with the example function and its table.
deploy: $(SAM)
	PATH=$(SAM_PATH) $(SAM) build
	PATH=$(SAM_PATH) $(SAM) deploy $(if $(filter 1,$(EXAMPLE)),--parameter-overrides DeployExample=true)

# make publish REGIONS="us-east-1 eu-west-1" [PUBLIC=1] [LAYER_NAME=...]: prints one ARN per region.
.PHONY: publish
publish: $(TOOLS_PY) $(LAYER_ZIP)
	$(TOOLS_PY) tools/publish.py --zip $(LAYER_ZIP) --layer-name $(LAYER_NAME) --regions "$(REGIONS)" \
	  $(if $(filter 1,$(PUBLIC)),--public)

$(SAM): $(VENV)/sam/bin/python
$(VENV)/tools/bin/ruff: $(TOOLS_PY)

# Build tests: one interpreter runs them; they use the other interpreters through the layer itself.
.PHONY: test-build
test-build: $(foreach p,$(PYTHON_MINORS),$(VENV)/test-$(p)/bin/python) $(TOOLS_PY) $(SAM) $(VENV)/moto/bin/python
	@AWS_KEEPALIVE_SAM=$(CURDIR)/$(SAM) AWS_KEEPALIVE_MOTO=$(CURDIR)/$(VENV)/moto/bin/moto_server \
	  AWS_KEEPALIVE_SAM_PATH=$(SAM_PATH) \
	  AWS_KEEPALIVE_PYTHONS="$(foreach p,$(PYTHON_MINORS),$(CURDIR)/$(VENV)/test-$(p)/bin/python)" \
	  $(VENV)/test-3.12/bin/python -m pytest -q -p no:cacheprovider tests/build || rc=$$?; \
	  rc=$${rc:-0}; if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

# Cold start against the runtime's own boto3 (the lab's runtime venvs), layer read-only: per CPython
# this machine has, prints the table and writes build/coldstart.json; coldstart-parts: where the gap goes.
COLDSTART_MINORS := $(filter $(PYTHON_MINORS),$(FOUND_MINORS))
.PHONY: coldstart coldstart-parts
coldstart: $(LAYER_ZIP) $(foreach p,$(COLDSTART_MINORS),$(VENV)/lambda-$(p)/.lab-lock-sha256)
	PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) bench/coldstart.py --zip $(LAYER_ZIP) --json $(BUILD_DIR)/coldstart.json \
	  $(foreach p,$(COLDSTART_MINORS),--python $(p)=$(call python_for,$(p)))
coldstart-parts: $(LAYER_ZIP) $(foreach p,$(COLDSTART_MINORS),$(VENV)/lambda-$(p)/.lab-lock-sha256)
	PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) bench/coldstart_parts.py --zip $(LAYER_ZIP) --json $(BUILD_DIR)/coldstart-parts.json \
	  $(foreach p,$(COLDSTART_MINORS),--python $(p)=$(call python_for,$(p)))

# --- lab and demo (issue 4) ---------------------------------------------------------------------
# (targets: lab, demo, test-lab)

# What the lab needs besides Python: nftables + conntrack for the kernel NAT (lab/nat.py; apt only
# when a command is missing), and DynamoDB Local's jars fetched by mvn into .cache/ (lab/dynamodb.py;
# a no-op once fetched). test-lab depends on it; the line below adds it to test-lab's prerequisites.
.PHONY: lab-deps
lab-deps:
	@command -v nft >/dev/null && command -v conntrack >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nftables conntrack >/dev/null; }
	@PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) -m lab.dynamodb fetch >/dev/null
test-lab: lab-deps

# The measured keep-alive / NAT timeout relations (prints a table; ~3 min, needs root).
.PHONY: measure-keepalive
measure-keepalive: lab-deps $(VENV)/test-3.12/bin/python
	$(VENV)/test-3.12/bin/python -m lab.measure_keepalive

# Lambda stand-in runtimes (lab/lambda_env.py): one venv per CPython minor holding awslambdaric and
# the bundled-kind boto3 from lab/runtime-requirements.txt. lab/lambda_env.py creates them on first
# use too (same commands, plus a stamp of the lock's sha256); this target makes them up front.
LAB_RUNTIME_VENVS := $(foreach p,$(PYTHON_MINORS),$(VENV)/lambda-$(p)/.lab-lock-sha256)
$(VENV)/lambda-%/.lab-lock-sha256: lab/runtime-requirements.txt | $(UV)
	rm -rf $(VENV)/lambda-$*
	$(UV) venv -q --python $(call need_python,$*) $(VENV)/lambda-$*
	$(UV) pip install -q --python $(VENV)/lambda-$*/bin/python --require-hashes -r lab/runtime-requirements.txt
	sha256sum lab/runtime-requirements.txt | cut -d' ' -f1 > $@

.PHONY: lab-runtimes lock-lab
lab-runtimes: $(LAB_RUNTIME_VENVS)

lock-lab: | $(UV)
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/runtime-requirements.in \
	  -o lab/runtime-requirements.txt

# make demo: the README's main command (~2 min, needs root for the NAT namespaces). Not part of
# `make test`. Its venv holds matplotlib + trustme (lab/demo-requirements.txt, constrained by the
# layer's pins) and the layer's boto3; the stand-in runtime venv is made on first use.
DEMO_PY := $(VENV)/demo/bin/python
$(DEMO_PY): lab/demo-requirements.txt layer/requirements.txt | $(UV)
	rm -rf $(VENV)/demo
	$(UV) venv -q --python $(TOOL_PYTHON) $(VENV)/demo
	$(UV) pip install -q --python $@ --require-hashes -r lab/demo-requirements.txt -r layer/requirements.txt
	touch $@

.PHONY: demo lock-demo
# The stand-in runs CPython 3.12 if this machine has it, else any one tested minor it has.
DEMO_MINOR := $(firstword $(filter 3.12,$(FOUND_MINORS)) $(filter $(PYTHON_MINORS),$(FOUND_MINORS)) 3.12)
demo: $(LAYER_ZIP) lab-deps $(DEMO_PY) $(VENV)/lambda-$(DEMO_MINOR)/.lab-lock-sha256
	$(DEMO_PY) -m lab.demo --zip $(LAYER_ZIP) --png $(BUILD_DIR)/demo.png --python $(DEMO_MINOR)

lock-demo: | $(UV)
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes -c layer/requirements.txt \
	  lab/demo-requirements.in -o lab/demo-requirements.txt

# Lab tests on one interpreter (the stand-in runs every CPython itself); -rs prints skip reasons.
# pytest's exit code 5 (nothing collected) is a failure.
.PHONY: test-lab
test-lab: $(VENV)/test-3.12/bin/python $(LAB_RUNTIME_VENVS) $(LAYER_ZIP)
	@$(VENV)/test-3.12/bin/python -m pytest -q -rs -p no:cacheprovider tests/lab || rc=$$?; \
	  rc=$${rc:-0}; if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

# --- locks ------------------------------------------------------------------------------------
.PHONY: lock
lock: | $(UV)
	$(UV) pip compile -q --universal --generate-hashes tools/uv.in -o tools/uv.txt
	$(UV) pip compile -q --universal --python-version 3.10 --upgrade --generate-hashes layer/requirements.in \
	  -o layer/requirements.txt
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes tests/requirements.in -o tests/requirements.txt
	for v in $(BOTOCORE_MATRIX); do echo "botocore==$$v" | $(UV) pip compile -q --universal --python-version 3.10 \
	  --generate-hashes --no-header - -o tests/botocore/$$v.txt; done
	for v in $(BOTOCORE_OLD); do echo "botocore==$$v" | $(UV) pip compile -q --python-version 3.9 \
	  --generate-hashes --no-header - -o tests/botocore/$$v.txt; done
	for n in sam moto ruff; do $(UV) pip compile -q --universal --python-version 3.12 --upgrade --generate-hashes \
	  tools/$$n.in -o tools/$$n.txt; done
	$(TOOL_PYTHON) tools/layer_info.py --write-template template.yaml
	$(MAKE) --no-print-directory lock-lab lock-demo

.PHONY: clean
clean:
	rm -rf build $(VENV)
	rm -rf .aws-sam
