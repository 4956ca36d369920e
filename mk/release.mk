# Releasing and publishing (issues 3, 7, 24): the release files, the layers into every region, the
# wheel to a package index, the region list, and the demo's experiment on the user's own account.
# (targets: release, publish, smoke-release, rehearse-release, regions, bench-publish, publish-wheel, actionlint,
# verify-aws; files: build/release/, build/rehearsal/)

# make release: build/release/ holds both layer zips named with the version, the wheel, one CycloneDX
# SBOM per zip and SHA256SUMS, byte-for-byte reproducible from any clone. Each zip is built by the same
# call as make layer's (so it is build/layer.zip's and build/layer-hook.zip's bytes): the pinned Maven
# Central CPython builds (PINNED_ROOT, jars checked against their pins on every build), never the
# machine's own interpreters: see tools/release/release.py. linux-x86_64. A failed release leaves the
# previous build/release/ in place.
RELEASE_DIR = $(BUILD_DIR)/release
RELEASE_VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"$$/\1/p' layer/aws_keepalive/__init__.py)
RELEASE_SUMS = $(RELEASE_DIR)/SHA256SUMS
# What uses the release files (publish, bench-publish, verify-aws) takes them as they are: an order-only
# prerequisite, so `make release` runs when there is no release at all (a fresh clone) and never because
# a source file is newer: the bytes published are the bytes tested (the workflow's publish job
# downloads them, checks them with sha256sum -c, and nothing rebuilds them).
$(RELEASE_SUMS):
	$(MAKE) --no-print-directory release
SBOM_PY := $(VENV)/sbom/bin/python
.PHONY: release
release: | $(UV)
	$(TOOL_PYTHON) tools/release/release.py --uv $(UV) --pinned-root $(PINNED_ROOT) --out $(RELEASE_DIR)

# make publish REGIONS="us-east-1 eu-west-1"|all FLAVOR=full|hook|all [PUBLIC=1 | PRINCIPAL_ORG=o-...]
#   [PARTITION=aws-us-gov|aws-cn] [SIGNING_PROFILE=name SIGNING_BUCKET=bucket-{region}] [LAYER_NAME=base]
#   [ZIP="path/aws-python-keepalive-<v>.zip ..."] [STEP=stage|promote|check] [ALIGN=1]
# Each release zip of FLAVOR (LAYER_NAME, and LAYER_NAME-hook for the hook flavor) into each region, in
# parallel (PUBLISH_JOBS at once), as one version number in every region (ALIGN=1: placeholder versions
# bring the regions behind forward; otherwise it refuses and says how); a zip already any version is not
# published again. STEP=stage publishes private, STEP=promote grants (PUBLIC/PRINCIPAL_ORG) and moves
# SSM_PREFIX/<layer>/latest (only to the newest version), STEP=check checks both; all three by default
# (the release workflow runs them apart, the smoke test between stage and promote). Rejected
# credentials stop it at once. ARNs merged into build/release/layers.json. REGIONS=all:
# tools/release/regions.json's list for PARTITION, minus the regions not enabled in the account.
# It publishes the zips as they are: from RELEASE_DIR (what `make release` wrote, or the release's files
# downloaded there; `make release` runs only when there is none), or the zips ZIP names (a downloaded
# release zip, on any OS with Python, nothing built; the flavor is read from the zip's contents, and a
# file name that says another flavor is refused: tools/release/publish.py check_flavor).
LAYER_NAME ?= aws-python-keepalive
REGIONS ?= us-east-1
PUBLIC ?= 0
PRINCIPAL_ORG ?=
PARTITION ?= aws
SIGNING_PROFILE ?=
SIGNING_BUCKET ?=
SSM_PREFIX ?= /python-keepalive
PUBLISH_JOBS ?= 16
ZIP ?=
STEP ?= all
ALIGN ?= 0
RELEASE_ZIP_full = $(LAYER_NAME)=$(RELEASE_DIR)/aws-python-keepalive-$(RELEASE_VERSION).zip
RELEASE_ZIP_hook = $(LAYER_NAME)-hook=$(RELEASE_DIR)/aws-python-keepalive-hook-$(RELEASE_VERSION).zip
PUBLISH_FLAVORS = $(if $(filter all,$(FLAVOR)),full hook,$(FLAVOR))
PUBLISH_ARGS = $(if $(ZIP),--layer-name $(LAYER_NAME) $(foreach z,$(ZIP),--zip $(z)),$(foreach f,$(PUBLISH_FLAVORS),--layer $(RELEASE_ZIP_$(f))))
PUBLISH_LAYERS_JSON = $(if $(ZIP),$(dir $(firstword $(ZIP)))layers.json,$(RELEASE_DIR)/layers.json)
.PHONY: publish
publish: $(TOOLS_PY) | $(if $(ZIP),,$(RELEASE_SUMS))
	$(TOOLS_PY) tools/release/publish.py $(PUBLISH_ARGS) \
	  --regions "$(REGIONS)" --partition $(PARTITION) --ssm-prefix $(SSM_PREFIX) --jobs $(PUBLISH_JOBS) \
	  --step $(STEP) $(if $(filter 1,$(ALIGN)),--align) \
	  --layers-json $(PUBLISH_LAYERS_JSON) $(if $(filter 1,$(PUBLIC)),--public) \
	  $(if $(PRINCIPAL_ORG),--principal-org $(PRINCIPAL_ORG)) \
	  $(if $(SIGNING_PROFILE),--signing-profile $(SIGNING_PROFILE) --signing-bucket '$(SIGNING_BUCKET)')

