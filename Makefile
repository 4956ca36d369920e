# aws-python-keepalive: every target installs what it needs on first use (venvs under .venv/).
# Shell only for glue: the logic lives in Python under layer/, tests/, tools/, bench/ and lab/.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# --- interpreters -----------------------------------------------------------------------------
# CPython minors: the layer supports, and tests and the lab run on, 3.10 - 3.14; 3.9 runs the
# oldest botocore versions of the matrix. Each is looked up once per make run by tools/find-python
# (pyenv, then python3.X on PATH, then uv-managed, then .venv/python/; see tools/find_python.py):
# PYTHON_FOUND holds "3.12=/path" words for the minors this machine has.
PYTHON_MINORS := 3.10 3.11 3.12 3.13 3.14
LAYER_MINORS := 3.10 3.11 3.12 3.13 3.14
NEEDED_MINORS := 3.9 $(LAYER_MINORS)
FIND_PYTHON := tools/find-python
PYTHON_FOUND := $(shell $(FIND_PYTHON) --make $(NEEDED_MINORS) $(if $(wildcard .venv/uv/bin/uv),--uv .venv/uv/bin/uv))
python_for = $(patsubst $(1)=%,%,$(filter $(1)=%,$(PYTHON_FOUND)))
FOUND_MINORS := $(foreach w,$(PYTHON_FOUND),$(firstword $(subst =, ,$(w))))
# need_python: the interpreter; a minor this machine lacks is installed into .venv/python/<minor>
# (tools/install_python.py: uv python install, else Maven Central's build), or make stops saying
# which goal needs which minor and why it could not be had (expanded only where a recipe or
# prerequisite actually uses it).
need_python = $(or $(call python_for,$(1)),$(shell $(FIND_PYTHON) --install $(1) --goal "$(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))" \
  $(if $(wildcard $(UV)),--uv $(UV))),$(error make could not get CPython $(1): see the line above))
# Tools (uv, ruff, build scripts) run on one interpreter: 3.12 if present, else any supported one
# (a distribution's python3.11, say), else 3.12 installed.
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
# 1.27.83 is the last with the old _compute_socket_options signature (it imports cgi, gone since
# CPython 3.13: not installed on 3.13/3.14); 1.42.28/1.42.29 bracket
# BOTOCORE_TCP_KEEPALIVE; 1.12.16/1.12.17 bracket the method's introduction and only run on 3.9.
BOTOCORE_MATRIX := 1.27.83 1.29.165 1.34.162 1.42.28 1.42.29
BOTOCORE_OLD := 1.12.16 1.12.17
OLD_PYTHON = $(call need_python,3.9)

.PHONY: help interpreters
help:
	@echo "make demo       the lab: no layer / layer off / layer on, through a NAT that drops idle flows"
	@echo "make demo-lmi   Lambda Managed Instances: 4 never-frozen workers, some idle past the NAT timeout"
	@echo "make bench-children  what the layer costs a child process, per multiprocessing start method"
	@echo "make soak       the fault soak: DURATION=300 s of random gaps, NAT modes, restarts (SEED=n)"
	@echo "make measure-async  async patterns in the stand-in: new connections per invocation, p50"
	@echo "make measure-learn  the learned idle limit behind a NAT shorter than max idle (gap 1 vs later gaps)"
	@echo "make bench-reuse  what stale-reuse detection adds to a request on a reused connection"
	@echo "make bench-throughput  sequential / threads / aiobotocore PutItems behind Netem (BENCH_N, BENCH_RTT_MS)"
	@echo "make test       run every test (installs what it needs on first use; what CI runs)"
	@echo "make interpreters  find or install CPython $(NEEDED_MINORS); one line each: where it came from"
	@echo "make layer      build/layer.zip (SERVICES=dynamodb,s3 for a trimmed one; FLAVOR=hook: build/layer-hook.zip, no SDK); prints sha256 and sizes"
	@echo "make publish    publish build/layer.zip (FLAVOR=hook: build/layer-hook.zip) to each region in REGIONS (PUBLIC=1: public)"
	@echo "make wheel      build/aws_python_keepalive-<version>-py3-none-any.whl (container images, bundles)"
	@echo "make publish-wheel  upload the wheel to INDEX_URL with TOKEN (or INDEX_USER/INDEX_PASSWORD)"
	@echo "make deploy     sam build + sam deploy (EXAMPLE=1: with the example function)"
	@echo "make lint       ruff on all Python, sam validate --lint"
	@echo "make bench      the hook's startup cost, switch off and on (build/startup.json)"
	@echo "make bench-aio  what patching aiobotocore costs when the function imports it"
	@echo "make bench-connect  one new HTTPS connection: stock vs layer vs one-cert floor at Lambda CPU shares (root)"
	@echo "make coldstart  import boto3 + first client: runtime-kind copy vs hook flavor vs full layer (build/coldstart.json)"
	@echo "make coldstart-parts  where the layer's extra cold-start time goes (-X importtime, cProfile)"
	@echo "make lock       regenerate every hash-pinned requirements file (newest boto3/botocore)"
	@echo "make lock-aio   regenerate the aiobotocore/aioboto3 test locks (tests/aio/*.in -> *.txt)"
	@echo "make test-compat  the layer beside X-Ray SDK, Powertools, ddtrace, sentry, datadog-lambda; botocore's own unit tests"
	@echo "make clean      remove build outputs and venvs"

