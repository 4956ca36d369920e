"""prepared.py: client creation answered from the build's index and pre-parsed files, with exactly
stock's results (real botocore and boto3: the test venv's, the layer's pinned versions)."""

import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest
from conftest import BASE_ENV, LAYER, REPO
from ddb_server import DynamoDBShapedServer

sys.path.insert(0, REPO)
from tools.packaging import prepare_data  # noqa: E402  (tools/packaging/prepare_data.py: what the layer build runs)
from prepared_probe import OPT_OUT, ON, PROBE, SAMPLE, assert_same, run_probe  # noqa: E402,F401

def make_site(tmp_path, name="site"):
    """A layer-shaped site folder: the hook package beside (symlinks to) the test venv's botocore and
    boto3, as /opt/python holds them; no prepared data yet."""
    import boto3
    import botocore

    site = tmp_path / name
    site.mkdir()
    shutil.copytree(os.path.join(LAYER, "aws_keepalive"), site / "aws_keepalive",
                    ignore=shutil.ignore_patterns("__pycache__", "prepared-data"))
    for module in (botocore, boto3):
        os.symlink(os.path.dirname(module.__file__), site / module.__name__)
    return site


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A layer-shaped site folder with the prepared data the build writes."""
    folder = make_site(tmp_path_factory.mktemp("prepared"))
    prepare_data.prepare(str(folder))
    return folder


def probe(site, env, services=SAMPLE, extra="", home=None):
    """Run PROBE in this suite's environment; returns (its JSON output, its stderr)."""
    return run_probe(site, env, BASE_ENV, services, extra, home)


@pytest.fixture(scope="module")
def stock(site):
    """The probe with the layer on but the prepared data opted out: stock loading."""
    return probe(site, OPT_OUT)[0]


def test_same_results_as_stock_and_no_listing(site, stock):
    """Listings of every type, every service's API versions, the top-level files, sample models and
    endpoints are identical with the index; creating two clients lists only their own service folders."""
    prepared, _ = probe(site, ON)
    assert prepared["used"] is True and stock["used"] is False
    assert prepared["listed_beyond_created"] == 0 and prepared["listed_at_creation"] <= 8
    assert stock["listed_at_creation"] > 400  # botocore's listing: every service folder
    assert_same(prepared, stock)
    assert "'dynamodb'" in stock["results"]["get_available_services"]
    assert stock["results"]["load_data_with_path no-such-file"].startswith("raised DataNotFoundError")


def test_pre_parsed_file_is_fresh_and_ordered_dict(site):
    """A pre-parsed file is a new OrderedDict tree at each load (a caller may mutate what it loaded),
    equal to botocore's own parse of the file."""
    check = """
from botocore.loaders import Loader, JSONFileLoader
from collections import OrderedDict
first, second = Loader(), Loader()
a, b = first.load_data("endpoints"), second.load_data("endpoints")
assert type(a) is OrderedDict and a is not b and a["partitions"] is not b["partitions"]
a["partitions"][0]["services"].clear()
assert b["partitions"][0]["services"] and Loader().load_data("endpoints") == b
stock = JSONFileLoader().load_file(os.path.join(site, "botocore", "data", "endpoints"))
assert list(stock["partitions"][0]["services"]) == list(b["partitions"][0]["services"]) and stock == b
results["checked"] = "yes"
"""
    prepared, _ = probe(site, ON, services=(), extra=check)
    assert prepared["used"] is True and prepared["results"]["checked"] == "yes"


def write_model_copy(root, source_service, version, new_name, change=None):
    """Copy a service's version folder (uncompressed .json) to ``root/new_name/version``."""
    import gzip

    import botocore

    source = os.path.join(os.path.dirname(botocore.__file__), "data", source_service, version)
    target = os.path.join(root, new_name, version)
    os.makedirs(target)
    for name in os.listdir(source):
        opener = gzip.open if name.endswith(".gz") else open
        with opener(os.path.join(source, name), "rt", encoding="utf-8") as handle:
            data = json.load(handle)
        if change is not None and name.startswith("service-2.json"):
            change(data)
        with open(os.path.join(target, name.replace(".json.gz", ".json")), "w") as handle:
            json.dump(data, handle)
    return target


ADDED_SERVICE_CALL = """
import boto3
client = boto3.client("mydynamodb", region_name="us-east-1", endpoint_url=%r)
results["added in list"] = repr("mydynamodb" in boto3.session.Session().get_available_services())
results["added call"] = repr(client.list_tables()["ResponseMetadata"]["HTTPStatusCode"])
"""