# make smoke-release SMOKE_ROLE_ARN=arn:...:role/... [SMOKE_REGION=us-east-1]: the release workflow's smoke
# test (tools/release/smoke.py) on the versions layers.json names in SMOKE_REGION: a function per layer,
# runtime and architecture the version declares, invoked and deleted. Run between STEP=stage and STEP=promote.
SMOKE_REGION ?= us-east-1
SMOKE_ROLE_ARN ?=
.PHONY: smoke-release
smoke-release: $(TOOLS_PY)
	$(TOOLS_PY) tools/release/smoke.py --layers-json $(RELEASE_DIR)/layers.json --region $(SMOKE_REGION) \
	  --role-arn '$(SMOKE_ROLE_ARN)'

# make rehearse-release [REHEARSAL_TEST_SUITES=...|all]: the release workflow's own steps, read from
# .github/workflows/release.yml, in their order, run as GitHub's runner runs them (tools/release/rehearse.py): as
# a non-root user `runner` with passwordless sudo and its own HOME (created once: run it as root), each job on a
# fresh depth-1 checkout of the commit, artifacts copied out of one job's workspace and into the next's, every
# step, with local stand-ins: moto for Lambda/SSM/STS/EC2/IAM/S3, a pypiserver for PyPI, a recorder for gh. The
# Test step runs as written (sudo, make test) with TEST_SUITES=$(REHEARSAL_TEST_SUITES): by default what make
# test does as root before any test runs (every minor's interpreter, a suite's venv through uv: where root's
# HOME, caches and files in the checkout come from), not the tests themselves (make test runs them; one hook
# suite took 20+ min here under load). REHEARSAL_TEST_SUITES=test-hook-3.12 adds one suite, =all runs them all.
# Then every job after build again on the same artifacts, which must publish nothing. Ends with the ARNs, the
# release notes and its time.
REHEARSAL_WORKFLOW ?= .github/workflows/release.yml
REHEARSAL_TEST_SUITES ?= $(VENV)/test-3.12/.installed
.PHONY: rehearse-release
rehearse-release: $(VENV)/moto/bin/python $(PYPISERVER_PY) $(WHEEL_TOOLS_PY)
	$(VENV)/moto/bin/python tools/release/rehearse.py --moto $(VENV)/moto/bin/moto_server \
	  --pypiserver $(VENV)/pypiserver/bin/pypi-server --twine $(VENV)/wheel-tools/bin/twine \
	  --version $(RELEASE_VERSION) --workflow $(REHEARSAL_WORKFLOW) --work $(BUILD_DIR)/rehearsal \
	  --test-suites "$(REHEARSAL_TEST_SUITES)"

