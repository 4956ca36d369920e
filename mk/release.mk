# Publishing what mk/layer.mk builds: the layer to Lambda, the wheel to a package index.
# (targets: publish, publish-wheel)

LAYER_NAME ?= $(if $(filter hook,$(FLAVOR)),aws-python-keepalive-hook,aws-python-keepalive)
REGIONS ?= us-east-1
PUBLIC ?= 0

# make publish REGIONS="us-east-1 eu-west-1" [PUBLIC=1] [LAYER_NAME=...] [FLAVOR=hook]: prints one
# ARN per region (the hook flavor's default name: aws-python-keepalive-hook).
.PHONY: publish
publish: $(TOOLS_PY) $(FLAVOR_ZIP)
	$(TOOLS_PY) tools/publish.py --zip $(FLAVOR_ZIP) --layer-name $(LAYER_NAME) --regions "$(REGIONS)" \
	  $(if $(filter 1,$(PUBLIC)),--public)

# make publish-wheel INDEX_URL=https://upload.pypi.org/legacy/ TOKEN=... (or INDEX_USER + INDEX_PASSWORD).
.PHONY: publish-wheel
publish-wheel: wheel $(WHEEL_TOOLS_PY)
	$(WHEEL_TOOLS_PY) tools/publish_wheel.py --wheel $(WHEEL)
