# The lab's experiments (issue 4 and after): demo, demo-lmi, demo-longcall, soak, measure-*; what the lab needs
# (lab-deps) and the Lambda stand-in runtimes. Each prints its table and writes JSON under build/.
# (targets: lab-deps, lab-runtimes, demo, demo-lmi, demo-longcall, soak, measure-keepalive, measure-learn, measure-async)

# What the lab needs besides Python: nftables + conntrack for the kernel NAT (lab/net/nat.py; apt only
# when a command is missing), and DynamoDB Local's jars fetched by mvn into .cache/ (lab/services/dynamodb.py;
# a no-op once fetched). test-lab depends on it (mk/test.mk).
.PHONY: lab-deps
lab-deps:
	@command -v nft >/dev/null && command -v conntrack >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nftables conntrack >/dev/null; }
	@PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) -m lab.services.dynamodb fetch >/dev/null

# The measured keep-alive / NAT timeout relations (prints a table; ~3 min, needs root).
.PHONY: measure-keepalive
measure-keepalive: lab-deps $(VENV)/test-3.12/bin/python
	$(VENV)/test-3.12/bin/python -m lab.experiments.measure_keepalive.run

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

.PHONY: lab-runtimes
lab-runtimes: $(LAB_RUNTIME_VENVS)

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

.PHONY: demo
# The stand-in runs CPython 3.12 (found or installed, like every minor).
DEMO_MINOR := 3.12
demo: $(LAYER_ZIP) lab-deps $(DEMO_PY) $(VENV)/lambda-$(DEMO_MINOR)/.lab-lock-sha256
	$(DEMO_PY) -m lab.experiments.demo.run --zip $(LAYER_ZIP) --png $(BUILD_DIR)/demo.png --python $(DEMO_MINOR) \
	  --memory-mb $(MEMORY_MB)

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

# Async clients (issue 8, parts 3-4).
# lab/async-requirements.txt pins the newest aiobotocore with the botocore it pins and a matching
# boto3. The stand-in functions bundle it in their task folder (lab/experiments/async_patterns/run.py makes it on
# first use). The throughput bench runs on .venv/bench: lab/bench-requirements.txt (the same
# clients plus trustme for the TLS front). test-lab needs both (mk/test.mk); bench-throughput
# (mk/bench.mk) runs on it.
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

# make demo-durable [DURABLE_ROUNDS=3]: Lambda durable functions (issue 25; ~3.5 min, root): a real
# durable function (aws-durable-execution-sdk-python, bundled with its boto3 in the task folder as
# sam build does) on the CPython 3.13 and 3.14 stand-ins, AWS's local runner (dex-local-runner) as
# the durable service, the checkpoint traffic through the NAT in reset and silent mode, waits longer
# than the scaled NAT timeout; no layer / BOTOCORE_TCP_KEEPALIVE / layer on / layer on with the
# user's boto3_client= / layer on with nothing leaving the frozen env. Prints the table, writes
# build/demo-durable.json and build/demo-durable.png. Its one-wait version runs in make test
# (tests/lab/experiments/test_demo_durable.py). .venv/durable: the runner + plot + TLS front
# (lab/experiments/durable/runner-requirements.txt); .venv/durable-task: the function's packages
# (function-requirements.txt, pip install --target; pure Python, one folder for both minors).
DURABLE_PY := $(VENV)/durable/bin/python
DURABLE_TASK := $(VENV)/durable-task
DURABLE_ROUNDS ?= 3
$(VENV)/durable/.installed: lab/experiments/durable/runner-requirements.txt | $(UV)
	rm -rf $(VENV)/durable
	$(UV) venv -q --python $(TOOL_PYTHON) $(VENV)/durable
	$(UV) pip install -q --python $(DURABLE_PY) --require-hashes -r lab/experiments/durable/runner-requirements.txt
	touch $@
$(DURABLE_TASK)/.installed: lab/experiments/durable/function-requirements.txt | $(UV)
	rm -rf $(DURABLE_TASK)
	$(UV) pip install -q --target $(DURABLE_TASK) --python $(call need_python,3.13) --require-hashes \
	  -r lab/experiments/durable/function-requirements.txt
	touch $@

.PHONY: demo-durable
demo-durable: $(LAYER_ZIP) lab-deps $(DURABLE_PY) $(DURABLE_TASK)/.installed \
  $(VENV)/lambda-3.13/.lab-lock-sha256 $(VENV)/lambda-3.14/.lab-lock-sha256
	$(DURABLE_PY) -m lab.experiments.durable.run --zip $(LAYER_ZIP) --deps $(DURABLE_TASK) --memory-mb $(MEMORY_MB) \
	  --rounds $(DURABLE_ROUNDS) --json $(BUILD_DIR)/demo-durable.json --png $(BUILD_DIR)/demo-durable.png

# AWS's Runtime Interface Emulator (the one sam local and the Lambda base images use), built from
# source through the Go module proxy at a pinned version (go.sum checked), into .venv/rie/bin. The
# lab's stand-in Runtime API and the durable service's Invoke endpoint are checked against it
# (tests/lab/standin/test_rie.py, in test-lab). It serves Invoke for one function and never freezes
# it, which is why the experiments keep the stand-in.
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
RIE := $(VENV)/rie/bin/aws-lambda-rie
$(RIE):
	GOPATH=$(CURDIR)/$(VENV)/rie GOFLAGS=-modcacherw GOTOOLCHAIN=local \
	  go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)

# make demo-longcall [LONGCALL_NAT=5]: a long synchronous Invoke through the NAT (issue 37; root): the
# callee answers after the scaled 400 s, the NAT forgets an idle flow after the scaled 350 s; stock
# botocore with AWS's advice (read_timeout above the callee's duration, tcp_keepalive=True), with
# BOTOCORE_TCP_KEEPALIVE=true and with total_max_attempts=1; the layer's full and hook flavors;
# aiobotocore stock and with the layer; a Managed Instances caller (2 workers, never frozen) stock
# and with the layer, also holding a 5 400 s call; NAT in reset and silent-drop mode, every cell at
# once in its own namespaces. Prints the table (outcome, time, requests the callee received), writes
# build/longcall.json (~2 min). LONGCALL_NAT=350: AWS's scale (350 s NAT, 400 s answer, the layer's
# shipped timers, ~14 min; the 5 400 s calls left out), build/longcall-350.json. Its short version
# runs in make test (tests/lab/experiments/test_longcall.py).
LONGCALL_NAT ?= 5
.PHONY: demo-longcall
demo-longcall: $(LAYER_ZIP) $(HOOK_ZIP) lab-deps $(DEMO_PY) $(VENV)/lambda-3.12/.lab-lock-sha256 \
  $(VENV)/lambda-3.13/.lab-lock-sha256
	$(DEMO_PY) -m lab.experiments.longcall.run --zip $(LAYER_ZIP) --hook-zip $(HOOK_ZIP) --nat-timeout $(LONGCALL_NAT)
