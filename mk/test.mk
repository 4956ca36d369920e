# The test suites: make test runs them all (what CI runs).
# (targets: test, test-hook, test-hook-<minor>, test-build, test-lab, test-compat, test-twin)

# make test: every suite. The hook suites (one per CPython), test-build and test-compat do not
# depend on each other and mostly wait (sockets, child interpreters, sleeps): they run TEST_JOBS at
# a time, each suite's output printed whole when it ends (make --output-sync; a failing suite's
# traceback stays in one piece). make starts goals in the order given: the longest suite,
# test-build, first (named after the hook suites, it started only when the first of them ended and
# then ran on alone), and everything test-lab needs (test-lab-deps: its venvs, DynamoDB Local, the
# layer zip) is made in this first phase too, beside the suites. Then test-lab alone: its NAT,
# freeze and timing tests get the machine to themselves. TEST_JOBS=1: one after the other.
# Why 6: a hook suite computes a quarter of its wall time (2 min of CPU in 7.5 min), so 3 at a time
# left a 2-core machine half idle; with 6, a fresh clone's make test took 18.9 min, every suite
# passing (2026-11-28, CI=true bash .ci/run, load 3-6; each suite's own closing line gives its CPU).
# TEST_SUITES: the suites make test runs, all of them by default. Only the release rehearsal names fewer
# (make rehearse-release runs the release workflow's Test step, `sudo ... make test`, as written, with
# REHEARSAL_TEST_SUITES as TEST_SUITES in its environment: by default a suite's venv only, so that the step's
# sudo, HOME, interpreters and caches are exercised for real in minutes; mk/release.mk).
TEST_JOBS ?= 6
HOOK_SUITES := $(foreach p,$(PYTHON_MINORS),test-hook-$(p))
TEST_SUITES ?= test-build test-compat test-twin $(HOOK_SUITES) test-lab
.PHONY: test test-hook $(HOOK_SUITES) test-lab-deps
test: interpreters
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target $(patsubst test-lab,test-lab-deps,$(TEST_SUITES))
	@$(if $(filter test-lab,$(TEST_SUITES)),$(MAKE) --no-print-directory test-lab,true)

# $(call run_pytest,SUITE,PYTHON,ARGS), first in a recipe line (variables may precede it): pytest,
# then one line with the suite's exit code, wall time (bash's SECONDS: this line's shell's age) and
# CPU time, user and system, of pytest and every process it waited for (bash's times, written to a
# file: in a pipe or $(...) it would count a subshell's children). CPU time is what to compare
# between runs on a loaded machine; wall time is what CI waits. pytest's exit code 5 (nothing
# collected) is a failure. MAKEFLAGS is emptied: a test that runs make itself must not inherit this
# make's -j / jobserver.
run_pytest = MAKEFLAGS= $(2) -m pytest -q -p no:cacheprovider $(3) || rc=$$?; rc=$${rc:-0}; \
  cpu=$$(mktemp); times >$$cpu; \
  echo "== $(1): exit $$rc after $$SECONDS s, CPU $$(tail -n1 $$cpu) (user, system)"; rm -f $$cpu; \
  if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

# Hook tests run once per interpreter (make -jN test-hook: N at a time).
test-hook: $(HOOK_SUITES)
$(HOOK_SUITES): test-hook-%: $(VENV)/test-%/bin/python $(BOTOCORE_DIRS) $(AIO_DIRS)
	@echo "== hook tests on CPython $*"
	@AWS_KEEPALIVE_BOTOCORE_DIRS=$(CURDIR)/$(VENV)/botocore AWS_KEEPALIVE_OLD_PYTHON=$(OLD_PYTHON) \
	  AWS_KEEPALIVE_AIO_DIRS=$(CURDIR)/$(VENV)/aio $(call run_pytest,hook tests on CPython $*,$(VENV)/test-$*/bin/python,tests/hook)

