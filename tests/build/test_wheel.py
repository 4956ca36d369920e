"""tools/packaging/build_wheel.py through `make wheel`: bytes, contents, metadata, and the wheel at work.

At work means on real sockets: the wheel is installed by a real installer (pip ``--target`` into a
function folder; uv into a venv), a botocore client talks to a local HTTP server, and the pooled
socket's keep-alive options are read back with getsockopt.  Under the runtime stand-in
(lab/standin/lambda_env.py: LambdaFunction), the task folder is a site directory, as the managed runtime and
the AWS base images make it: that is what runs the wheel's ``.pth``.
"""

import base64
import csv
import hashlib
import importlib.metadata
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
from conftest import REPO, env

sys.path.insert(0, REPO)
from tools.packaging import build_wheel  # noqa: E402
from tools.packaging import layer_info  # noqa: E402
from lab.standin.lambda_env import LambdaFunction  # noqa: E402
from lab.standin.runtime_prefix import base_python  # noqa: E402

KEEPALIVE_PROBE = os.path.join(REPO, "tests", "hook", "task", "keepalive_probe.py")
UV = os.path.join(REPO, ".venv", "uv", "bin", "uv")
VERSION = build_wheel.source_version(os.path.join(REPO, "layer"))
DIST_INFO = "aws_python_keepalive-%s.dist-info" % VERSION
# Values on with the defaults (settings.py): SO_KEEPALIVE, idle 60 s, interval 10 s, 3 probes.
ON_OPTIONS = {"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 60, "TCP_KEEPINTVL": 10, "TCP_KEEPCNT": 3}

# The function: a DynamoDB-shaped HTTP server on loopback, one botocore client talking to it, and the
# options of the client's pooled socket.  Also runnable as a script (the "any Python process" case).
HANDLER = r'''
import json
import botocore.session
from keepalive_probe import client_socket_options, list_tables_server


def handler(event, context):
    with list_tables_server() as port:
        client = botocore.session.get_session().create_client(
            "dynamodb", endpoint_url="http://127.0.0.1:%d" % port, region_name="us-east-1",
            aws_access_key_id="test", aws_secret_access_key="test")
        client.list_tables()
        import aws_keepalive
        return {"sockets": client_socket_options(client), "hook": aws_keepalive.__file__}


if __name__ == "__main__":
    print(json.dumps(handler(None, None)))
'''


def make_wheel(build_dir, umask=None, **extra_env):
    """Run `make wheel` into ``build_dir``; returns (wheel path, dict of the printed fields)."""
    command = "make --no-print-directory -C %s wheel BUILD_DIR=%s" % (REPO, build_dir)
    if umask is not None:
        command = "umask %03o; %s" % (umask, command)
    completed = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env(**extra_env))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    fields = dict(re.findall(r"^(\w+):\s+(.*)$", completed.stdout, re.MULTILINE))
    return fields["wheel"], fields


