"""The probe of prepared.py's results (tests/hook/test_prepared.py, tests/build/test_prepare_data.py,
tests/compat/test_botocore_suite.py): a fresh interpreter creates clients and records every Loader
result by name, with the layer's prepared data used or opted out."""

import json
import subprocess
import sys

ON = {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_DEBUG": "1"}
OPT_OUT = dict(ON, AWS_PYTHON_KEEPALIVE_PREPARED="0")
# Compared model by model in tests/hook; tests/compat/test_botocore_suite.py and
# tests/build/test_prepare_data.py walk every service.
SAMPLE = ("dynamodb", "s3", "sts", "lambda", "sqs", "kms")

# Run in a fresh interpreter with the ``site`` folders (os.pathsep-separated: the layer's, then the
# SDK's for the hook flavor) first on sys.path.  Prints one JSON object: whether the index was used,
# how many service folders under botocore's data folder were listed (listdir, scandir) while
# creating the clients, and every result compared (repr: types, key order and values), by name.
PROBE = r"""
import json, os, sys
site, services, extra_calls = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
sys.path[:0] = site.split(os.pathsep)
import aws_keepalive
aws_keepalive.activate("test")
listed = []
real_listdir, real_scandir = os.listdir, os.scandir
def listdir(path="."):
    listed.append(str(path))
    return real_listdir(path)
def scandir(path="."):
    listed.append(str(path))
    return real_scandir(path)
os.listdir, os.scandir = listdir, scandir
import boto3, botocore.session
data = os.path.join(os.path.dirname(botocore.__file__), "data")
del listed[:]
boto3.client("dynamodb", region_name="us-east-1")
boto3.client("s3", region_name="us-east-1")
listed_at_creation = len([path for path in listed if path.startswith(data + os.sep)])
# prepared.py checks the folders of the services it loads (each: its folder, its version folders).
listed_beyond_created = len([path for path in listed if path.startswith(data + os.sep)
                             and path[len(data) + 1:].split(os.sep)[0] not in ("dynamodb", "s3")])
session = botocore.session.get_session()
loader = session.get_component("data_loader")
results = {}
def record(key, call, *args):
    try:
        results[key] = repr(call(*args))
    except Exception as error:
        results[key] = "raised %s: %s" % (type(error).__name__, error)
types = sorted({name.split(".json")[0] for service in os.listdir(data) if os.path.isdir(os.path.join(data, service))
                for version in os.listdir(os.path.join(data, service))
                for name in os.listdir(os.path.join(data, service, version))})
for type_name in types + ["resources-1", "no-such-type"]:
    record("list_available_services " + type_name, loader.list_available_services, type_name)
record("get_available_services", session.get_available_services)
record("boto3 get_available_services", boto3.session.Session().get_available_services)
record("boto3 get_available_resources", boto3.session.Session().get_available_resources)
for name in ("endpoints", "partitions", "sdk-default-configuration", "_retry", "no-such-file",
             "dynamodb/2012-08-10/service-2.sdk-extras", "s3/2006-03-01/service-2.sdk-extras"):
    record("load_data_with_path " + name, loader.load_data_with_path, name)
for service in loader.list_available_services("service-2") + ["no-such-service"]:
    for type_name in ("service-2", "endpoint-rule-set-1", "paginators-1"):
        record("list_api_versions %s %s" % (service, type_name), loader.list_api_versions, service, type_name)
for service in services + ["no-such-service"]:
    for type_name in ("service-2", "endpoint-rule-set-1", "paginators-1", "waiters-2"):
        record("load_service_model %s %s" % (service, type_name), loader.load_service_model, service, type_name)
resolver = session.get_component("endpoint_resolver")
for service in services:
    for region in ("us-east-1", "eu-west-1", "cn-north-1", "us-gov-west-1"):
        record("construct_endpoint %s %s" % (service, region), resolver.construct_endpoint, service, region)
from aws_keepalive import prepared
exec(extra_calls)
answered = sorted(path for path, found in prepared._state.checked.items() if found) if prepared._state else []
print(json.dumps({"used": bool(prepared._state), "answered": answered, "listed_at_creation": listed_at_creation,
                  "listed_beyond_created": listed_beyond_created,
                  "results": results}))
"""


def run_probe(site, env, base_env, services=SAMPLE, extra="", home=None):
    """Run PROBE with ``base_env`` plus ``env``; returns (its JSON output, its stderr)."""
    child_env = dict(base_env, **env)
    if home is not None:
        child_env["HOME"] = str(home)
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, str(site), json.dumps(list(services)), extra],
        env=child_env, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.splitlines()[-1]), completed.stderr


def assert_same(prepared, stock):
    """Every result of the two runs is the same repr (types, order, values)."""
    assert prepared["results"].keys() == stock["results"].keys()
    differing = [key for key in stock["results"] if prepared["results"][key] != stock["results"][key]]
    assert differing == [], differing[:10]