@pytest.mark.parametrize("where", ["AWS_DATA_PATH", "~/.aws/models"])
def test_added_service_appears_and_its_client_works(site, stock, tmp_path, server, where):
    """A service added through AWS_DATA_PATH or ~/.aws/models is listed, and its client calls a
    DynamoDB-shaped server, with the index as without it."""
    home = tmp_path / "home"
    data = tmp_path / "data" if where == "AWS_DATA_PATH" else home / ".aws" / "models"
    write_model_copy(str(data), "dynamodb", "2012-08-10", "mydynamodb")
    env = {"AWS_DATA_PATH": str(data)} if where == "AWS_DATA_PATH" else {}
    extra = ADDED_SERVICE_CALL % server.url
    prepared, _ = probe(site, dict(ON, **env), extra=extra, home=home)
    opted_out, _ = probe(site, dict(OPT_OUT, **env), extra=extra, home=home)
    assert prepared["used"] is True
    assert_same(prepared, opted_out)
    assert prepared["results"]["added in list"] == "True"
    assert prepared["results"]["added call"] == "200"
    assert server.targets == ["DynamoDB_20120810.ListTables"] * 2
    assert "'mydynamodb'" in prepared["results"]["list_available_services service-2"]
    assert "'mydynamodb'" not in stock["results"]["list_available_services service-2"]


def test_overriding_model_and_endpoints_win(site, tmp_path):
    """A DynamoDB model and an endpoints.json in AWS_DATA_PATH that differ from the layer's are the
    ones loaded, with the index as without it."""
    import botocore

    data = tmp_path / "data"

    def rename_first_operation(model):
        model["metadata"]["serviceFullName"] = "Overridden DynamoDB"

    write_model_copy(str(data), "dynamodb", "2012-08-10", "dynamodb", rename_first_operation)
    with open(os.path.join(os.path.dirname(botocore.__file__), "data", "endpoints.json")) as handle:
        endpoints = json.load(handle)
    endpoints["partitions"][0]["partitionName"] = "Overridden partition"
    (data / "endpoints.json").write_text(json.dumps(endpoints))
    env = {"AWS_DATA_PATH": str(data)}
    prepared, _ = probe(site, dict(ON, **env))
    opted_out, _ = probe(site, dict(OPT_OUT, **env))
    assert prepared["used"] is True
    assert_same(prepared, opted_out)
    assert "Overridden DynamoDB" in prepared["results"]["load_service_model dynamodb service-2"]
    assert "Overridden partition" in prepared["results"]["load_data_with_path endpoints"]
    assert str(data) in prepared["results"]["load_data_with_path endpoints"]


def test_opt_out_and_switch_off_patch_nothing(site):
    """AWS_PYTHON_KEEPALIVE_PREPARED=0, or the layer switched off, leaves botocore's Loader as it is."""
    check = ("from botocore.loaders import Loader\n"
             "results['wrapped'] = repr(hasattr(Loader.list_available_services, '__wrapped__'))\n")
    for env in (OPT_OUT, {"AWS_PYTHON_KEEPALIVE": "0"}):
        result, _ = probe(site, env, services=(), extra=check)
        assert result["results"]["wrapped"] == "False" and result["used"] is False, env
        assert result["listed_at_creation"] > 400
    result, _ = probe(site, ON, services=(), extra=check)
    assert result["results"]["wrapped"] == "True"


def index_file(site):
    """The index prepare_data writes into a site folder, for the test venv's botocore."""
    import botocore

    return site / "aws_keepalive" / "prepared-data" / prepare_data.index_name(botocore.__version__)


def rewrite_index(site, change):
    path = index_file(site)
    index = pickle.loads(path.read_bytes())
    change(index)
    path.write_bytes(pickle.dumps(index, protocol=prepare_data.PROTOCOL))


def test_stale_index_is_ignored(tmp_path):
    """An index built from another botocore version is not used: stock loading, same results."""
    site = make_site(tmp_path)
    prepare_data.prepare(str(site))
    rewrite_index(site, lambda index: index["trees"]["botocore/data"].update(version="1.0.0"))
    result, stderr = probe(site, ON)
    assert result["used"] is False and result["listed_at_creation"] > 400
    assert "built for botocore 1.0.0" in stderr
    assert_same(result, probe(site, OPT_OUT)[0])


def test_stale_pre_parsed_file_is_read_from_disk(tmp_path):
    """A pre-parsed file whose source size differs from the build's is parsed from the file."""
    site = make_site(tmp_path)
    prepare_data.prepare(str(site))
    (index_file(site).parent / "stale.pickle").write_bytes(pickle.dumps({"stale-prepared": True}))

    def damage_endpoints(index):
        size, digest, _ = index["parsed"]["botocore/data/endpoints.json"]
        index["parsed"]["botocore/data/endpoints.json"] = (size + 1, digest, "stale.pickle")

    rewrite_index(site, damage_endpoints)
    result, _ = probe(site, ON, services=())
    assert result["used"] is True
    assert "stale-prepared" not in result["results"]["load_data_with_path endpoints"]
    assert "'partitions'" in result["results"]["load_data_with_path endpoints"]


