# aws-python-keepalive: every target installs what it needs on first use (venvs under .venv/).
# Shell only for glue: the logic lives in Python under layer/, tests/, tools/, bench/ and lab/.
# This file holds what every area shares; the rules live by area under mk/ (`make help` lists them):
#   mk/python.mk   interpreters, the uv bootstrap, venvs, the botocore / aiobotocore matrix folders
#   mk/layer.mk    the layer (full and hook flavor), SAM build/deploy, the wheel
#   mk/release.mk  the release files, publishing the layers and the wheel, the region list
#   mk/lab.mk      the lab: demo, demo-lmi, demo-longcall, soak, measure-*, the Lambda stand-in runtimes
#   mk/bench.mk    benchmarks: bench-*, coldstart*
#   mk/test.mk     the test suites (make test: all of them, what CI runs)
#   mk/lock.mk     regenerating the hash-pinned requirements files
# They are included in that order: a variable a rule's prerequisites name is defined by an earlier
# file (or here), since make expands prerequisites as it reads them.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# CPython minors: the layer supports, and tests and the lab run on, 3.10 - 3.14; 3.9 runs the
# oldest botocore versions of the matrix. How each is found or installed: mk/python.mk.
PYTHON_MINORS := 3.10 3.11 3.12 3.13 3.14
LAYER_MINORS := 3.10 3.11 3.12 3.13 3.14
NEEDED_MINORS := 3.9 $(LAYER_MINORS)

VENV := .venv
UV := $(VENV)/uv/bin/uv
BUILD_DIR ?= build
# Registries are reached through the machine's CA bundle (a TLS-inspecting proxy may sit in between).
export UV_NATIVE_TLS := 1
export UV_NO_PROGRESS := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export SAM_CLI_TELEMETRY := 0

include mk/python.mk mk/layer.mk mk/release.mk mk/lab.mk mk/bench.mk mk/test.mk mk/lock.mk

.PHONY: help
help:
	@echo "Use the layer (each installs what it needs on first use):"
	@echo "  make layer          build/layer.zip (SERVICES=dynamodb,s3: trimmed; FLAVOR=hook: build/layer-hook.zip, no SDK)"
	@echo "  make wheel          build/aws_python_keepalive-<version>-py3-none-any.whl (container images, bundles)"
	@echo "  make deploy         sam build + sam deploy (EXAMPLE=1: with the example function)"
	@echo "  make release        build/release/: both layer zips, the wheel, SBOMs, SHA256SUMS (reproducible)"
	@echo "  make publish        the release's layers into each region: REGIONS=\"us-east-1 ...\"|all FLAVOR=full|hook|all PUBLIC=1"
	@echo "  make verify-aws     the demo's experiment in your own AWS account (REGION, VPC=1), then the stack deleted"
	@echo "  make publish-wheel  upload the wheel to INDEX_URL with TOKEN (or INDEX_USER/INDEX_PASSWORD)"
	@echo "  make test           every test suite (what CI runs)"
	@echo "Work on it (what each does and its knobs: the comment above its rule in mk/<area>.mk):"
	@echo "  python   interpreters (CPython $(NEEDED_MINORS): found or installed, one line each)"
	@echo "  test     test-hook test-hook-<minor> test-build test-lab test-compat test-twin"
	@echo "  lab      demo demo-lmi demo-durable demo-longcall soak measure-keepalive measure-learn measure-async lab-deps lab-runtimes"
	@echo "  bench    bench bench-aio bench-connect bench-tls-resume bench-reuse bench-children bench-throughput coldstart coldstart-parts coldstart-unknown bench-client soak-memory bench-patches"
	@echo "  docs     render the measured tables in README and docs/ from the benchmarks' JSON (docs/numbers.md)"
	@echo "  sdk-defaults  the table of defaults the full layer's SDK changes against the runtimes' (docs/build.md)"
	@echo "  release  regions bench-publish actionlint rehearse-release smoke-release lock-serverless"
	@echo "  lock     bump-sdk lock lock-aio lock-async lock-compat lock-demo lock-durable lock-lab lock-runtime-sdk lock-wheel"
	@echo "  other    lint (ruff, sam validate --lint)  clean (build outputs and venvs)"

.PHONY: lint
lint: $(TOOLS_PY) $(SAM) actionlint
	$(VENV)/tools/bin/ruff check .
	PATH=$(SAM_PATH) $(SAM) validate --lint

.PHONY: clean
clean:
	rm -rf build $(VENV)
	rm -rf .aws-sam