# Build tests: one interpreter runs them; they use the other interpreters through the layer itself.
# Two pytest processes side by side, each suite's output printed whole after both end: the tests
# of the built zips and the release (the session's one full, trimmed and hook build and its one
# release are shared by tests/build/conftest.py's fixtures, so they all run in one process), and
# the tests of the tools around them, which build no shared zip (BUILD_TOOL_TESTS). test-build is
# make test's longest suite and mostly computes: one process left a core idle.  A new test file
# runs with the zips' tests unless named here.
BUILD_TOOL_TESTS := $(addprefix tests/build/,test_attach.py test_bump_pr.py test_bump_sdk.py test_ca_dir.py test_docs_commands.py \
  test_find_python.py test_install_python.py test_layers_table.py test_publish_wheel.py test_rehearse.py \
  test_sdk_defaults.py test_template.py test_tls_probe.py test_workflow.py)
.PHONY: test-build
test-build: $(foreach p,$(PYTHON_MINORS),$(VENV)/test-$(p)/bin/python) $(TOOLS_PY) $(SAM) $(VENV)/moto/bin/python
	@export AWS_KEEPALIVE_SAM=$(CURDIR)/$(SAM) AWS_KEEPALIVE_MOTO=$(CURDIR)/$(VENV)/moto/bin/moto_server \
	  AWS_KEEPALIVE_SAM_PATH=$(SAM_PATH) \
	  AWS_KEEPALIVE_PYTHONS="$(foreach p,$(PYTHON_MINORS),$(CURDIR)/$(VENV)/test-$(p)/bin/python)"; \
	out=$$(mktemp -d); \
	( $(call run_pytest,build tests (zips and release),$(VENV)/test-3.12/bin/python,tests/build \
	    $(addprefix --ignore=,$(BUILD_TOOL_TESTS))) ) >$$out/zips 2>&1 & zips=$$!; \
	( $(call run_pytest,build tests (tools),$(VENV)/test-3.12/bin/python,$(BUILD_TOOL_TESTS)) ) >$$out/tools 2>&1 & \
	tools=$$!; wait $$zips || rc=1; wait $$tools || rc=1; cat $$out/zips $$out/tools; times >$$out/cpu; \
	echo "== build tests: exit $${rc:-0} after $$SECONDS s, CPU $$(tail -n1 $$out/cpu) (user, system)"; \
	rm -rf $$out; exit $${rc:-0}

# The wheel tests (tests/build/test_wheel.py, test_publish_wheel.py) get their tools from here; the
# stand-in runtime venv runs the bundled-wheel function.
test-build: $(WHEEL_TOOLS_PY) $(PYPISERVER_PY) $(VENV)/lambda-3.12/.lab-lock-sha256
test-build: export AWS_KEEPALIVE_PYPISERVER := $(CURDIR)/$(VENV)/pypiserver/bin/pypi-server

# The hook flavor's build test runs it on every stand-in runtime (tests/build/test_build_layer.py).
test-build: $(LAB_RUNTIME_VENVS)

# tests/build/test_docs_commands.py runs the documented commands in zsh, macOS's shell (Debian's
# package; apt only when it is missing).
.PHONY: zsh
zsh:
	@command -v zsh >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zsh >/dev/null; }
test-build: zsh

# Lab tests on one interpreter (the stand-in runs every CPython itself); -rs prints skip reasons.
# pytest's exit code 5 (nothing collected) is a failure.
# test-lab-deps: everything the lab tests need (make test makes it beside the other suites).
.PHONY: test-lab
test-lab: test-lab-deps
	@$(call run_pytest,lab tests,$(VENV)/test-3.12/bin/python,-rs tests/lab)
test-lab-deps: $(VENV)/test-3.12/bin/python $(LAB_RUNTIME_VENVS) $(LAYER_ZIP)
# What the lab needs besides Python (lab-deps, mk/lab.mk) and the throughput bench's venv.
test-lab-deps: lab-deps
test-lab-deps: $(BENCH_PY)
# The durable-function test's runner venv and function packages (mk/lab.mk, demo-durable).
test-lab-deps: $(DURABLE_PY) $(DURABLE_TASK)/.installed
# AWS's Runtime Interface Emulator, which the stand-in is checked against (mk/lab.mk).
test-lab-deps: $(RIE)
# tests/lab/test_soak_memory.py runs bench/soak_memory.py small, with the 3.12 aioboto3 folder.
test-lab-deps: $(VENV)/aio/3.12/aioboto3-15.5.0/.done