def test_damaged_index_is_reported_once_and_ignored(tmp_path):
    """An unreadable index: one warning naming the file, then stock loading with stock's results."""
    site = make_site(tmp_path)
    prepare_data.prepare(str(site))
    index_file(site).write_bytes(b"not a pickle")
    result, stderr = probe(site, ON)
    assert result["used"] is False
    assert [line for line in stderr.splitlines() if "could not read" in line and index_file(site).name in line]
    assert_same(result, probe(site, OPT_OUT)[0])


def test_index_may_name_no_other_class(tmp_path):
    """The prepared data may only build OrderedDicts: a pre-parsed file naming another callable is
    refused (reported once, the file parsed instead), and so is an index naming one."""
    site = make_site(tmp_path)
    prepare_data.prepare(str(site))
    size, digest, _ = pickle.loads(index_file(site).read_bytes())["parsed"]["botocore/data/endpoints.json"]
    (index_file(site).parent / "call.pickle").write_bytes(pickle.dumps(os.getcwd))
    rewrite_index(site, lambda index: index["parsed"].update(
        {"botocore/data/endpoints.json": (size, digest, "call.pickle")}))
    result, stderr = probe(site, ON)
    assert result["used"] is True
    assert_same(result, probe(site, OPT_OUT)[0])
    assert len([line for line in stderr.splitlines() if "prepared data names posix.getcwd" in line]) == 1
    index_file(site).write_bytes(pickle.dumps({"format": prepare_data.FORMAT, "call": os.getcwd}))
    result, stderr = probe(site, ON, services=())
    assert result["used"] is False and "prepared data names posix.getcwd" in stderr


def test_damaged_pre_parsed_file_is_tried_once(tmp_path):
    """A pre-parsed file that cannot be loaded (truncated) is reported once and read no more: later
    Loaders parse the file as stock does, without reading the damaged one again first."""
    site = make_site(tmp_path)
    prepare_data.prepare(str(site))
    name = pickle.loads(index_file(site).read_bytes())["parsed"]["botocore/data/endpoints.json"][2]
    damaged = index_file(site).parent / name
    damaged.write_bytes(damaged.read_bytes()[:1000])
    check = """
from botocore.loaders import Loader
from aws_keepalive import prepared
reads = []
read_parsed = prepared._read_parsed
prepared._read_parsed = lambda name: reads.append(name) or read_parsed(name)
loaded = [Loader().load_data("endpoints") for _ in range(3)]
results["reads"] = repr(len(reads))
results["same"] = repr(loaded[0] == loaded[2] and "partitions" in loaded[0])
"""
    result, stderr = probe(site, ON, services=(), extra=check)
    assert result["used"] is True
    # The probe's clients met the damaged file first: the three Loaders after them read it no more.
    assert result["results"]["reads"] == "0" and result["results"]["same"] == "True"
    assert len([line for line in stderr.splitlines() if "could not use the prepared" in line]) == 1


def test_loader_subclass_without_file_loader_works(site):
    """A Loader subclass that answers from memory (no file_loader, no search paths, its own listing)
    still gets stock's load_service_model, with the index in use for other Loaders."""
    check = """
import botocore.loaders
class FromMemory(botocore.loaders.Loader):
    def __init__(self):
        self._cache = {}
        self._extras_processor = botocore.loaders.ExtrasProcessor()
    def list_available_services(self, type_name):
        return ["svc"]
    def determine_latest_version(self, service_name, type_name):
        return "v1"
    def load_data(self, name):
        return {"name": name}
    def _find_extras(self, service_name, type_name, api_version):
        return []
results["from memory"] = repr(FromMemory().load_service_model("svc", "service-2"))
"""
    result, _ = probe(site, ON, services=(), extra=check)
    assert result["used"] is True
    assert result["results"]["from memory"] == repr({"name": "svc/v1/service-2"})


def copy_of_botocore(folder):
    """``folder/botocore``: the test venv's botocore, its entries and its data folder's entries
    symlinked, the data folder itself a real one (a test may add to it or replace a file)."""
    import botocore

    source = os.path.dirname(botocore.__file__)
    target = folder / "botocore"
    target.mkdir(parents=True)
    for entry in os.listdir(source):
        if entry != "data":
            os.symlink(os.path.join(source, entry), target / entry)
    (target / "data").mkdir()
    for entry in os.listdir(os.path.join(source, "data")):
        os.symlink(os.path.join(source, "data", entry), target / "data" / entry)
    return target


