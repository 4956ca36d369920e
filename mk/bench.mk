# Benchmarks: each prints its table and writes the same rows as JSON under build/.
# (targets: bench, bench-aio, bench-connect, bench-tls-resume, bench-reuse, bench-children, bench-throughput, coldstart,
# coldstart-parts, bench-client, soak-memory, bench-patches; docs renders their JSON into README and docs/)

.PHONY: bench
# On every tested CPython (found or installed; the test venvs hold the pinned botocore for the patch
# table); prints the table and writes build/startup.json.
bench: $(foreach p,$(PYTHON_MINORS),$(VENV)/test-$(p)/bin/python)
	$(TOOL_PYTHON) bench/startup.py --json $(BUILD_DIR)/startup.json \
	  $(foreach p,$(PYTHON_MINORS),--python $(VENV)/test-$(p)/bin/python)

# What patching aiobotocore costs (once, when the function imports it); numbers for docs/async.md.
.PHONY: bench-aio
bench-aio: $(VENV)/test-3.12/bin/python $(foreach n,$(AIO_MATRIX),$(VENV)/aio/3.12/$(n)/.done)
	$(VENV)/test-3.12/bin/python bench/aio_patch.py --json $(BUILD_DIR)/bench-aio-patch.json $(AIO_MATRIX)

# One new HTTPS connection and a process's first call, stock vs layer (trust.py) vs a one-certificate
# bundle, each at Lambda CPU shares (MEMORY_SIZES) under a cgroup v1 CPU quota (needs root).
.PHONY: bench-connect
bench-connect: $(VENV)/test-3.12/bin/python
	BUILD_DIR=$(BUILD_DIR) $(VENV)/test-3.12/bin/python bench/connect.py

# The replacement handshake, full vs TLS session resumed (resume.py), TLS 1.3 and 1.2, 3-certificate
# chain, at Lambda CPU shares (MEMORY_SIZES) under a cgroup v1 CPU quota (needs root).
.PHONY: bench-tls-resume
bench-tls-resume: $(VENV)/test-3.12/bin/python
	BUILD_DIR=$(BUILD_DIR) $(VENV)/test-3.12/bin/python bench/tls_resume.py

# What stale-reuse detection and the learned limit add to a request on a reused connection.
.PHONY: bench-reuse
bench-reuse: $(VENV)/test-3.12/bin/python
	BUILD_DIR=$(BUILD_DIR) $(VENV)/test-3.12/bin/python bench/reuse.py

# What the layer costs a child process (bench/children.py, docs/shapes-lmi.md): start a one-worker
# ProcessPoolExecutor and get its first result, per start method, no layer / switch off / on, on the
# CPythons Managed Instances run (3.13, 3.14); prints the table, writes build/bench-children.json.
.PHONY: bench-children
bench-children:
	$(TOOL_PYTHON) bench/children.py $(foreach p,3.13 3.14,--python $(p)=$(call need_python,$(p))) \
	  --json $(BUILD_DIR)/bench-children.json

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

# Cold start to the first HTTPS response (bench/coldstart.py, docs/coldstart.md): the runtime-kind
# boto3 (RUNTIME_BOTO3, twice: two equal columns give the run's noise), the full layer and the hook
# flavor, each a fresh stand-in runtime whose awslambdaric imports the handler (the real call depth),
# read-only, page cache dropped before each run, each at a Lambda memory size's CPU share (cgroup
# quota: root); prints the table and writes build/coldstart.json. coldstart-parts: its imports
# (-X importtime) and what the layer cuts.
# COLDSTART_MEMORY_MB: the memory sizes; COLDSTART_MINORS: the CPythons (what the goals name);
# COLDSTART_RUNS: interleaved rounds after one warm-up (medians); 5 take ~15 min here at load 8.
COLDSTART_MEMORY_MB ?= 128 512 1769
COLDSTART_MINORS ?= 3.12 3.14
COLDSTART_RUNS ?= 5
COLDSTART_JSON ?= $(BUILD_DIR)/coldstart.json
.PHONY: coldstart coldstart-parts coldstart-unknown coldstart-gc
coldstart: $(LAYER_ZIP) $(HOOK_ZIP) $(VENV)/test-3.12/bin/python \
  $(foreach p,$(COLDSTART_MINORS),$(VENV)/lambda-$(p)/.lab-lock-sha256)
	PYTHONPATH=$(CURDIR) $(VENV)/test-3.12/bin/python bench/coldstart.py --zip $(LAYER_ZIP) --hook-zip $(HOOK_ZIP) \
	  --json $(COLDSTART_JSON) \
	  $(foreach p,$(COLDSTART_MINORS),--python $(p)=$(call need_python,$(p))) \
	  $(foreach m,$(COLDSTART_MEMORY_MB),--memory-mb $(m)) --runs $(COLDSTART_RUNS) \
	  $(foreach c,$(COLDSTART_COLUMNS),--column $(c))