# make regions [REGIONS_SOURCE=botocore]: refresh tools/release/regions.json (what REGIONS=all means) from
# AWS's public SSM parameters (needs credentials), or offline from the pinned botocore's endpoints.
REGIONS_SOURCE ?= ssm
.PHONY: regions
regions: $(TOOLS_PY)
	$(TOOLS_PY) tools/release/regions.py --source $(REGIONS_SOURCE)

# make bench-publish: every region of the aws partition x both flavors into a local moto server,
# twice (the second run publishes nothing); prints the table, writes build/bench-publish.json.
.PHONY: bench-publish
bench-publish: $(TOOLS_PY) $(VENV)/moto/bin/python | $(RELEASE_SUMS)
	$(TOOLS_PY) bench/publish.py --moto $(VENV)/moto/bin/moto_server --release $(RELEASE_DIR) \
	  --version $(RELEASE_VERSION) --json $(BUILD_DIR)/bench-publish.json

# make publish-wheel INDEX_URL=https://upload.pypi.org/legacy/ TOKEN=... (or INDEX_USER + INDEX_PASSWORD).
.PHONY: publish-wheel
publish-wheel: wheel $(WHEEL_TOOLS_PY)
	$(WHEEL_TOOLS_PY) tools/release/publish_wheel.py --wheel $(WHEEL)

# The release tests validate the SBOMs against CycloneDX's schema (cyclonedx-python-lib, tools/release/sbom.txt;
# the venv's rule: mk/python.mk).
test-build: $(SBOM_PY)
test-build: export AWS_KEEPALIVE_SBOM_PYTHON := $(CURDIR)/$(SBOM_PY)

# shellcheck, which actionlint runs on every `run:` script: the version GitHub's ubuntu-24.04 runner
# ships (0.9.0), so that this machine sees what the runner sees (without it actionlint silently skips
# the shell checks, and a workflow that fails its first step on GitHub passes here). Debian's package
# of that version (bookworm's 0.9.0-1) from Debian's archive, checked against the sha256 pinned below
# and unpacked into .venv: no system install, and the same bytes on this machine and on the runner
# (an Ubuntu `apt-get download` would give Ubuntu's rebuild, whose digest differs). It needs libgmp10
# and libffi8, which Debian and Ubuntu have.
SHELLCHECK_DEB := shellcheck_0.9.0-1_amd64.deb
SHELLCHECK_DEB_SHA256 := 8c40f8a4ecccf3d746b933853972f1cd1be6df84fc5977d0137269d4debefa4f
SHELLCHECK := $(VENV)/shellcheck-0.9.0-1/usr/bin/shellcheck
$(SHELLCHECK):
	rm -rf $(VENV)/shellcheck-0.9.0-1 $(VENV)/shellcheck-deb
	mkdir -p $(VENV)/shellcheck-deb
	curl -sfSL -o $(VENV)/shellcheck-deb/$(SHELLCHECK_DEB) https://deb.debian.org/debian/pool/main/s/shellcheck/$(SHELLCHECK_DEB)
	echo "$(SHELLCHECK_DEB_SHA256)  $(VENV)/shellcheck-deb/$(SHELLCHECK_DEB)" | sha256sum -c --quiet
	dpkg -x $(VENV)/shellcheck-deb/$(SHELLCHECK_DEB) $(VENV)/shellcheck-0.9.0-1
	rm -rf $(VENV)/shellcheck-deb
	$@ --version | grep -qx 'version: 0.9.0'

# actionlint checks .github/workflows/*.yml (make lint runs it; tests/build/test_workflow.py too). Installed
# with go install from the Go module proxy at a pinned version (its go.sum checked by the module mirror).
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := $(VENV)/go/actionlint-$(ACTIONLINT_VERSION)/actionlint
$(ACTIONLINT):
	GOBIN=$(CURDIR)/$(dir $@) go install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