def hook_site(tmp_path):
    """The hook flavor's shape: the layer's folder (the package and the prepared data of the test
    venv's botocore release, built from the venv's own copy) without any SDK; the function's SDK
    elsewhere on sys.path."""
    import botocore

    site = tmp_path / "hook"
    site.mkdir()
    shutil.copytree(os.path.join(LAYER, "aws_keepalive"), site / "aws_keepalive",
                    ignore=shutil.ignore_patterns("__pycache__", "prepared-data"))
    prepare_data.prepare(os.path.dirname(os.path.dirname(botocore.__file__)),
                         str(site / "aws_keepalive" / "prepared-data"))
    return site


def test_hook_flavor_answers_a_known_release_wherever_it_is(tmp_path):
    """Hook flavor: the prepared data of a release answers for that release's botocore and boto3
    imported from another folder (the runtime's /var/runtime): same results as stock, and creating
    the clients lists no other service folder than theirs."""
    import boto3

    site = hook_site(tmp_path)
    sdk = tmp_path / "runtime"
    copy_of_botocore(sdk)
    os.symlink(os.path.dirname(boto3.__file__), sdk / "boto3")
    paths = os.pathsep.join([str(site), str(sdk)])
    extra = "import botocore\nresults['from'] = botocore.__file__\n"
    result, stderr = probe(paths, ON, extra=extra)
    assert result["results"]["from"].startswith(str(sdk))
    assert result["answered"] == [str(sdk / "boto3" / "data"), str(sdk / "botocore" / "data")], stderr[-2000:]
    assert result["listed_beyond_created"] == 0 and result["listed_at_creation"] <= 8
    stock, _ = probe(paths, OPT_OUT, extra=extra)
    assert stock["listed_at_creation"] > 400
    assert_same(result, stock)


@pytest.mark.parametrize("change", ["added service folder", "endpoints.json changed", "service folder removed"])
def test_modified_copy_of_a_known_release_loads_as_stock(tmp_path, change):
    """A copy of a known release whose data folder's listing differs from the build's (a service
    folder added, a top-level file of another size, a service folder removed) is not answered from the index:
    stock loading, stock's results, the change seen."""
    import botocore

    site = hook_site(tmp_path)
    sdk = tmp_path / "runtime"
    data = copy_of_botocore(sdk) / "data"
    if change == "added service folder":
        write_model_copy(str(data), "dynamodb", "2012-08-10", "mydynamodb")
    elif change == "endpoints.json changed":
        os.unlink(data / "endpoints.json")
        with open(os.path.join(os.path.dirname(botocore.__file__), "data", "endpoints.json")) as handle:
            endpoints = json.load(handle)
        endpoints["partitions"][0]["partitionName"] = "Changed partition"
        (data / "endpoints.json").write_text(json.dumps(endpoints))
    else:
        os.unlink(data / "acm")
    result, stderr = probe(str(site) + os.pathsep + str(sdk), ON)
    assert result["used"] is True and str(data) not in result["answered"]
    assert "prepared data: %s is not listed as botocore %s's was at build time" % (
        data, botocore.__version__) in stderr
    assert result["listed_at_creation"] > 400
    assert_same(result, probe(str(site) + os.pathsep + str(sdk), OPT_OUT)[0])
    listed = result["results"]["list_available_services service-2"]
    assert ("'mydynamodb'" in listed) is (change == "added service folder")
    assert ("'acm'" in listed) is (change != "service folder removed")
    changed = "Changed partition" in result["results"]["load_data_with_path endpoints"]
    assert changed is (change == "endpoints.json changed")


def real_folder(link):
    """Replace a symlinked folder of copy_of_botocore's data folder by a real one whose entries are
    symlinks, so that a test may add to it."""
    source = os.readlink(link)
    os.unlink(link)
    link.mkdir()
    for entry in os.listdir(source):
        os.symlink(os.path.join(source, entry), link / entry)
    return link


NEW_TYPES = """
import boto3
client = boto3.client("s3", region_name="us-east-1")
loader = boto3.DEFAULT_SESSION._session.get_component("data_loader")
try:
    results["sts waiters"] = repr(loader.load_service_model("sts", "waiters-2"))
except Exception as error:
    results["sts waiters"] = type(error).__name__
dynamodb = boto3.client("dynamodb", region_name="us-east-1")
results["dynamodb version"] = loader.determine_latest_version("dynamodb", "service-2")
results["preview operation"] = repr("PreviewOperation" in dynamodb.meta.service_model.operation_names)
"""