# Every minor make test needs, found or installed into .venv/python/ (uv first: the repo's uv
# exists by then); one line per minor saying where it came from.
interpreters: | $(UV)
	@$(FIND_PYTHON) --report --goal interpreters --uv $(UV) $(NEEDED_MINORS)

# --- bootstrap: uv from a hash-pinned requirement, installed with pip ------------------------
$(UV): tools/uv.txt
	rm -rf $(VENV)/uv
	$(TOOL_PYTHON) -m venv $(VENV)/uv
	$(VENV)/uv/bin/pip install -q --require-hashes --no-deps -r tools/uv.txt
	touch $@

# One test venv per CPython minor: pytest + the layer's pinned boto3/botocore.
$(VENV)/test-%/.installed: tests/requirements.txt layer/requirements.txt | $(UV)
	rm -rf $(VENV)/test-$*
	$(UV) venv -q --python $(call need_python,$*) $(VENV)/test-$*
	$(UV) pip install -q --python $(VENV)/test-$*/bin/python --require-hashes -r tests/requirements.txt \
	  -r layer/requirements.txt
	touch $@

# A venv's bin/python is a symlink to the interpreter it was made from, and make reads the time of
# a symlink's target: touching bin/python would touch that shared interpreter, and a venv rebuilt
# later would hide a changed lock from every other venv made from the same interpreter. So each
# venv's recipe touches its own .installed stamp, and bin/python just follows it.
$(VENV)/%/bin/python: $(VENV)/%/.installed ;
# Made through a pattern chain, the stamps would count as intermediate files and be deleted.
.PRECIOUS: $(VENV)/test-%/.installed $(VENV)/%/.installed

# botocore matrix: each version in its own folder, one per interpreter (a stand-in /var/task copy).
BOTOCORE_DIRS := $(filter-out $(VENV)/botocore/3.13/1.27.83/.done $(VENV)/botocore/3.14/1.27.83/.done,\
                   $(foreach p,$(PYTHON_MINORS),$(foreach v,$(BOTOCORE_MATRIX),$(VENV)/botocore/$(p)/$(v)/.done))) \
                 $(foreach v,$(BOTOCORE_OLD),$(VENV)/botocore/3.9/$(v)/.done)
$(VENV)/botocore/%/.done: | $(UV)
	@p=$$(dirname $*); v=$$(basename $*); rm -rf $(VENV)/botocore/$*; \
	$(UV) pip install -q --target $(VENV)/botocore/$$p/$$v --python $(call need_python,$(firstword $(subst /, ,$*))) \
	  --require-hashes --no-deps -r tests/botocore/$$v.txt
	touch $@

# aiobotocore matrix (issue 8): the newest aiobotocore, the newest of its previous major line, the
# newest aioboto3 (which pins an older aiobotocore), each with the botocore and aiohttp it pins
# (tests/aio/<name>.txt, from tests/aio/<name>.in by `make lock-aio`); plus 2.26.0 on the oldest
# aiohttp it allows, 3.9.5 (its connector API differs: synchronous _get), which has no wheels for
# CPython 3.13. Each in its own folder per interpreter, a stand-in /var/task copy.
AIO_MATRIX := aiobotocore-3.10.0 aiobotocore-2.26.0 aioboto3-15.5.0
AIO_OLD_AIOHTTP := aiobotocore-2.26.0-aiohttp-3.9.5
AIO_DIRS := $(foreach p,$(PYTHON_MINORS),$(foreach n,$(AIO_MATRIX),$(VENV)/aio/$(p)/$(n)/.done)) \
            $(foreach p,3.10 3.11 3.12,$(VENV)/aio/$(p)/$(AIO_OLD_AIOHTTP)/.done)
$(VENV)/aio/%/.done: | $(UV)
	@p=$$(dirname $*); n=$$(basename $*); rm -rf $(VENV)/aio/$*; \
	$(UV) pip install -q --target $(VENV)/aio/$$p/$$n --python $(call need_python,$(firstword $(subst /, ,$*))) \
	  --require-hashes --no-deps -r tests/aio/$$n.txt
	touch $@

.PHONY: lock-aio
lock-aio: | $(UV)
	for n in $(AIO_MATRIX) $(AIO_OLD_AIOHTTP); do $(UV) pip compile -q --universal --python-version 3.10 \
	  --generate-hashes --no-header tests/aio/$$n.in -o tests/aio/$$n.txt; done

