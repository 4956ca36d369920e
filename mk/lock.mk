# Locks: every hash-pinned requirements file, regenerated (make lock: all of them, newest
# boto3/botocore). Each .txt is written from the .in beside it.
# (targets: lock, lock-aio, lock-wheel, lock-lab, lock-runtime-sdk, lock-demo, lock-async, lock-compat,
#  lock-durable)

.PHONY: lock
lock: | $(UV)
	$(UV) pip compile -q --universal --generate-hashes tools/interpreters/uv.in -o tools/interpreters/uv.txt
	$(UV) pip compile -q --universal --python-version 3.10 --upgrade --generate-hashes layer/requirements.in \
	  -o layer/requirements.txt
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes tests/requirements.in -o tests/requirements.txt
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes tests/twin/requirements.in \
	  -o tests/twin/requirements.txt
	for v in $(BOTOCORE_MATRIX); do echo "botocore==$$v" | $(UV) pip compile -q --universal --python-version 3.10 \
	  --generate-hashes --no-header - -o tests/botocore/$$v.txt; done
	for v in $(BOTOCORE_OLD); do echo "botocore==$$v" | $(UV) pip compile -q --python-version 3.9 \
	  --generate-hashes --no-header - -o tests/botocore/$$v.txt; done
	for n in tools/deploy/sam tools/release/moto tools/lint/ruff tools/release/sbom tools/deploy/cdk; do $(UV) pip compile -q --universal --python-version 3.12 --upgrade --generate-hashes \
	  $$n.in -o $$n.txt; done
	$(TOOL_PYTHON) tools/packaging/layer_info.py --write-template template.yaml
	$(MAKE) --no-print-directory lock-lab lock-demo lock-wheel lock-async lock-aio lock-compat lock-durable

.PHONY: lock-aio
lock-aio: | $(UV)
	for n in $(AIO_MATRIX) $(AIO_OLD_AIOHTTP); do $(UV) pip compile -q --universal --python-version 3.10 \
	  --generate-hashes --no-header tests/aio/$$n.in -o tests/aio/$$n.txt; done

.PHONY: lock-wheel
lock-wheel: | $(UV)
	for n in tools/release/wheel-tools tools/release/pypiserver; do $(UV) pip compile -q --universal --python-version 3.12 --generate-hashes \
	  $$n.in -o $$n.txt; done

.PHONY: lock-lab
lock-lab: | $(UV)
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/runtime-requirements.in \
	  -o lab/runtime-requirements.txt
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/runtime-requirements-ric40.in \
	  -o lab/runtime-requirements-ric40.txt
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/otel-requirements.in \
	  -o lab/otel-requirements.txt
	$(MAKE) --no-print-directory lock-runtime-sdk

# lab/runtime-sdk/<RUNTIME_BOTO3>.txt: boto3 and botocore at that version (the runtimes bundle the pair
# with one number: boto3 1.38.36 allows any botocore 1.38.x, and the newest, 1.38.46, is not what a
# runtime holding boto3 1.38.36 imports), the newest of what they allow for the rest. RUNTIME_SDK_DIR=
# lab/runtime-sdk/unknown: a release the lab can run as the runtime's copy that the hook flavor does
# not prepare (the build reads lab/runtime-sdk/*.txt only; make coldstart-unknown). 1.34.162.txt,
# the 2024 baseline, was written with urllib3==1.26.20 added, as the lab ran it then. A release a
# runtime reports (make verify-aws) joins the hook flavor by this target and make layer FLAVOR=hook.
.PHONY: lock-runtime-sdk
RUNTIME_SDK_DIR ?= lab/runtime-sdk
lock-runtime-sdk: | $(UV)
	printf 'boto3==%s\nbotocore==%s\n' $(RUNTIME_BOTO3) $(RUNTIME_BOTO3) | $(UV) pip compile -q --universal --python-version 3.10 --generate-hashes \
	  --no-header - -o $(RUNTIME_SDK_DIR)/$(RUNTIME_BOTO3).txt

.PHONY: lock-demo
lock-demo: | $(UV)
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes -c layer/requirements.txt \
	  lab/demo-requirements.in -o lab/demo-requirements.txt

.PHONY: lock-async
lock-async: | $(UV)
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/async-requirements.in \
	  -o lab/async-requirements.txt
	$(UV) pip compile -q --universal --python-version 3.10 --generate-hashes lab/bench-requirements.in \
	  -o lab/bench-requirements.txt

.PHONY: lock-compat
lock-compat: | $(UV)
	$(UV) pip compile -q --universal --python-version 3.12 --generate-hashes -c layer/requirements.txt \
	  tests/compat/requirements.in -o tests/compat/requirements.txt
	$(UV) pip compile -q --universal --python-version 3.12 --generate-hashes --no-deps -c layer/requirements.txt \
	  --no-binary botocore tests/compat/botocore-sdist.in -o tests/compat/botocore-sdist.txt
	$(UV) pip compile -q --universal --python-version 3.12 --generate-hashes tests/compat/sdist-tools.in \
	  -o tests/compat/sdist-tools.txt
	$(UV) pip compile -q --universal --python-version 3.12 --generate-hashes --no-deps -c layer/requirements.txt \
	  --no-binary boto3 --no-binary botocore --no-binary s3transfer tests/upstream/sdists.in \
	  -o tests/upstream/sdists.txt

# The durable-function experiment (lab/experiments/durable): the function's SDK and the local runner,
# both with the layer's boto3 as a constraint (same botocore with and without the layer); universal
# from 3.13 (the SDK needs >= 3.11; durable functions run python3.13 and python3.14).
.PHONY: lock-durable
lock-durable: | $(UV)
	for n in function runner; do $(UV) pip compile -q --universal --python-version 3.13 --generate-hashes \
	  -c layer/requirements.txt lab/experiments/durable/$$n-requirements.in \
	  -o lab/experiments/durable/$$n-requirements.txt; done

# make bump-sdk [VERSION=x.y.z]: the full layer's boto3/botocore/s3transfer moved to the newest release
# on the package index (or botocore VERSION), re-locked with hashes as `lock` does, what follows the
# pin re-locked and rebuilt (both zips: CA directories, prepared data; template.yaml; the SDK defaults
# table; README's numbers), then judged by test-build, test-hook-3.12 and test-compat. A failing suite
# restores the old pin and names its failed tests. On an unchanged pin: exit 0, nothing written.
# Prints what changed (services, defaults modes, the modules the hook patches); build/bump-sdk.json
# holds the same for the scheduled workflow (.github/workflows/bump-sdk.yml). Logic:
# tools/release/bump_sdk.py (the release room: a bump is the first step of a patch release).
# BUMP_INDEX_URL: another index (the rehearsal's pypiserver).
VERSION ?=
BUMP_INDEX_URL ?=
# BUMP_SUITES: the suites that judge the bump (default: bump_sdk.SUITES); bump-sdk.yml passes `test test-upstream`
# in tag mode.
BUMP_SUITES ?=
.PHONY: bump-sdk
bump-sdk: | $(UV)
	$(TOOL_PYTHON) tools/release/bump_sdk.py --uv $(UV) --make "$(MAKE) --no-print-directory" \
	  $(if $(VERSION),--version $(VERSION)) $(if $(BUMP_INDEX_URL),--index-url $(BUMP_INDEX_URL)) \
	  $(if $(strip $(BUMP_SUITES)),--suites "$(BUMP_SUITES)") --report $(BUILD_DIR)/bump-sdk.json --work $(BUILD_DIR)/bump-sdk