def changed_inside_service_folders(tmp_path):
    """A hook-shaped layer and a copy of the test venv's release with the same service folders and
    top-level files, changed inside two service folders: a version folder added to dynamodb (a private
    preview build's newer API version, with an added operation) and a waiters-2.json added to sts's
    latest version folder.  Returns (layer site, SDK folder, its data folder)."""
    site = hook_site(tmp_path)
    sdk = tmp_path / "runtime"
    data = copy_of_botocore(sdk) / "data"
    versions = sorted(os.listdir(data / "dynamodb"))

    def add_operation(model):
        model["operations"]["PreviewOperation"] = dict(model["operations"]["ListTables"], name="PreviewOperation")

    preview = write_model_copy(str(tmp_path / "preview"), "dynamodb", versions[-1], "dynamodb", add_operation)
    os.symlink(preview, real_folder(data / "dynamodb") / "2099-01-01")
    sts_version = sorted(os.listdir(data / "sts"))[-1]
    assert not [name for name in os.listdir(data / "sts" / sts_version) if name.startswith("waiters-2")]
    (real_folder(real_folder(data / "sts") / sts_version) / "waiters-2.json").write_text(
        json.dumps({"version": 2, "waiters": {"Added": {"operation": "GetCallerIdentity", "delay": 1,
                                                         "maxAttempts": 1, "acceptors": []}}}))
    return site, sdk, data


def test_copy_of_a_known_release_changed_inside_service_folders_loads_as_stock(tmp_path):
    """A copy of a known release changed inside service folders (changed_inside_service_folders):
    the newer API version, its operation and the added waiters are seen, as stock sees them, and
    that data folder is no longer answered from the index."""
    site, sdk, data = changed_inside_service_folders(tmp_path)
    paths = str(site) + os.pathsep + str(sdk)
    result, stderr = probe(paths, ON, services=(), extra=NEW_TYPES)
    assert result["used"] is True and str(data) not in result["answered"], stderr[-2000:]
    assert "prepared data: %s is not listed as it was at build time" % (data / "dynamodb") in stderr
    assert result["results"]["dynamodb version"] == "2099-01-01"
    assert result["results"]["preview operation"] == "True"
    assert "Added" in result["results"]["sts waiters"]
    assert_same(result, probe(paths, OPT_OUT, services=(), extra=NEW_TYPES)[0])


def test_changed_service_seen_after_answers_were_cached(tmp_path):
    """A Loader that cached the index's listing of a model type (sts without waiters) loads the
    added sts waiters when asked for them: the check of sts's folder drops the cached answers."""
    site, sdk, _ = changed_inside_service_folders(tmp_path)
    lines = (
        "import boto3\n"
        "boto3.client('s3', region_name='us-east-1')\n"
        "loader = boto3.DEFAULT_SESSION._session.get_component('data_loader')\n"
        "before = 'sts' in loader.list_available_services('waiters-2')\n"
        "waiters = loader.load_service_model('sts', 'waiters-2')\n"
        "out = [before, list(waiters['waiters']), 'sts' in loader.list_available_services('waiters-2')]\n"
    )
    assert activated(site, lines, dict(ON, PYTHONPATH=str(sdk))) == [False, ["Added"], True]


def test_release_without_index_is_left_alone(tmp_path):
    """A botocore release the build prepared nothing for (a function's own copy of another
    version): stock loading."""
    import botocore

    site = make_site(tmp_path)
    prepare_data.prepare(str(site))
    index_file(site).rename(index_file(site).parent / "botocore-0.0.1.pickle")
    result, stderr = probe(site, ON, services=())
    assert result["used"] is False and result["listed_at_creation"] > 400
    assert "prepared data: none for botocore %s" % botocore.__version__ in stderr


# Activates the layer from a site folder, imports botocore.session (the patch runs), then runs the
# lines passed as the second argument and prints the JSON of ``out``.
ACTIVATED = (
    "import json, sys\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "import aws_keepalive\n"
    "aws_keepalive.activate('test')\n"
    "import botocore.session\n"
    "exec(sys.argv[2])\n"
    "print(json.dumps(out))\n"
)


def activated(site, lines, env):
    """Run ACTIVATED with ``lines``; returns its ``out``."""
    completed = subprocess.run([sys.executable, "-c", ACTIVATED, str(site), lines], capture_output=True,
                               text=True, timeout=120, env=dict(BASE_ENV, **env))
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.splitlines()[-1])