# What patching aiobotocore costs (once, when the function imports it); numbers for docs/async.md.
.PHONY: bench-aio
bench-aio: $(VENV)/test-3.12/bin/python $(foreach n,$(AIO_MATRIX),$(VENV)/aio/3.12/$(n)/.done)
	$(VENV)/test-3.12/bin/python bench/aio_patch.py --json $(BUILD_DIR)/bench-aio-patch.json $(AIO_MATRIX)

# One new HTTPS connection and a process's first call, stock vs layer (trust.py) vs a one-certificate
# bundle, each at Lambda CPU shares (MEMORY_SIZES) under a cgroup v1 CPU quota (needs root).
.PHONY: bench-connect
bench-connect: $(VENV)/test-3.12/bin/python
	BUILD_DIR=$(BUILD_DIR) $(VENV)/test-3.12/bin/python bench/connect.py

# make test: every suite. The hook suites (one per CPython), test-build and test-compat do not
# depend on each other and mostly wait (sockets, child interpreters, sleeps): they run TEST_JOBS at
# a time, each suite's output printed whole when it ends (make --output-sync; a failing suite's
# traceback stays in one piece). Then test-lab alone: its NAT, freeze and timing tests get the
# machine to themselves. TEST_JOBS=1: one after the other, as before.
TEST_JOBS ?= 3
HOOK_SUITES := $(foreach p,$(PYTHON_MINORS),test-hook-$(p))
.PHONY: test test-hook $(HOOK_SUITES)
test: interpreters
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target $(HOOK_SUITES) test-build test-compat
	@$(MAKE) --no-print-directory test-lab

# $(call run_pytest,SUITE,PYTHON,ARGS), first in a recipe line (variables may precede it): pytest,
# then one line with the suite's exit code and wall time (bash's SECONDS: this line's shell's age).
# pytest's exit code 5 (nothing collected) is a failure. MAKEFLAGS is emptied: a test that runs
# make itself must not inherit this make's -j / jobserver.
run_pytest = MAKEFLAGS= $(2) -m pytest -q -p no:cacheprovider $(3) || rc=$$?; rc=$${rc:-0}; \
  echo "== $(1): exit $$rc after $$SECONDS s"; \
  if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

# Hook tests run once per interpreter (make -jN test-hook: N at a time).
test-hook: $(HOOK_SUITES)
$(HOOK_SUITES): test-hook-%: $(VENV)/test-%/bin/python $(BOTOCORE_DIRS) $(AIO_DIRS)
	@echo "== hook tests on CPython $*"
	@AWS_KEEPALIVE_BOTOCORE_DIRS=$(CURDIR)/$(VENV)/botocore AWS_KEEPALIVE_OLD_PYTHON=$(OLD_PYTHON) \
	  AWS_KEEPALIVE_AIO_DIRS=$(CURDIR)/$(VENV)/aio $(call run_pytest,hook tests on CPython $*,$(VENV)/test-$*/bin/python,tests/hook)

.PHONY: bench
# On every tested CPython (found or installed; the test venvs hold the pinned botocore for the patch
# table); prints the table and writes build/startup.json.
bench: $(foreach p,$(PYTHON_MINORS),$(VENV)/test-$(p)/bin/python)
	$(TOOL_PYTHON) bench/startup.py --json $(BUILD_DIR)/startup.json \
	  $(foreach p,$(PYTHON_MINORS),--python $(VENV)/test-$(p)/bin/python)

# --- layer build, SAM, publish (issue 3) -------------------------------------------------------
# (targets: layer, lint, deploy, publish, test-build)
# The build runs on the tool interpreter with the stdlib only; bytecode is compiled for every
# supported CPython this machine has (the layer's zip serves python3.10 - python3.14).
BUILD_DIR ?= build
LAYER_ZIP := $(BUILD_DIR)/layer.zip
# FLAVOR=hook: the hook alone (no boto3/botocore/urllib3), patching the SDK the function imports.
HOOK_ZIP := $(BUILD_DIR)/layer-hook.zip
FLAVOR ?= full
FLAVOR_ZIP = $(if $(filter hook,$(FLAVOR)),$(HOOK_ZIP),$(LAYER_ZIP))
SERVICES ?=
LAYER_PYTHONS = $(foreach p,$(LAYER_MINORS),$(call need_python,$(p)))
LAYER_NAME ?= $(if $(filter hook,$(FLAVOR)),aws-python-keepalive-hook,aws-python-keepalive)
REGIONS ?= us-east-1
PUBLIC ?= 0
# sam build validates a real python3.X of the example function's runtime (the pyenv shim fails).
SAM_RUNTIME_MINOR := 3.13
SAM_PATH = $(dir $(call need_python,$(SAM_RUNTIME_MINOR))):$(PATH)
SAM := $(VENV)/sam/bin/sam
TOOLS_PY := $(VENV)/tools/bin/python

