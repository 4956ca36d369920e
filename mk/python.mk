# Interpreters, the uv bootstrap, venvs and the botocore / aiobotocore matrix folders.
# (targets: interpreters; files: .venv/uv, .venv/test-<minor>, .venv/{tools,sam,moto,wheel-tools,pypiserver},
# .venv/botocore/<minor>/<v>, .venv/aio/<minor>/<name>)

# Each minor is looked up once per make run by tools/interpreters/find-python
# (pyenv, then python3.X on PATH, then uv-managed, then .venv/python/; see tools/interpreters/find_python.py):
# PYTHON_FOUND holds "3.12=/path" words for the minors this machine has.
FIND_PYTHON := tools/interpreters/find-python
INSTALL_PYTHON := tools/interpreters/install-python
PYTHON_FOUND := $(shell $(FIND_PYTHON) --make $(NEEDED_MINORS) $(if $(wildcard .venv/uv/bin/uv),--uv .venv/uv/bin/uv))
python_for = $(patsubst $(1)=%,%,$(filter $(1)=%,$(PYTHON_FOUND)))
FOUND_MINORS := $(foreach w,$(PYTHON_FOUND),$(firstword $(subst =, ,$(w))))
# need_python: the interpreter; a minor this machine lacks is installed into .venv/python/<minor>
# (tools/interpreters/install_python.py: uv python install, else Maven Central's build), or make stops saying
# which goal needs which minor and why it could not be had (expanded only where a recipe or
# prerequisite actually uses it).
need_python = $(or $(call python_for,$(1)),$(shell $(INSTALL_PYTHON) $(1) --goal "$(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))" \
  $(if $(wildcard $(UV)),--uv $(UV))),$(error make could not get CPython $(1): see the line above))
# Tools (uv, ruff, build scripts) run on one interpreter: 3.12 if present, else any supported one
# (a distribution's python3.11, say), else 3.12 installed.
TOOL_MINOR := $(firstword $(filter 3.12,$(FOUND_MINORS)) $(filter $(LAYER_MINORS),$(FOUND_MINORS)))
TOOL_PYTHON = $(call need_python,$(or $(TOOL_MINOR),3.12))

# botocore versions the hook is tested against besides the pinned one (tests/botocore/<v>.txt).
# 1.27.83 is the last with the old _compute_socket_options signature (it imports cgi, gone since
# CPython 3.13: not installed on 3.13/3.14); 1.42.28/1.42.29 bracket
# BOTOCORE_TCP_KEEPALIVE; 1.12.16/1.12.17 bracket the method's introduction and only run on 3.9.
BOTOCORE_MATRIX := 1.27.83 1.29.165 1.34.162 1.42.28 1.42.29
BOTOCORE_OLD := 1.12.16 1.12.17
OLD_PYTHON = $(call need_python,3.9)

# Every minor make test needs, found or installed into .venv/python/ (uv first: the repo's uv
# exists by then); one line per minor saying where it came from.
.PHONY: interpreters
interpreters: | $(UV)
	@$(INSTALL_PYTHON) --report --goal interpreters --uv $(UV) $(NEEDED_MINORS)

# The bootstrap: uv from a hash-pinned requirement, installed with pip.
$(UV): tools/interpreters/uv.txt
	rm -rf $(VENV)/uv
	$(TOOL_PYTHON) -m venv $(VENV)/uv
	$(VENV)/uv/bin/pip install -q --require-hashes --no-deps -r tools/interpreters/uv.txt
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

# Tool venvs, each from its own hash-pinned lock (SAM CLI pins its own boto3, so it lives alone).
SAM := $(VENV)/sam/bin/sam
TOOLS_PY := $(VENV)/tools/bin/python
WHEEL_TOOLS_PY := $(VENV)/wheel-tools/bin/python
PYPISERVER_PY := $(VENV)/pypiserver/bin/python
$(VENV)/tools/.installed: tools/lint/ruff.txt layer/requirements.txt | $(UV)
	rm -rf $(VENV)/tools
	$(UV) venv -q --python $(TOOL_PYTHON) $(VENV)/tools
	$(UV) pip install -q --python $(TOOLS_PY) --require-hashes -r tools/lint/ruff.txt -r layer/requirements.txt
	touch $@

# SAM CLI, moto; also twine (publish-wheel), pypiserver (the publish test's local index) and
# cyclonedx-python-lib (the release test's SBOM schema check) and aws-cdk-lib (docs/attach.md's CDK snippet).
# Each venv from the lock beside the tool that uses it (tools/<room>/<name>.txt -> .venv/<name>).
TOOL_LOCKS := tools/deploy/sam tools/deploy/cdk tools/release/moto tools/release/wheel-tools \
  tools/release/pypiserver tools/release/sbom
define tool_venv
$$(VENV)/$(notdir $(1))/.installed: $(1).txt | $$(UV)
	rm -rf $$(VENV)/$(notdir $(1))
	$$(UV) venv -q --python $$(TOOL_PYTHON) $$(VENV)/$(notdir $(1))
	$$(UV) pip install -q --python $$(VENV)/$(notdir $(1))/bin/python --require-hashes -r $(1).txt
	touch $$@
endef
$(foreach lock,$(TOOL_LOCKS),$(eval $(call tool_venv,$(lock))))

$(SAM): $(VENV)/sam/bin/python
$(VENV)/tools/bin/ruff: $(TOOLS_PY)

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