.PHONY: actionlint
actionlint: $(ACTIONLINT) $(SHELLCHECK)
	$(ACTIONLINT) -no-color -shellcheck $(SHELLCHECK)
test-build: $(ACTIONLINT) $(SHELLCHECK)
test-build: export AWS_KEEPALIVE_ACTIONLINT := $(CURDIR)/$(ACTIONLINT)
test-build: export AWS_KEEPALIVE_SHELLCHECK := $(CURDIR)/$(SHELLCHECK)

# make verify-aws [REGION=...] [MEMORY_MB=128] [VPC=1 [YES=1]] [GAPS=3] [GAP_S=380] [STEADY=5]: the demo's
# experiment in your own account (tools/deploy/verify_aws.py): a SAM stack (a table; the lab's example function
# with no layer, with BOTOCORE_TCP_KEEPALIVE=true, with the layer), invocations after gaps past the NAT
# gateway's 350 s and after short ones, the demo's table, build/verify-aws.json, the stack deleted (also on
# Ctrl-C). ~25 min with the defaults. Credentials are checked first: without them it stops before
# building anything. VPC=1 (a NAT gateway: billed by the hour) prints the estimate and asks, unless YES=1.
REGION ?=
VPC ?= 0
YES ?= 0
GAPS ?= 3
GAP_S ?= 380
STEADY ?= 5
.PHONY: verify-aws
verify-aws: $(TOOLS_PY)
	$(TOOLS_PY) tools/deploy/verify_aws.py --check-credentials $(if $(REGION),--region $(REGION))
	$(MAKE) --no-print-directory $(SAM) $(if $(ZIP),,$(RELEASE_SUMS))
	PATH=$(SAM_PATH) $(TOOLS_PY) tools/deploy/verify_aws.py --sam $(SAM) \
	  --layer-zip $(or $(ZIP),$(RELEASE_DIR)/aws-python-keepalive-$(RELEASE_VERSION).zip) $(if $(REGION),--region $(REGION)) \
	  --memory-mb $(MEMORY_MB) --gaps $(GAPS) --gap-s $(GAP_S) --steady $(STEADY) \
	  $(if $(filter 1,$(VPC)),--vpc) $(if $(filter 1,$(YES)),--yes) \
	  --work $(BUILD_DIR)/verify-aws --json $(BUILD_DIR)/verify-aws.json

# docs/attach.md's snippets, each checked by its own tool (tests/build/test_attach.py): SAM and cfn-lint
# (.venv/sam), CDK synth (.venv/cdk: aws-cdk-lib from tools/deploy/cdk.txt, run by Node), Serverless Framework 3
# (npm ci from tools/deploy/serverless/package-lock.json into .venv/serverless; v4 needs a login), and
# `terraform fmt -check` where terraform is installed (terraform validate needs the registry's provider).
CDK_PY := $(VENV)/cdk/bin/python
SERVERLESS := $(VENV)/serverless/node_modules/.bin/serverless
$(VENV)/serverless/.installed: tools/deploy/serverless/package.json tools/deploy/serverless/package-lock.json
	rm -rf $(VENV)/serverless
	mkdir -p $(VENV)/serverless
	cp tools/deploy/serverless/package.json tools/deploy/serverless/package-lock.json $(VENV)/serverless/
	cd $(VENV)/serverless && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@
.PHONY: lock-serverless
lock-serverless:
	cd tools/deploy/serverless && npm install --package-lock-only --ignore-scripts --no-audit --no-fund
test-build: $(CDK_PY) $(VENV)/serverless/.installed
test-build: export AWS_KEEPALIVE_CDK_PYTHON := $(CURDIR)/$(CDK_PY)
test-build: export AWS_KEEPALIVE_SERVERLESS := $(CURDIR)/$(SERVERLESS)