# Tool venvs, each from its own hash-pinned lock (SAM CLI pins its own boto3, so it lives alone).
$(VENV)/tools/.installed: tools/ruff.txt layer/requirements.txt | $(UV)
	rm -rf $(VENV)/tools
	$(UV) venv -q --python $(TOOL_PYTHON) $(VENV)/tools
	$(UV) pip install -q --python $(TOOLS_PY) --require-hashes -r tools/ruff.txt -r layer/requirements.txt
	touch $@

# SAM CLI, moto; also twine (publish-wheel) and pypiserver (the publish test's local index).
$(VENV)/sam/.installed $(VENV)/moto/.installed $(VENV)/wheel-tools/.installed $(VENV)/pypiserver/.installed: \
  $(VENV)/%/.installed: tools/%.txt | $(UV)
	rm -rf $(VENV)/$*
	$(UV) venv -q --python $(TOOL_PYTHON) $(VENV)/$*
	$(UV) pip install -q --python $(VENV)/$*/bin/python --require-hashes -r tools/$*.txt
	touch $@

# make layer [SERVICES=dynamodb,s3] [FLAVOR=hook]: always rebuilds (it is reproducible) and prints
# sha256 and sizes.
.PHONY: layer
layer: | $(UV)
	$(TOOL_PYTHON) tools/build_layer.py --flavor $(FLAVOR) --uv $(UV) --requirements layer/requirements.txt \
	  --hook layer --work $(BUILD_DIR)/$(basename $(notdir $(FLAVOR_ZIP))) --out $(FLAVOR_ZIP) --services "$(SERVICES)" \
	  $(addprefix --python ,$(LAYER_PYTHONS))