# --- compatibility with the observability stack and botocore's own tests (issue 17 part 4) -----
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

.PHONY: test-compat
# tests/compat/test_patched_sdk_instrumentation.py runs ddtrace and OpenTelemetry on the full layer's
# patched SDK (build/layer.zip).
test-compat: $(VENV)/test-3.12/bin/python $(VENV)/lambda-3.12/.lab-lock-sha256 $(COMPAT_TASK)/.done \
  $(BOTOCORE_SDIST)/.done $(LAYER_ZIP)
	@AWS_KEEPALIVE_BOTOCORE_SDIST=$(CURDIR)/$(BOTOCORE_SDIST) AWS_KEEPALIVE_COMPAT_TASK=$(CURDIR)/$(COMPAT_TASK) \
	  AWS_KEEPALIVE_LAYER_ZIP=$(CURDIR)/$(LAYER_ZIP) \
	  $(call run_pytest,compat tests,$(VENV)/test-3.12/bin/python,tests/compat)

# --- the SDK's own suites on the full layer's patched tree (issue 36) -------------------------------
# make test-upstream: botocore's and s3transfer's unit and functional suites (their PyPI sdists at the
# pinned versions, tests/upstream/sdists.txt, hash-checked) and boto3's (its sdist has no tests:
# BOTO3_SOURCE=<a checkout of boto/boto3 at the pinned tag>, which the release workflow gives; without
# it that test skips, saying so, unless REQUIRE_BOTO3_SUITE=1) run against build/layer.zip's python/
# folder, where layer/patches/ are applied (tests/upstream/test_upstream_suites.py). Not part of make
# test (~20 min here: botocore's functional suite alone is ~59 000 tests; boto3's, when given, 15 min
# more); every release (the release workflow's build job) and every SDK bump
# (tools/release/bump_sdk.py's suites) runs it first.
UPSTREAM_SDISTS := $(VENV)/upstream-sdists
BOTO3_SOURCE ?=
REQUIRE_BOTO3_SUITE ?=
$(UPSTREAM_SDISTS)/.done: tests/upstream/sdists.txt tests/compat/sdist-tools.txt | $(UV)
	rm -rf $(UPSTREAM_SDISTS)
	$(UV) venv -q --python $(TOOL_PYTHON) $(UPSTREAM_SDISTS)/venv
	$(UV) pip install -q --python $(UPSTREAM_SDISTS)/venv/bin/python --require-hashes -r tests/compat/sdist-tools.txt
	$(UPSTREAM_SDISTS)/venv/bin/python -m pip download -q --no-deps --no-binary :all: --no-build-isolation \
	  --require-hashes -r tests/upstream/sdists.txt -d $(UPSTREAM_SDISTS)
	for archive in $(UPSTREAM_SDISTS)/*.tar.gz; do tar -xzf $$archive -C $(UPSTREAM_SDISTS); done
	touch $@

.PHONY: test-upstream
test-upstream: $(VENV)/test-3.12/bin/python $(UPSTREAM_SDISTS)/.done $(LAYER_ZIP)
	@AWS_KEEPALIVE_UPSTREAM_SDISTS=$(CURDIR)/$(UPSTREAM_SDISTS) AWS_KEEPALIVE_LAYER_ZIP=$(CURDIR)/$(LAYER_ZIP) \
	  AWS_KEEPALIVE_BOTO3_SOURCE=$(if $(BOTO3_SOURCE),$(abspath $(BOTO3_SOURCE))) \
	  AWS_KEEPALIVE_REQUIRE_BOTO3_SUITE=$(REQUIRE_BOTO3_SUITE) \
	  $(call run_pytest,upstream suites on the patched SDK,$(VENV)/test-3.12/bin/python,-rs -s tests/upstream)

# --- the stock twin (issue 34): every scenario with the layer off and on, compared -------------
# tests/twin: two fresh stand-in runtime interpreters per case (the lab's CPython 3.12 prefix with the
# runtime's bundled boto3), the layer activated by the runtime's own startup steps; docs/twin.md.
# What the runs import besides the prefix: the full layer's pinned SDK (as the layer build installs
# it) and the libraries the twin's function bundles (tests/twin/requirements.txt: truststore).
TWIN_DIR := $(VENV)/twin
# layer-sdk: the pinned wheels as PyPI ships them (the stock twin's SDK); layer-sdk-patched: the same with
# layer/patches/ applied as the layer build applies them (tools/packaging/patches.py), the layer twin's
# SDK: what the full layer ships. Both fresh from the index (hash-checked wheels), copied, not linked:
# uv's cache holds unpacked files that any tree linked to them shares, and one that was patched in place
# (seen here, 2026-11-28: all nine files layer/patches/ changes) would make both twins patched.
$(TWIN_DIR)/layer-sdk/.done: layer/requirements.txt | $(UV)
	rm -rf $(TWIN_DIR)/layer-sdk
	$(UV) pip install -q --no-cache --link-mode copy --target $(TWIN_DIR)/layer-sdk --python $(call need_python,3.12) \
	  --require-hashes --no-deps -r layer/requirements.txt
	touch $@
$(TWIN_DIR)/layer-sdk-patched/.done: layer/requirements.txt $(wildcard layer/patches/*/*.patch) tools/packaging/patches.py \
  | $(UV)
	rm -rf $(TWIN_DIR)/layer-sdk-patched
	$(UV) pip install -q --no-cache --link-mode copy --target $(TWIN_DIR)/layer-sdk-patched \
	  --python $(call need_python,3.12) --require-hashes --no-deps -r layer/requirements.txt
	PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) -c "import sys; from tools.packaging import patches; \
	  print('\n'.join(p['distribution'] + '/' + p['name'] for p in patches.apply_all(sys.argv[1])))" \
	  $(TWIN_DIR)/layer-sdk-patched > $(TWIN_DIR)/layer-sdk-patched/.applied
	touch $@
