# Layer build (full and hook flavor), SAM build/deploy, the wheel (issues 3, 7).
# (targets: layer, build-KeepAliveLayer, build-KeepAliveHookLayer, deploy, wheel; files: build/layer.zip,
# build/layer-hook.zip)

# The build runs on the tool interpreter with the stdlib only; bytecode is compiled for every
# supported CPython this machine has (the layer's zip serves python3.10 - python3.14).
LAYER_ZIP := $(BUILD_DIR)/layer.zip
# FLAVOR=hook: the hook alone (no boto3/botocore/urllib3), patching the SDK the function imports.
HOOK_ZIP := $(BUILD_DIR)/layer-hook.zip
FLAVOR ?= full
FLAVOR_ZIP = $(if $(filter hook,$(FLAVOR)),$(HOOK_ZIP),$(LAYER_ZIP))
SERVICES ?=
LAYER_PYTHONS = $(foreach p,$(LAYER_MINORS),$(call need_python,$(p)))
# sam build validates a real python3.X of the example function's runtime (the pyenv shim fails).
SAM_RUNTIME_MINOR := 3.13
SAM_PATH = $(dir $(call need_python,$(SAM_RUNTIME_MINOR))):$(PATH)

# The SDKs whose default CA bundle (botocore's cacert.pem) the layer serves as a hashed directory
# (tools/build/ca_dir.py, layer/aws_keepalive/trust.py): the full layer its own pinned SDK's (the one its
# functions run with; ~0.2 MB each, and its zip is near the size budget), the hook flavor also the
# runtimes' bundled ones (lab/runtime-sdk).
RUNTIME_SDKS := $(sort $(wildcard lab/runtime-sdk/*.txt))
CA_SDKS := layer/requirements.txt $(RUNTIME_SDKS)
FLAVOR_CA_SDKS = $(if $(filter hook,$(FLAVOR)),$(CA_SDKS),layer/requirements.txt)
# The SDKs whose data folders the hook flavor indexes and whose top-level data files it ships
# pre-parsed (tools/build/prepare_data.py, layer/aws_keepalive/prepared.py): the runtimes' bundled ones;
# the full flavor prepares its own SDK from its staged tree.
FLAVOR_PREPARED_SDKS = $(if $(filter hook,$(FLAVOR)),$(RUNTIME_SDKS))

# make layer [SERVICES=dynamodb,s3] [FLAVOR=hook]: always rebuilds (it is reproducible) and prints
# sha256 and sizes. tools/build/ca_dir.py needs the openssl command (Debian's openssl; apt only when missing).
.PHONY: layer
layer: | $(UV)
	@command -v openssl >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null; }
	$(TOOL_PYTHON) tools/build/build_layer.py --flavor $(FLAVOR) --uv $(UV) --requirements layer/requirements.txt \
	  --hook layer --work $(BUILD_DIR)/$(basename $(notdir $(FLAVOR_ZIP))) --out $(FLAVOR_ZIP) --services "$(SERVICES)" \
	  $(addprefix --python ,$(LAYER_PYTHONS)) $(addprefix --ca-sdk ,$(FLAVOR_CA_SDKS)) \
	  $(addprefix --prepared-sdk ,$(FLAVOR_PREPARED_SDKS))

# The table of defaults the full layer's SDK changes against the runtimes' bundled ones, written into
# docs/build.md between its sdk-defaults markers (tools/build/sdk_defaults.py; each SDK installed from
# its lock into $(BUILD_DIR)/sdk-defaults once). make bump-sdk runs it after a new pin.
.PHONY: sdk-defaults
sdk-defaults: | $(UV)
	$(TOOL_PYTHON) tools/build/sdk_defaults.py --uv $(UV) --work $(BUILD_DIR)/sdk-defaults --doc docs/build.md

# When missing or older than what goes into it (so test-lab and demo never run a stale hook);
# otherwise publish uses the zip as built (trimmed or not).
$(LAYER_ZIP): $(wildcard layer/*.pth layer/*.start layer/*.py layer/aws_keepalive/*.py) layer/requirements.txt \
  tools/build/build_layer.py tools/build/build_wheel.py tools/build/repro_zip.py tools/build/layer_info.py \
  tools/build/prepare_data.py tools/build/ca_dir.py
	$(MAKE) --no-print-directory layer FLAVOR=full
$(HOOK_ZIP): $(wildcard layer/*.pth layer/*.start layer/*.py layer/aws_keepalive/*.py) \
  tools/build/build_layer.py tools/build/build_wheel.py tools/build/repro_zip.py tools/build/layer_info.py tools/build/prepare_data.py \
  tools/build/ca_dir.py $(CA_SDKS)
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
# tools/build/build_wheel.py is stdlib only and reproducible, like the layer build.
WHEEL = $(shell $(TOOL_PYTHON) tools/build/build_wheel.py --hook layer --out-dir $(BUILD_DIR) --print-path)

# make wheel: always rebuilds (it is reproducible) and prints the path, sha256 and size.
.PHONY: wheel
wheel:
	$(TOOL_PYTHON) tools/build/build_wheel.py --hook layer --out-dir $(BUILD_DIR)