def sha256(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def source_files():
    """{archive path: bytes} the wheel must hold from layer/: the package, the .pth, its PEP 829
    twin aws_keepalive.start and the module that names (_aws_keepalive_site.py)."""
    layer = os.path.join(REPO, "layer")
    expected = {}
    for folder, dirs, names in os.walk(os.path.join(layer, "aws_keepalive")):
        dirs[:] = [name for name in dirs if name != "__pycache__"]
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, "rb") as handle:
                    expected[os.path.relpath(path, layer)] = handle.read()
    for name in ("aws_keepalive.pth", "aws_keepalive.start", "_aws_keepalive_site.py"):
        with open(os.path.join(layer, name), "rb") as handle:
            expected[name] = handle.read()
    return expected


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel built once by `make wheel`: (path, printed fields)."""
    return make_wheel(str(tmp_path_factory.mktemp("wheel")))


@pytest.fixture(scope="module")
def task_install(wheel, tmp_path_factory):
    """A function folder: the wheel installed by pip --target (offline), plus the handler."""
    task = tmp_path_factory.mktemp("task")
    completed = subprocess.run(
        [str(base_python("3.12")), "-m", "pip", "install", "-q", "--no-index", "--no-deps",
         "--no-compile", "--target", str(task), wheel[0]],
        capture_output=True, text=True, env=env(PIP_CONFIG_FILE=os.devnull),
    )
    assert completed.returncode == 0, completed.stderr
    (task / "wheel_probe.py").write_text(HANDLER)
    shutil.copy(KEEPALIVE_PROBE, task)
    return str(task)


def run_function(task, opt=None, **variables):
    """One invocation under the stand-in; returns (result, the hook's lines from init and invoke)."""
    with LambdaFunction(task, "wheel_probe.handler", python="3.12", opt=opt, env=variables) as function:
        invocation = function.invoke({})
        assert invocation.ok, invocation.stderr
        lines = [line.text for line in function.init_lines] + invocation.stdout + invocation.stderr
    return invocation.result, [line for line in lines if line.startswith("aws-keepalive:")]


def test_make_wheel_names_the_version_and_prints_sha256_and_size(wheel):
    """The file is aws_python_keepalive-<__version__>-py3-none-any.whl; sha256 and size printed match it."""
    path, fields = wheel
    assert os.path.basename(path) == "aws_python_keepalive-%s-py3-none-any.whl" % VERSION
    assert fields["sha256"] == sha256(path)
    assert fields["size"] == "%d bytes" % os.path.getsize(path)


def test_two_builds_give_the_same_bytes(wheel, tmp_path):
    """A second build (other folder, umask and hash seed) gives the same sha256."""
    again, fields = make_wheel(str(tmp_path / "elsewhere"), umask=0o077, PYTHONHASHSEED="12345")
    assert fields["sha256"] == wheel[1]["sha256"] == sha256(again)


def test_wheel_holds_the_package_pth_and_start_only(wheel):
    """Package, .pth and .start (with its module) byte for byte as in layer/, plus the dist-info; no
    boto3/botocore, no *customize."""
    with zipfile.ZipFile(wheel[0]) as archive:
        names = archive.namelist()
        payload = {name: archive.read(name) for name in names if not name.startswith(DIST_INFO + "/")}
        infos = archive.infolist()
    assert payload == source_files()
    assert sorted(set(names) - set(payload)) == sorted(
        DIST_INFO + "/" + name for name in ("METADATA", "WHEEL", "entry_points.txt", "top_level.txt", "LICENSE",
                                            "NOTICE", "RECORD"))
    assert not [name for name in names if name.split("/")[0] in ("boto3", "botocore", "urllib3")]
    assert not [name for name in names if "customize" in name]
    for info in infos:
        assert info.date_time == (1980, 1, 1, 0, 0, 0), info.filename
        assert info.external_attr >> 16 == 0o100644, info.filename
    assert names[-1] == DIST_INFO + "/RECORD"


def test_metadata_requires_python_39_and_no_dependency(wheel):
    """METADATA: name, the one version, Requires-Python >=3.9, and no Requires-Dist (no boto3/botocore)."""
    with zipfile.ZipFile(wheel[0]) as archive:
        text = archive.read(DIST_INFO + "/METADATA").decode()
        tags = archive.read(DIST_INFO + "/WHEEL").decode()
    headers = text.split("\n\n", 1)[0]
    assert "Name: aws-python-keepalive\n" in headers
    assert "Version: %s\n" % VERSION in headers
    assert "Requires-Python: >=3.9\n" in headers
    assert "Requires-Dist" not in text
    assert "Tag: py3-none-any\n" in tags and "Root-Is-Purelib: true\n" in tags


def test_record_lists_every_file_with_its_sha256_and_size(wheel):
    """RECORD has one row per file with the right urlsafe-base64 sha256 and size; RECORD itself unhashed."""
    with zipfile.ZipFile(wheel[0]) as archive:
        rows = list(csv.reader(io.StringIO(archive.read(DIST_INFO + "/RECORD").decode())))
        contents = {name: archive.read(name) for name in archive.namelist()}
    assert sorted(row[0] for row in rows) == sorted(contents)
    for path, digest, size in rows:
        if path == DIST_INFO + "/RECORD":
            assert (digest, size) == ("", "")
            continue
        expected = base64.urlsafe_b64encode(hashlib.sha256(contents[path]).digest()).rstrip(b"=").decode()
        assert digest == "sha256=" + expected, path
        assert int(size) == len(contents[path]), path


def test_one_version_for_wheel_layer_description_and_debug_line(wheel, task_install):
    """__version__ is the wheel's version, the layer description's, and the one the debug line prints."""
    description = layer_info.description_from_source(
        os.path.join(REPO, "layer", "requirements.txt"), os.path.join(REPO, "layer", "aws_keepalive", "__init__.py"))
    assert description.startswith("aws-python-keepalive %s:" % VERSION)
    _, lines = run_function(task_install, AWS_PYTHON_KEEPALIVE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    assert any("aws-keepalive %s on (via pth)" % VERSION in line for line in lines), lines


def test_installed_entry_point_is_found_by_importlib_metadata(task_install):
    """After pip --target, importlib.metadata finds the opentelemetry_pre_instrument entry point there."""
    (distribution,) = [d for d in importlib.metadata.distributions(path=[task_install])
                       if d.metadata["Name"] == "aws-python-keepalive"]
    assert distribution.version == VERSION
    (entry_point,) = [e for e in distribution.entry_points if e.group == "opentelemetry_pre_instrument"]
    assert entry_point.value == "aws_keepalive:opentelemetry_pre_instrument"


def test_bundled_in_the_task_folder_turns_keepalive_on(task_install):
    """Installed with pip --target into the function folder, no layer: the pooled socket carries 60/10/3."""
    result, lines = run_function(task_install, AWS_PYTHON_KEEPALIVE="1")
    assert result["hook"].startswith(task_install + os.sep)
    assert result["sockets"], result
    for options in result["sockets"]:
        assert {name: options[name] for name in ON_OPTIONS} == ON_OPTIONS
    assert lines == []  # on, and silent without the debug switch


def test_bundled_without_the_variable_does_nothing(task_install):
    """Same folder, AWS_PYTHON_KEEPALIVE unset: no SO_KEEPALIVE on the socket, no line from the hook."""
    result, lines = run_function(task_install)
    assert result["sockets"] and all(options["SO_KEEPALIVE"] == 0 for options in result["sockets"])
    assert lines == []


def test_bundled_and_the_layer_activate_once(task_install, opt):
    """Wheel in the task folder and the built layer on /opt: one activation (the task's copy), no warning."""
    result, lines = run_function(task_install, opt=opt, AWS_PYTHON_KEEPALIVE="1", AWS_PYTHON_KEEPALIVE_DEBUG="1")
    assert result["hook"].startswith(task_install + os.sep)
    for options in result["sockets"]:
        assert {name: options[name] for name in ON_OPTIONS} == ON_OPTIONS
    assert len([line for line in lines if " on (via " in line]) == 1, lines
    assert not [line for line in lines if " WARN " in line], lines


@pytest.fixture(scope="module")
def venv_python(wheel, tmp_path_factory):
    """A venv holding the layer's pinned botocore and the wheel, both installed by uv: its python."""
    venv = tmp_path_factory.mktemp("venv")
    tools_env = env(UV_NATIVE_TLS="1", UV_NO_PROGRESS="1")
    subprocess.run([UV, "venv", "-q", "--python", str(base_python("3.12")), str(venv)], check=True, env=tools_env)
    python = str(venv / "bin" / "python")
    subprocess.run([UV, "pip", "install", "-q", "--python", python, "--require-hashes",
                    "-r", os.path.join(REPO, "layer", "requirements.txt")], check=True, env=tools_env)
    subprocess.run([UV, "pip", "install", "-q", "--python", python, "--no-deps", "--offline", wheel[0]],
                   check=True, env=tools_env)
    return python


@pytest.mark.parametrize("switch", ["1", None], ids=["on", "off"])
def test_installed_in_a_venv_any_python_process(switch, venv_python, tmp_path):
    """In a venv's site-packages with botocore, a plain `python script.py` is on (60/10/3) or untouched."""
    (tmp_path / "wheel_probe.py").write_text(HANDLER)
    shutil.copy(KEEPALIVE_PROBE, tmp_path)
    variables = {"AWS_PYTHON_KEEPALIVE": switch} if switch else {}
    completed = subprocess.run([venv_python, "wheel_probe.py"], cwd=str(tmp_path), capture_output=True, text=True,
                               env=env(**variables))
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert os.sep + "site-packages" + os.sep in result["hook"]
    assert result["sockets"]
    for options in result["sockets"]:
        if switch:
            assert {name: options[name] for name in ON_OPTIONS} == ON_OPTIONS
        else:
            assert options["SO_KEEPALIVE"] == 0


def test_wheel_carries_the_license_and_notice(wheel):
    """The dist-info holds the repository's LICENSE (Apache-2.0) and NOTICE byte for byte, and METADATA
    names both as License-File (the wheel carried no license text before)."""
    with zipfile.ZipFile(wheel[0]) as archive:
        for name in ("LICENSE", "NOTICE"):
            with open(os.path.join(REPO, name), "rb") as handle:
                assert archive.read("%s/%s" % (DIST_INFO, name)) == handle.read(), name
        headers = archive.read(DIST_INFO + "/METADATA").decode().split("\n\n", 1)[0]
    assert "License: Apache-2.0\nLicense-File: LICENSE\nLicense-File: NOTICE\n" in headers
    with open(os.path.join(REPO, "LICENSE")) as handle:
        text = handle.read()
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