# make coldstart-unknown: the same with the runtime's copy at a release the hook flavor has no prepared
# data for (UNKNOWN_RUNTIME_BOTO3, locked in lab/runtime-sdk/unknown/), at 128 MB: what every runtime
# release outside lab/runtime-sdk gets; build/coldstart-unknown.json (README's cold-start row).
UNKNOWN_RUNTIME_BOTO3 ?= 1.41.5
coldstart-unknown:
	$(MAKE) --no-print-directory coldstart RUNTIME_BOTO3=$(UNKNOWN_RUNTIME_BOTO3) COLDSTART_MEMORY_MB=128 \
	  COLDSTART_JSON=$(BUILD_DIR)/coldstart-unknown.json
# make coldstart-gc: the same with each layer column also measured with AWS_PYTHON_KEEPALIVE_GC_INIT=1
# (gcinit.py), side by side, at COLDSTART_GC_MB; build/coldstart-gc.json (docs/coldstart.md).
COLDSTART_GC_MB ?= 128
coldstart-gc:
	$(MAKE) --no-print-directory coldstart COLDSTART_MEMORY_MB="$(COLDSTART_GC_MB)" \
	  COLDSTART_JSON=$(BUILD_DIR)/coldstart-gc.json COLDSTART_COLUMNS="hook_gc=hook_layer,AWS_PYTHON_KEEPALIVE_GC_INIT=1 \
	  layer_gc=layer,AWS_PYTHON_KEEPALIVE_GC_INIT=1"
# COLDSTART_PARTS_MB: the one memory size coldstart-parts measures at (128: where imports weigh most).
COLDSTART_PARTS_MB ?= 128
coldstart-parts: $(LAYER_ZIP) $(HOOK_ZIP) $(VENV)/test-3.12/bin/python \
  $(foreach p,$(COLDSTART_MINORS),$(VENV)/lambda-$(p)/.lab-lock-sha256)
	PYTHONPATH=$(CURDIR) $(VENV)/test-3.12/bin/python bench/coldstart_parts.py --zip $(LAYER_ZIP) \
	  --hook-zip $(HOOK_ZIP) --json $(BUILD_DIR)/coldstart-parts.json --memory-mb $(COLDSTART_PARTS_MB) \
	  $(foreach p,$(COLDSTART_MINORS),--python $(p)=$(call need_python,$(p)))

# The first DynamoDB / S3 client of a process, full layer on, with and without its prepared data
# (layer/aws_keepalive/prepared.py), at CLIENT_MEMORY_MB's CPU shares, warm and cold page cache (the
# cold rows need root); prints the table and writes build/bench-client.json.
CLIENT_MEMORY_MB ?= 128 1769
CLIENT_RUNS ?= 5
.PHONY: bench-client
bench-client: $(LAYER_ZIP)
	PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) bench/client_creation.py --zip $(LAYER_ZIP) --python $(TOOL_PYTHON) \
	  $(foreach m,$(CLIENT_MEMORY_MB),--memory-mb $(m)) --runs $(CLIENT_RUNS) --json $(BUILD_DIR)/bench-client.json

# Render the measured tables in README.md and docs/ (tools/docs/render_docs.py, docs/numbers.md): each
# benchmark's build/*.json measured later than its docs/data/ copy is taken into docs/data/ (with the
# demo's plot), then every <!-- rendered from ... --> block is written from docs/data/. Commit both.
.PHONY: docs
docs:
	$(TOOL_PYTHON) tools/docs/render_docs.py --build-dir $(BUILD_DIR)

# Memory and file descriptors over 10 000 client creations in one process, stock vs layer side by
# side (bench/soak_memory.py: 2 000 hosts in a private network namespace, bundle rewrites,
# aiobotocore clients, forks; needs root); prints the table, writes build/soak_memory.json. A third
# side runs the layer with AWS_PYTHON_KEEPALIVE_GC_INIT=1 (gcinit.py: what issue 36 asked of it).
# SOAK_CLIENTS: client creations per side.
SOAK_CLIENTS ?= 10000
.PHONY: soak-memory
soak-memory: $(VENV)/test-3.12/bin/python $(VENV)/aio/3.12/aioboto3-15.5.0/.done
	BUILD_DIR=$(BUILD_DIR) $(VENV)/test-3.12/bin/python bench/soak_memory.py --gc-init --clients $(SOAK_CLIENTS) \
	  --json $(BUILD_DIR)/soak_memory.json

# make bench-patches: what each declared SDK patch of the full layer (layer/patches/) saves: process CPU
# of import boto3 + the first client in the handler module, imported by awslambdaric through the
# stand-in runtime (its real call depth) and at top level, every patch alone and all together, stock
# beside them, interleaved rounds (bench/sdk_patches.py; build/sdk-patches.json; docs/sdk-patches.md).
PATCH_ROUNDS ?= 30
.PHONY: bench-patches
bench-patches: $(VENV)/lambda-3.12/.lab-lock-sha256 | $(UV)
	PYTHONPATH=$(CURDIR) $(TOOL_PYTHON) bench/sdk_patches.py --python $(VENV)/lambda-3.12/bin/python --uv $(UV) \
	  --rounds $(PATCH_ROUNDS) --json $(BUILD_DIR)/sdk-patches.json