def test_no_index_imports_neither_prepared_nor_pickle(tmp_path):
    """No prepared data for the imported release (the package alone, the function's own botocore):
    importing botocore.session with the layer on loads no aws_keepalive.prepared and no pickle."""
    site = tmp_path / "hook"
    site.mkdir()
    shutil.copytree(os.path.join(LAYER, "aws_keepalive"), site / "aws_keepalive",
                    ignore=shutil.ignore_patterns("__pycache__", "prepared-data"))
    lines = "out = [n for n in ('pickle', 'aws_keepalive.prepared', 'aws_keepalive.patch') if n in sys.modules]"
    # Stock botocore.session imports no pickle (else this test would prove nothing).
    assert activated(site, lines, {"AWS_PYTHON_KEEPALIVE": "0"}) == []
    assert activated(site, lines, {"AWS_PYTHON_KEEPALIVE": "1"}) == ["aws_keepalive.patch"]


def test_full_flavor_imports_pickle_at_first_use_not_at_patch(site):
    """With the index (full flavor): patching botocore imports prepared.py but not pickle; the first
    client reads the index (and imports pickle) and uses it."""
    lines = (
        "from aws_keepalive import prepared\n"
        "at_patch = 'pickle' in sys.modules\n"
        "botocore.session.get_session().create_client('dynamodb', region_name='us-east-1')\n"
        "out = [at_patch, 'pickle' in sys.modules, bool(prepared._state)]\n"
    )
    assert activated(site, lines, ON) == [False, True, True]



def same_length_edit(data, name, old, new):
    """Replace ``data/name`` (a symlink into the test venv's botocore) by a real file with the first
    ``old`` replaced by ``new`` (as long), its mtime set back to the original's: only the bytes say
    that it changed."""
    source = os.path.realpath(data / name)
    content = open(source, "rb").read()
    assert len(old) == len(new) and old in content
    os.unlink(data / name)
    (data / name).write_bytes(content.replace(old, new, 1))
    info = os.stat(source)
    os.utime(data / name, ns=(info.st_atime_ns, info.st_mtime_ns))


THROTTLED_CALL = """
import boto3, botocore.exceptions
client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=%r)
try:
    client.list_tables()
except botocore.exceptions.ClientError as error:
    results["throttled"] = repr((error.response["Error"]["Code"], error.response["ResponseMetadata"]["RetryAttempts"]))
"""


def test_same_length_edit_of_retry_json_is_obeyed(tmp_path):
    """The issue's case: a copy of a known release whose _retry.json gives DynamoDB 3 attempts
    instead of 10 (same length, same mtime): a throttled call is sent 3 times, as stock sends it."""
    site = hook_site(tmp_path)
    sdk = tmp_path / "runtime"
    data = copy_of_botocore(sdk) / "data"
    dynamodb = open(data / "_retry.json", "rb").read().index(b'"dynamodb"')
    content = open(data / "_retry.json", "rb").read()
    at = content.index(b'"max_attempts": 10', dynamodb)
    same_length_edit(data, "_retry.json", content[at:at + 18], b'"max_attempts":  3')
    paths = str(site) + os.pathsep + str(sdk)
    sent = {}
    for name, env in (("stock", OPT_OUT), ("layer", ON)):
        with DynamoDBShapedServer(throttle=True) as server:
            result, _ = probe(paths, dict(env, AWS_RETRY_MODE="legacy"), services=(), extra=THROTTLED_CALL % server.url)
        sent[name] = (server.requests, result["results"]["throttled"])
    assert sent["stock"] == (3, repr(("ProvisionedThroughputExceededException", 2)))
    assert sent["layer"] == sent["stock"]


@pytest.mark.parametrize("name, old, new", [
    ("_retry.json", b'"max_attempts": 5', b'"max_attempts": 7'),
    ("endpoints.json", b'"partitionName" : "AWS Standard"', b'"partitionName" : "AWS Standerd"'),
    ("partitions.json", b'"us-east-1"', b'"us-east-9"'),
    ("sdk-default-configuration.json", b'"connectTimeoutInMillis": 1100', b'"connectTimeoutInMillis": 1900'),
])
def test_same_length_edit_of_any_pickled_file_is_seen(tmp_path, name, old, new):
    """Each top-level file answered from a pickle, changed in a few bytes with its length and mtime
    kept: loaded as stock loads it (the change seen), the other files still answered."""
    site = hook_site(tmp_path)
    sdk = tmp_path / "runtime"
    data = copy_of_botocore(sdk) / "data"
    same_length_edit(data, name, old, new)
    paths = str(site) + os.pathsep + str(sdk)
    result, _ = probe(paths, ON, services=())
    assert result["used"] is True and str(data) in result["answered"]
    loaded = result["results"]["load_data_with_path " + name[:-len(".json")]]
    if b":" in new:  # a key and its new value, as an OrderedDict's repr shows them (3.12+ and before)
        key, value = json.loads(b"{" + new + b"}").popitem()
        assert "%r: %r" % (key, value) in loaded or "(%r, %r)" % (key, value) in loaded
    else:
        assert repr(json.loads(new)) in loaded
    assert_same(result, probe(paths, OPT_OUT, services=())[0])


