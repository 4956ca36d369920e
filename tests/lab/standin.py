"""Helpers for the stand-in runtime's tests (lab/standin/lambda_env.py and friends): CPython minors,
function folders, the layer root, a DynamoDB-shaped endpoint, the root/namespace gate.

Fixtures are imported by the test modules that use them (``from standin import layer_root_fixture``
registers the fixture ``layer_root``), so this file does not depend on, or change, the shared
conftest.py.
"""

import os
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
LAYER_ZIP = os.path.join(REPO, "build", "layer.zip")


def write_task(folder, **modules):
    """A function code folder (LAMBDA_TASK_ROOT) with the given modules: name=source."""
    os.makedirs(str(folder), exist_ok=True)
    for name, source in modules.items():
        with open(os.path.join(str(folder), name + ".py"), "w") as stream:
            stream.write(textwrap.dedent(source))
    return folder


@pytest.fixture(scope="session", name="layer_root")
def layer_root_fixture(tmp_path_factory):
    """The layer as Lambda gets it: build/layer.zip extracted (python/ at its root). Before the build
    issue's zip exists, the repo's layer/ folder copied as python/ (hook only, no boto3)."""
    from lab.standin.lambda_env import extract_layer, layer_from_source

    dest = tmp_path_factory.mktemp("opt")
    if os.path.exists(LAYER_ZIP):
        print("layer root: %s extracted" % LAYER_ZIP)
        return extract_layer(LAYER_ZIP, dest)
    print("layer root: build/layer.zip missing, using the repo's layer/ folder")
    return layer_from_source(dest)


def layer_has_botocore(root):
    return os.path.isdir(os.path.join(str(root), "python", "botocore"))


@pytest.fixture(name="endpoint")
def endpoint_fixture():
    """A DynamoDB-shaped plain-HTTP endpoint on 127.0.0.1 (see endpoint.py)."""
    from endpoint import Endpoint

    server = Endpoint()
    yield server
    server.close()


def require_root_namespaces(reason):
    """Skip (reason printed) when reason is not None; in CI (CI=true) fail instead: CI must run it."""
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but " + reason)
    print("skipped: " + reason)
    pytest.skip(reason)