# When missing or older than what goes into it (so test-lab and demo never run a stale hook);
# otherwise publish uses the zip as built (trimmed or not).
$(LAYER_ZIP): $(wildcard layer/*.pth layer/*.start layer/*.py layer/aws_keepalive/*.py) layer/requirements.txt \
  tools/build_layer.py tools/build_wheel.py tools/repro_zip.py tools/layer_info.py
	$(MAKE) --no-print-directory layer FLAVOR=full
$(HOOK_ZIP): $(wildcard layer/*.pth layer/*.start layer/*.py layer/aws_keepalive/*.py) \
  tools/build_layer.py tools/build_wheel.py tools/repro_zip.py tools/layer_info.py
	$(MAKE) --no-print-directory layer FLAVOR=hook SERVICES=

# sam build (BuildMethod: makefile) runs this with ARTIFACTS_DIR set: the same tree as the zip.
.PHONY: build-KeepAliveLayer
build-KeepAliveLayer: layer
	$(TOOL_PYTHON) -m zipfile -e $(LAYER_ZIP) "$(ARTIFACTS_DIR)"
# The hook-only layer (template.yaml's KeepAliveHookLayer): the tree of build/layer-hook.zip.
.PHONY: build-KeepAliveHookLayer
build-KeepAliveHookLayer:
	$(MAKE) --no-print-directory layer FLAVOR=hook SERVICES=
	$(TOOL_PYTHON) -m zipfile -e $(HOOK_ZIP) "$(ARTIFACTS_DIR)"

.PHONY: lint
lint: $(TOOLS_PY) $(SAM)
	$(VENV)/tools/bin/ruff check .
	PATH=$(SAM_PATH) $(SAM) validate --lint

.PHONY: deploy
# make deploy [EXAMPLE=1]: the two layers (full and hook-only), or with the example function and its table.
deploy: $(SAM)
	PATH=$(SAM_PATH) $(SAM) build
	PATH=$(SAM_PATH) $(SAM) deploy $(if $(filter 1,$(EXAMPLE)),--parameter-overrides DeployExample=true)

# make publish REGIONS="us-east-1 eu-west-1" [PUBLIC=1] [LAYER_NAME=...] [FLAVOR=hook]: prints one
# ARN per region (the hook flavor's default name: aws-python-keepalive-hook).
.PHONY: publish
publish: $(TOOLS_PY) $(FLAVOR_ZIP)
	$(TOOLS_PY) tools/publish.py --zip $(FLAVOR_ZIP) --layer-name $(LAYER_NAME) --regions "$(REGIONS)" \
	  $(if $(filter 1,$(PUBLIC)),--public)

$(SAM): $(VENV)/sam/bin/python
$(VENV)/tools/bin/ruff: $(TOOLS_PY)

# Build tests: one interpreter runs them; they use the other interpreters through the layer itself.
.PHONY: test-build
test-build: $(foreach p,$(PYTHON_MINORS),$(VENV)/test-$(p)/bin/python) $(TOOLS_PY) $(SAM) $(VENV)/moto/bin/python
	@AWS_KEEPALIVE_SAM=$(CURDIR)/$(SAM) AWS_KEEPALIVE_MOTO=$(CURDIR)/$(VENV)/moto/bin/moto_server \
	  AWS_KEEPALIVE_SAM_PATH=$(SAM_PATH) \
	  AWS_KEEPALIVE_PYTHONS="$(foreach p,$(PYTHON_MINORS),$(CURDIR)/$(VENV)/test-$(p)/bin/python)" \
	  $(call run_pytest,build tests,$(VENV)/test-3.12/bin/python,tests/build)

# Cold start against the runtime-kind boto3 (the lab's stand-in runtimes, RUNTIME_BOTO3), the full
# layer and the hook flavor read-only: per CPython this machine has, prints the table and writes
# build/coldstart.json; coldstart-parts: where the full layer's gap goes.
# COLDSTART_MEMORY_MB=128: every child at that Lambda memory size's CPU share (default: full CPU).
COLDSTART_MEMORY_MB ?=
# COLDSTART_RUNS: interleaved rounds per CPython (medians; more on a busy machine).
COLDSTART_RUNS ?= 15
.PHONY: coldstart coldstart-parts
coldstart: $(LAYER_ZIP) $(HOOK_ZIP) $(foreach p,$(PYTHON_MINORS),$(VENV)/lambda-$(p)/.lab-lock-sha256)
	PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) bench/coldstart.py --zip $(LAYER_ZIP) --hook-zip $(HOOK_ZIP) \
	  --json $(BUILD_DIR)/coldstart.json \
	  $(foreach p,$(PYTHON_MINORS),--python $(p)=$(call need_python,$(p))) \
	  $(if $(COLDSTART_MEMORY_MB),--memory-mb $(COLDSTART_MEMORY_MB)) --runs $(COLDSTART_RUNS)
coldstart-parts: $(LAYER_ZIP) $(foreach p,$(PYTHON_MINORS),$(VENV)/lambda-$(p)/.lab-lock-sha256)
	PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) bench/coldstart_parts.py --zip $(LAYER_ZIP) --json $(BUILD_DIR)/coldstart-parts.json \
	  $(foreach p,$(PYTHON_MINORS),--python $(p)=$(call need_python,$(p)))

# --- wheel: the hook for container images, bundled dependencies, any Python process (issue 7) ---
# (targets: wheel, publish-wheel, lock-wheel)
# The wheel holds aws_keepalive/ and aws_keepalive.pth only (no boto3/botocore, no sitecustomize);
# tools/build_wheel.py is stdlib only and reproducible, like the layer build.
WHEEL = $(shell $(TOOL_PYTHON) tools/build_wheel.py --hook layer --out-dir $(BUILD_DIR) --print-path)
WHEEL_TOOLS_PY := $(VENV)/wheel-tools/bin/python
PYPISERVER_PY := $(VENV)/pypiserver/bin/python

# make wheel: always rebuilds (it is reproducible) and prints the path, sha256 and size.
.PHONY: wheel publish-wheel lock-wheel
wheel:
	$(TOOL_PYTHON) tools/build_wheel.py --hook layer --out-dir $(BUILD_DIR)

# make publish-wheel INDEX_URL=https://upload.pypi.org/legacy/ TOKEN=... (or INDEX_USER + INDEX_PASSWORD).
publish-wheel: wheel $(WHEEL_TOOLS_PY)
	$(WHEEL_TOOLS_PY) tools/publish_wheel.py --wheel $(WHEEL)

# The wheel tests (tests/build/test_wheel.py, test_publish_wheel.py) get their tools from here; the
# stand-in runtime venv runs the bundled-wheel function.
test-build: $(WHEEL_TOOLS_PY) $(PYPISERVER_PY) $(VENV)/lambda-3.12/.lab-lock-sha256
test-build: export AWS_KEEPALIVE_PYPISERVER := $(CURDIR)/$(VENV)/pypiserver/bin/pypi-server

lock-wheel: | $(UV)
	for n in wheel-tools pypiserver; do $(UV) pip compile -q --universal --python-version 3.12 --generate-hashes \
	  tools/$$n.in -o tools/$$n.txt; done

# --- lab and demo (issue 4) ---------------------------------------------------------------------
# (targets: lab, demo, test-lab)

# What the lab needs besides Python: nftables + conntrack for the kernel NAT (lab/net/nat.py; apt only
# when a command is missing), and DynamoDB Local's jars fetched by mvn into .cache/ (lab/services/dynamodb.py;
# a no-op once fetched). test-lab depends on it; the line below adds it to test-lab's prerequisites.
.PHONY: lab-deps
lab-deps:
	@command -v nft >/dev/null && command -v conntrack >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nftables conntrack >/dev/null; }
	@PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) -m lab.services.dynamodb fetch >/dev/null
test-lab: lab-deps

# The measured keep-alive / NAT timeout relations (prints a table; ~3 min, needs root).
.PHONY: measure-keepalive
measure-keepalive: lab-deps $(VENV)/test-3.12/bin/python
	$(VENV)/test-3.12/bin/python -m lab.experiments.measure_keepalive.run

# What stale-reuse detection and the learned limit add to a request on a reused connection.
.PHONY: bench-reuse
bench-reuse: $(VENV)/test-3.12/bin/python
	BUILD_DIR=$(BUILD_DIR) $(VENV)/test-3.12/bin/python bench/reuse.py

# The learned idle limit end to end (lab/experiments/measure_learn/run.py): NAT 3 s < max idle 8 s, nothing leaving the
# frozen function, reset and silent NATs and learning off; prints the table, writes build/measure-learn.json.
.PHONY: measure-learn
measure-learn: lab-deps $(VENV)/test-3.12/bin/python $(VENV)/lambda-3.12/.lab-lock-sha256 $(LAYER_ZIP)
	BUILD_DIR=$(BUILD_DIR) $(VENV)/test-3.12/bin/python -m lab.experiments.measure_learn.run --layer $(LAYER_ZIP)

# Lambda stand-in runtimes (lab/standin/runtime_prefix.py): one plain CPython prefix per minor (user site
# on, as on the managed runtime; a venv would turn it off) holding awslambdaric and the bundled-kind
# boto3 from lab/runtime-requirements.txt. Made on first use too; this target makes them up front.
# RUNTIME_BOTO3: the bundled-kind boto3 version (lab/runtime-sdk/<v>.txt; default: the newest
# public data point, python3.12's boto3 1.42.97 of Aug 2026). Every lab and coldstart target and
# test reads it from the environment; another version: make lock-runtime-sdk RUNTIME_BOTO3=<v>,
# then e.g. make coldstart RUNTIME_BOTO3=<v> (the stand-ins are rebuilt for it).
RUNTIME_BOTO3 ?= 1.42.97
export AWS_KEEPALIVE_RUNTIME_BOTO3 := $(RUNTIME_BOTO3)
LAB_RUNTIME_VENVS := $(foreach p,$(PYTHON_MINORS),$(VENV)/lambda-$(p)/.lab-lock-sha256)
$(VENV)/lambda-%/.lab-lock-sha256: lab/runtime-requirements.txt lab/standin/runtime_prefix.py FORCE | $(UV)
	PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) -m lab.standin.runtime_prefix $*
# Always asked (a no-op when current): the stamp names the boto3 version, which no file date shows;
# a version without a lock stops there with the command that writes it.
.PHONY: FORCE
FORCE:

.PHONY: lab-runtimes lock-lab
lab-runtimes: $(LAB_RUNTIME_VENVS)
# The hook flavor's build test runs it on every stand-in runtime (tests/build/test_build_layer.py).
test-build: $(LAB_RUNTIME_VENVS)

lock-lab: | $(UV)
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/runtime-requirements.in \
	  -o lab/runtime-requirements.txt
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/runtime-requirements-ric40.in \
	  -o lab/runtime-requirements-ric40.txt
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/otel-requirements.in \
	  -o lab/otel-requirements.txt
	$(MAKE) --no-print-directory lock-runtime-sdk

# lab/runtime-sdk/<RUNTIME_BOTO3>.txt: boto3 at that version with what it pins and the newest of what
# it allows (as pip installs it into a runtime image). 1.34.162.txt, the 2024 baseline, was written
# with urllib3==1.26.20 added, as the lab ran it then.
.PHONY: lock-runtime-sdk
lock-runtime-sdk: | $(UV)
	echo "boto3==$(RUNTIME_BOTO3)" | $(UV) pip compile -q --universal --python-version 3.10 --generate-hashes \
	  --no-header - -o lab/runtime-sdk/$(RUNTIME_BOTO3).txt

# make demo: the README's main command (~2 min, needs root for the NAT namespaces). Not part of
# `make test`. Its venv holds matplotlib + trustme (lab/demo-requirements.txt, constrained by the
# layer's pins) and the layer's boto3; the stand-in runtime venv is made on first use.
DEMO_PY := $(VENV)/demo/bin/python
# MEMORY_MB: the lab functions' Lambda memory size (demo, soak, bench-throughput): their CPU share
# (a cgroup quota, 1769 MB = 1 vCPU) and AWS_LAMBDA_FUNCTION_MEMORY_SIZE. 128: the console's default;
# 0: no quota (the machine's full CPU, as the lab ran before issue 14).
MEMORY_MB ?= 128
$(VENV)/demo/.installed: lab/demo-requirements.txt layer/requirements.txt | $(UV)
	rm -rf $(VENV)/demo
	$(UV) venv -q --python $(TOOL_PYTHON) $(VENV)/demo
	$(UV) pip install -q --python $(DEMO_PY) --require-hashes -r lab/demo-requirements.txt -r layer/requirements.txt
	touch $@

.PHONY: demo lock-demo
# The stand-in runs CPython 3.12 (found or installed, like every minor).
DEMO_MINOR := 3.12
demo: $(LAYER_ZIP) lab-deps $(DEMO_PY) $(VENV)/lambda-$(DEMO_MINOR)/.lab-lock-sha256
	$(DEMO_PY) -m lab.experiments.demo.run --zip $(LAYER_ZIP) --png $(BUILD_DIR)/demo.png --python $(DEMO_MINOR) \
	  --memory-mb $(MEMORY_MB)

lock-demo: | $(UV)
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes -c layer/requirements.txt \
	  lab/demo-requirements.in -o lab/demo-requirements.txt

# What the layer costs a child process (bench/children.py, docs/shapes-lmi.md): start a one-worker
# ProcessPoolExecutor and get its first result, per start method, no layer / switch off / on, on the
# CPythons Managed Instances run (3.13, 3.14); prints the table, writes build/bench-children.json.
.PHONY: bench-children
bench-children:
	$(TOOL_PYTHON) bench/children.py $(foreach p,3.13 3.14,--python $(p)=$(call need_python,$(p))) \
	  --json $(BUILD_DIR)/bench-children.json

# make demo-lmi [LMI_MINOR=3.13] [LMI_VARIANT=ric40]: Lambda Managed Instances (issue 16; ~1 min, root):
# AWS_LAMBDA_MAX_CONCURRENCY=4 never-frozen awslambdaric workers, some idle past the NAT timeout while
# others work, NAT in reset and silent mode, no layer / layer off / on. Prints the table, writes
# build/demo-lmi.json and build/demo-lmi.png. Its one-round version runs in make test
# (tests/lab/experiments/test_demo_lmi.py). LMI_VARIANT=ric40: awslambdaric 4.0.x instead of 4.2.x.
LMI_MINOR ?= 3.13
LMI_VARIANT ?=
.PHONY: demo-lmi
demo-lmi: $(LAYER_ZIP) lab-deps $(DEMO_PY)
	$(DEMO_PY) -m lab.experiments.demo.lmi --zip $(LAYER_ZIP) --png $(BUILD_DIR)/demo-lmi.png --json $(BUILD_DIR)/demo-lmi.json \
	  --python $(LMI_MINOR) $(if $(LMI_VARIANT),--variant $(LMI_VARIANT))

# make soak [DURATION=300] [SEED=n]: the fault soak (issue 10; ~DURATION + 1 min, needs root): no
# layer / layer on / layer on with no packet leaving the frozen env, random gaps, NAT reset/drop,
# TLS front and DynamoDB Local restarts, 1-64 puts over 1-32 threads. Prints the table, writes
# build/soak.json, build/soak-raw.json and build/soak.png. Not part of `make test` (its 60 s
# version is: tests/lab/experiments/test_soak.py).
# AIO=1 adds the aiobotocore variant (two more configurations; the function's task folder is the
# async example's, lab/async-requirements.txt installed by lab/experiments/async_patterns/run.py on first use).
DURATION ?= 300
SEED ?=
AIO ?= 0
.PHONY: soak
soak: $(LAYER_ZIP) lab-deps $(DEMO_PY) $(VENV)/lambda-3.12/.lab-lock-sha256
	$(DEMO_PY) -m lab.experiments.soak.run --zip $(LAYER_ZIP) --duration $(DURATION) $(if $(SEED),--seed $(SEED)) \
	  --memory-mb $(MEMORY_MB) \
	  --json $(BUILD_DIR)/soak.json --raw $(BUILD_DIR)/soak-raw.json --png $(BUILD_DIR)/soak.png \
	  $(if $(filter 1,$(AIO)),--aio)

# Lab tests on one interpreter (the stand-in runs every CPython itself); -rs prints skip reasons.
# pytest's exit code 5 (nothing collected) is a failure.
.PHONY: test-lab
test-lab: $(VENV)/test-3.12/bin/python $(LAB_RUNTIME_VENVS) $(LAYER_ZIP)
	@$(call run_pytest,lab tests,$(VENV)/test-3.12/bin/python,-rs tests/lab)

# --- async clients and throughput (issue 8, parts 3-4) ------------------------------------------
# (targets: measure-async, bench-throughput, lock-async)
# lab/async-requirements.txt pins the newest aiobotocore with the botocore it pins and a matching
# boto3. The stand-in functions bundle it in their task folder (lab/experiments/async_patterns/run.py makes it on
# first use). The throughput bench runs on .venv/bench: lab/bench-requirements.txt (the same
# clients plus trustme for the TLS front). test-lab needs both (the line after lock-async).
BENCH_PY := $(VENV)/bench/bin/python
$(VENV)/bench/.installed: lab/bench-requirements.txt | $(UV)
	rm -rf $(VENV)/bench
	$(UV) venv -q --python $(TOOL_PYTHON) $(VENV)/bench
	$(UV) pip install -q --python $(BENCH_PY) --require-hashes -r lab/bench-requirements.txt
	touch $@

# Client patterns of async functions: new connections per invocation and p50 (prints a table; root).
.PHONY: measure-async
measure-async: lab-deps $(VENV)/test-3.12/bin/python $(VENV)/lambda-3.12/.lab-lock-sha256
	$(VENV)/test-3.12/bin/python -m lab.experiments.async_patterns.run

# Sequential / threads / aiobotocore PutItem throughput against DynamoDB Local over TLS behind Netem;
# writes $(BUILD_DIR)/bench-throughput.json. BENCH_N items, BENCH_RTT_MS, BENCH_CONCURRENCY; the client
# configurations at MEMORY_MB's CPU share (MEMORY_MB=0: full CPU, no quota).
BENCH_N ?= 2000
BENCH_RTT_MS ?= 4
BENCH_CONCURRENCY ?= 32
.PHONY: bench-throughput
bench-throughput: lab-deps $(BENCH_PY)
	$(BENCH_PY) bench/throughput.py --items $(BENCH_N) --rtt-ms $(BENCH_RTT_MS) \
	  --concurrency $(BENCH_CONCURRENCY) --memory-mb $(MEMORY_MB) --json $(BUILD_DIR)/bench-throughput.json

.PHONY: lock-async
lock-async: | $(UV)
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/async-requirements.in \
	  -o lab/async-requirements.txt
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/bench-requirements.in \
	  -o lab/bench-requirements.txt
test-lab: $(BENCH_PY)

# --- compatibility with the observability stack and botocore's own tests (issue 17 part 4) -----
# (targets: test-compat, lock-compat)
# botocore's own unit tests, with the layer on: the PyPI sdist of the layer's pinned botocore
# (tests/compat/botocore-sdist.txt, hash-checked), downloaded by a pinned pip + setuptools
# (tests/compat/sdist-tools.txt: pip prepares an sdist's metadata with setuptools) and unpacked once.
BOTOCORE_SDIST := $(VENV)/botocore-sdist
$(BOTOCORE_SDIST)/.done: tests/compat/botocore-sdist.txt tests/compat/sdist-tools.txt | $(UV)
	rm -rf $(BOTOCORE_SDIST)
	$(UV) venv -q --python $(TOOL_PYTHON) $(BOTOCORE_SDIST)/venv
	$(UV) pip install -q --python $(BOTOCORE_SDIST)/venv/bin/python --require-hashes -r tests/compat/sdist-tools.txt
	$(BOTOCORE_SDIST)/venv/bin/python -m pip download -q --no-deps --no-binary :all: --no-build-isolation \
	  --require-hashes -r tests/compat/botocore-sdist.txt -d $(BOTOCORE_SDIST)
	tar -xzf $(BOTOCORE_SDIST)/botocore-*.tar.gz -C $(BOTOCORE_SDIST)
	touch $@

# The libraries a function runs beside the layer (tests/compat/requirements.txt: X-Ray SDK,
# Powertools, ddtrace, datadog-lambda, sentry-sdk) with the layer's boto3/botocore, installed as a
# function bundles them: one task folder (LAMBDA_TASK_ROOT) the stand-in runtime (lab/standin/lambda_env.py,
# awslambdaric) serves. One interpreter, 3.12: the libraries' behaviour beside the layer does not
# depend on the minor (the hook itself is tested on every minor by test-hook), 3.12 is the one
# every library ships wheels for, and test-lab already makes its runtime prefix.
COMPAT_TASK := $(VENV)/compat-task-3.12
$(COMPAT_TASK)/.done: tests/compat/requirements.txt layer/requirements.txt | $(UV)
	rm -rf $(COMPAT_TASK)
	$(UV) pip install -q --target $(COMPAT_TASK) --python $(call need_python,3.12) --require-hashes \
	  -r tests/compat/requirements.txt -r layer/requirements.txt
	touch $@

.PHONY: test-compat lock-compat
test-compat: $(VENV)/test-3.12/bin/python $(VENV)/lambda-3.12/.lab-lock-sha256 $(COMPAT_TASK)/.done \
  $(BOTOCORE_SDIST)/.done
	@AWS_KEEPALIVE_BOTOCORE_SDIST=$(CURDIR)/$(BOTOCORE_SDIST) AWS_KEEPALIVE_COMPAT_TASK=$(CURDIR)/$(COMPAT_TASK) \
	  $(call run_pytest,compat tests,$(VENV)/test-3.12/bin/python,tests/compat)

lock-compat: | $(UV)
	$(UV) pip compile -q --universal --python-version 3.12 --generate-hashes -c layer/requirements.txt \
	  tests/compat/requirements.in -o tests/compat/requirements.txt
	$(UV) pip compile -q --universal --python-version 3.12 --generate-hashes --no-deps -c layer/requirements.txt \
	  --no-binary botocore tests/compat/botocore-sdist.in -o tests/compat/botocore-sdist.txt
	$(UV) pip compile -q --universal --python-version 3.12 --generate-hashes tests/compat/sdist-tools.in \
	  -o tests/compat/sdist-tools.txt

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
	$(MAKE) --no-print-directory lock-lab lock-demo lock-wheel lock-async lock-aio lock-compat

.PHONY: clean
clean:
	rm -rf build $(VENV)
	rm -rf .aws-sam