# Each replaces one method by a logging wrapper, on the class (Loader.load_data: a pin only, the
# layer never bypassed it) or on the session's file loader.
OVERRIDES = {
    name: "botocore.loaders.{0} = logged(botocore.loaders.{0})".format(name)
    for name in ("JSONFileLoader.load_file", "JSONFileLoader._load_file", "JSONFileLoader.exists",
                 "Loader.load_data", "Loader._potential_locations")
}
OVERRIDES["instance load_file"] = "loader.file_loader.load_file = logged(loader.file_loader.load_file)"

# The override is made after botocore is imported (and patched), before the first client; it logs
# every call, which must be the calls stock makes.
OVERRIDDEN_CALLS = """
import botocore.loaders, botocore.session
calls = []
def logged(function):
    def replacement(*args, **kwargs):
        calls.append(function.__name__)
        return function(*args, **kwargs)
    return replacement
session = botocore.session.get_session()
loader = session.get_component("data_loader")
%s
session.create_client("dynamodb", region_name="us-east-1")
loader.load_data("endpoints")
loader.list_available_services("waiters-2")
from aws_keepalive import prepared
out = [sorted(set(calls)), len(calls), bool(prepared._state)]
"""


@pytest.mark.parametrize("override", sorted(OVERRIDES))
def test_overridden_loader_method_sees_every_call_stock_makes(site, override):
    """A class-level (or instance) override of a loader method botocore calls for data files is
    called as often as in stock: with it in place, nothing is answered from the index."""
    lines = OVERRIDDEN_CALLS % OVERRIDES[override]
    stock = activated(site, lines, OPT_OUT)
    layer = activated(site, lines, ON)
    assert stock[1] > 0
    assert layer[:2] == stock[:2]


NONE_INPUTS = """
import botocore.session, botocore.exceptions
session = botocore.session.get_session()
loader = session.get_component("data_loader")
out = {}
for label, call in (("get_data", lambda: session.get_data(None)),
                    ("load_data", lambda: loader.load_data(None)),
                    ("list_api_versions", lambda: loader.list_api_versions(None, "service-2")),
                    ("determine_latest_version", lambda: loader.determine_latest_version(None, "service-2")),
                    ("list_available_services", lambda: loader.list_available_services(None))):
    try:
        out[label] = repr(call())
    except Exception as error:
        out[label] = type(error).__name__
"""


def test_none_inputs_raise_what_stock_raises(site):
    """None as a data path, service or type name raises the exception type stock raises
    (DataNotFoundError where stock raises it), index in use or not."""
    stock = activated(site, NONE_INPUTS, OPT_OUT)
    assert stock["get_data"] == stock["load_data"] == "DataNotFoundError"
    assert stock["list_api_versions"] == stock["determine_latest_version"] == "DataNotFoundError"
    assert activated(site, NONE_INPUTS, ON) == stock


# A search-path entry that is a *file* named as the service: stock's _potential_locations(...,
# is_dir=True) yields it (its must_exist check falls back to os.path.exists) and os.listdir raises
# NotADirectoryError; in the build's data folder the same for its top-level files.
FILE_AS_SERVICE = """
import os, botocore.session
data_path = os.environ["AWS_DATA_PATH"]
with open(os.path.join(data_path, "myservice"), "w") as handle:
    handle.write("{}")
loader = botocore.session.get_session().get_component("data_loader")
out = {}
for service in ("myservice", "endpoints.json", "_retry.json"):
    for label, call in (("list_api_versions", loader.list_api_versions),
                        ("determine_latest_version", loader.determine_latest_version)):
        try:
            out[label + " " + service] = repr(call(service, "service-2"))
        except Exception as error:
            out[label + " " + service] = type(error).__name__
"""


def test_a_file_named_as_a_service_raises_what_stock_raises(site, tmp_path):
    """A file where a service folder would be (in AWS_DATA_PATH, or a top-level file of the build's
    data folder) makes list_api_versions / determine_latest_version raise NotADirectoryError, as
    stock does, not DataNotFoundError."""
    env = {"AWS_DATA_PATH": str(tmp_path)}
    stock = activated(site, FILE_AS_SERVICE, dict(OPT_OUT, **env))
    assert set(stock.values()) == {"NotADirectoryError"}
    assert activated(site, FILE_AS_SERVICE, dict(ON, **env)) == stock


