# Layer build (full and hook flavor), SAM build/deploy, the wheel (issues 3, 7).
# (targets: layer, build-KeepAliveLayer, build-KeepAliveHookLayer, deploy, wheel; files: build/layer.zip,
# build/layer-hook.zip)

# One build (issue 28): make layer and make release run tools/release/release.py, which builds each zip
# with the same call: the pinned Maven Central CPython builds compile the bytecode (.venv/python-pinned/,
# each jar checked against tools/interpreters/cpython-maven.sha256 on every build; linux-x86_64 only,
# refused elsewhere), and the flavor's CA directories and prepared data (tools/packaging/build_layer.py
# flavor_sdks) go in. So build/layer.zip and build/layer-hook.zip are byte for byte the release's zips,
# and every test, benchmark and lab run that takes them measures what ships. The build itself runs on the
# tool interpreter with the stdlib only.
LAYER_ZIP := $(BUILD_DIR)/layer.zip
# FLAVOR=hook: the hook alone (no boto3/botocore), patching the SDK the function imports.
HOOK_ZIP := $(BUILD_DIR)/layer-hook.zip
FLAVOR ?= full
FLAVOR_ZIP = $(if $(filter hook,$(FLAVOR)),$(HOOK_ZIP),$(LAYER_ZIP))
SERVICES ?=
# Where the pinned builds are installed (one per layer minor); a clone may share another's.
PINNED_ROOT ?= $(VENV)/python-pinned
# sam build validates a real python3.X of the example function's runtime (the pyenv shim fails).
SAM_RUNTIME_MINOR := 3.13
SAM_PATH = $(dir $(call need_python,$(SAM_RUNTIME_MINOR))):$(PATH)
# The runtimes' bundled SDKs the hook flavor serves CA directories and prepared data for (the list
# itself is build_layer.flavor_sdks'): only what the zip rules below depend on.
RUNTIME_SDKS := $(sort $(wildcard lab/runtime-sdk/*.txt))
LAYER_INPUTS := $(wildcard layer/*.pth layer/*.start layer/*.py layer/aws_keepalive/*.py) layer/requirements.txt \
  $(wildcard layer/patches/*/*.patch) \
  $(wildcard tools/packaging/*.py) tools/release/release.py tools/interpreters/install_python.py \
  tools/interpreters/cpython-maven.sha256 LICENSE NOTICE licenses/MPL-2.0.txt

# make layer [SERVICES=dynamodb,s3] [FLAVOR=hook]: always rebuilds (it is reproducible) and prints
# sha256 and sizes. SERVICES= trims the full flavor's models: a trimmed zip is not the release's (it
# says so). tools/packaging/ca_dir.py needs the openssl command (Debian's openssl; apt only when missing).
.PHONY: layer
layer: | $(UV)
	@command -v openssl >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null; }
	$(TOOL_PYTHON) tools/release/release.py --uv $(UV) --pinned-root $(PINNED_ROOT) --flavor $(FLAVOR) \
	  --zip $(FLAVOR_ZIP) --services "$(SERVICES)"

# The table of defaults the full layer's SDK changes against the runtimes' bundled ones, written into
# docs/build.md between its sdk-defaults markers (tools/packaging/sdk_defaults.py; each SDK installed from
# its lock into $(BUILD_DIR)/sdk-defaults once). make bump-sdk runs it after a new pin.
.PHONY: sdk-defaults
sdk-defaults: | $(UV)
	$(TOOL_PYTHON) tools/packaging/sdk_defaults.py --uv $(UV) --work $(BUILD_DIR)/sdk-defaults --doc docs/build.md

# When missing or older than what goes into it (so test-lab and demo never run a stale hook).
$(LAYER_ZIP): $(LAYER_INPUTS)
	$(MAKE) --no-print-directory layer FLAVOR=full
$(HOOK_ZIP): $(LAYER_INPUTS) $(RUNTIME_SDKS)
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

.PHONY: deploy
# make deploy [EXAMPLE=1]: the two layers (full and hook-only), or with the example function and its table.
deploy: $(SAM)
	PATH=$(SAM_PATH) $(SAM) build
	PATH=$(SAM_PATH) $(SAM) deploy $(if $(filter 1,$(EXAMPLE)),--parameter-overrides DeployExample=true)

# The wheel: the hook for container images, bundled dependencies, any Python process (issue 7).
# The wheel holds aws_keepalive/ and aws_keepalive.pth only (no boto3/botocore, no sitecustomize);
# tools/packaging/build_wheel.py is stdlib only and reproducible, like the layer build.
WHEEL = $(shell $(TOOL_PYTHON) tools/packaging/build_wheel.py --hook layer --out-dir $(BUILD_DIR) --print-path)

# make wheel: always rebuilds (it is reproducible) and prints the path, sha256 and size.
.PHONY: wheel
wheel:
	$(TOOL_PYTHON) tools/packaging/build_wheel.py --hook layer --out-dir $(BUILD_DIR)