$(TWIN_DIR)/function-libs/.done: tests/twin/requirements.txt | $(UV)
	rm -rf $(TWIN_DIR)/function-libs
	$(UV) pip install -q --target $(TWIN_DIR)/function-libs --python $(call need_python,3.12) --require-hashes \
	  --no-deps -r tests/twin/requirements.txt
	touch $@

# The session's layer folders get hashed CA directories (tools/packaging/ca_dir.py: the openssl command).
.PHONY: test-twin
test-twin: $(VENV)/test-3.12/bin/python $(VENV)/lambda-3.12/.lab-lock-sha256 $(TWIN_DIR)/layer-sdk/.done \
  $(TWIN_DIR)/layer-sdk-patched/.done $(TWIN_DIR)/function-libs/.done $(VENV)/aio/3.12/aiobotocore-3.10.0/.done \
  $(VENV)/moto/bin/python
	@command -v openssl >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null; }
	@AWS_KEEPALIVE_TWIN_PYTHON=$(CURDIR)/$(VENV)/lambda-3.12/bin/python \
	  AWS_KEEPALIVE_TWIN_LAYER_SDK=$(CURDIR)/$(TWIN_DIR)/layer-sdk AWS_KEEPALIVE_TWIN_LIBS=$(CURDIR)/$(TWIN_DIR)/function-libs \
	  AWS_KEEPALIVE_TWIN_LAYER_SDK_PATCHED=$(CURDIR)/$(TWIN_DIR)/layer-sdk-patched \
	  AWS_KEEPALIVE_MOTO=$(CURDIR)/$(VENV)/moto/bin/moto_server \
	  AWS_KEEPALIVE_AIO_DIRS=$(CURDIR)/$(VENV)/aio \
	  $(call run_pytest,stock twin,$(VENV)/test-3.12/bin/python,tests/twin)