# Issue 34 item 4: code that wraps the Loader's search-path methods on the class before boto3 is
# imported (botocore.loaders imported, botocore not patched yet: the patch runs at
# botocore.session's import).  Each style counts its calls by method name.
EARLY_WRAPPERS = {
    "plain wrapper": """
def wrapper_of(name, function):
    def wrapper(self, *args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        return function(self, *args, **kwargs)
    return wrapper
""",
    "functools.wraps": """
import functools
def wrapper_of(name, function):
    @functools.wraps(function)
    def wrapper(self, *args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        return function(self, *args, **kwargs)
    return wrapper
""",
    "instance_cache override": """
def wrapper_of(name, function):
    def override(self, *args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        return function(self, *args, **kwargs)
    override.__name__ = override.__qualname__ = name
    return botocore.loaders.instance_cache(override)
""",
}

EARLY_WRAPPED_CALLS = """
import botocore.loaders
assert "botocore.session" not in sys.modules
calls = {}
%s
for name in ("load_data_with_path", "list_available_services", "list_api_versions"):
    setattr(botocore.loaders.Loader, name, wrapper_of(name, getattr(botocore.loaders.Loader, name)))
import boto3
boto3.client("dynamodb", region_name="us-east-1")
boto3.client("s3", region_name="us-east-1")
boto3.session.Session().client("sqs", region_name="eu-west-1")
from aws_keepalive import prepared
out = [calls, bool(prepared._state)]
"""


@pytest.mark.parametrize("style", sorted(EARLY_WRAPPERS))
def test_loader_methods_wrapped_before_import_are_called_as_in_stock(site, style):
    """Loader.load_data_with_path / list_available_services / list_api_versions wrapped on the class
    before boto3 is imported: each wrapper is called exactly as often as with the layer off (it was
    0/0/0 against stock's 12/4/4), the debug line names each one, and the index still answers
    what is left (load_service_model's checks)."""
    script = ACTIVATED.replace("import botocore.session\n", "") % ()
    runs = []
    for env in ({"AWS_PYTHON_KEEPALIVE": "0"}, ON):
        completed = subprocess.run([sys.executable, "-c", script, str(site),
                                    EARLY_WRAPPED_CALLS % EARLY_WRAPPERS[style]],
                                   capture_output=True, text=True, timeout=120, env=dict(BASE_ENV, **env))
        assert completed.returncode == 0, completed.stderr[-3000:]
        runs.append(json.loads(completed.stdout.splitlines()[-1]))
    stock, layer = runs
    assert all(stock[0].get(name) for name in ("load_data_with_path", "list_available_services",
                                               "list_api_versions")), stock
    assert layer[0] == stock[0] and layer[1] is True
    for name in ("load_data_with_path", "list_available_services", "list_api_versions"):
        assert "prepared data: Loader.%s is not botocore's own" % name in completed.stderr


def test_a_changed_model_of_a_pre_parsed_service_is_loaded_from_its_bytes(tmp_path):
    """DynamoDB's latest service-2.json.gz (pre-parsed by the build) rewritten in a copy of a known
    release, one name changed: the client's model has the change, as stock's has."""
    import gzip

    site = hook_site(tmp_path)
    sdk = tmp_path / "runtime"
    data = copy_of_botocore(sdk) / "data"
    service = data / "dynamodb"
    versions = os.listdir(service)
    source = os.path.realpath(service)
    os.unlink(service)
    service.mkdir()
    for version in versions:
        os.symlink(os.path.join(source, version), service / version)
    latest = service / max(versions)
    os.unlink(latest)
    latest.mkdir()
    for name in os.listdir(os.path.join(source, max(versions))):
        os.symlink(os.path.join(source, max(versions), name), latest / name)
    model = gzip.decompress(open(latest / "service-2.json.gz", "rb").read())
    assert model.count(b'"Amazon DynamoDB"') == 1
    os.unlink(latest / "service-2.json.gz")
    (latest / "service-2.json.gz").write_bytes(gzip.compress(model.replace(b'"Amazon DynamoDB"',
                                                                           b'"Amazon DynamoDX"'), mtime=0))
    paths = str(site) + os.pathsep + str(sdk)
    extra = ("results['name'] = boto3.client('dynamodb', region_name='us-east-1')"
             ".meta.service_model.metadata['serviceFullName']\n")
    found = {}
    for name, env in (("stock", OPT_OUT), ("layer", ON)):
        result, _ = probe(paths, env, services=(), extra=extra)
        found[name] = result["results"]["name"]
    assert found == {"stock": "Amazon DynamoDX", "layer": "Amazon DynamoDX"}
