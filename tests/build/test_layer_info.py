"""tools/packaging/layer_info.py: the description carrying the layer, boto3 and botocore versions."""

import os
import re
import zipfile

import pytest
from conftest import REPO

from tools.packaging import layer_info


def test_description_names_layer_boto3_and_botocore():
    """The description states the layer's, boto3's and botocore's versions."""
    text = layer_info.description("0.1.0", "1.44.5", "1.44.6")
    assert text.startswith("aws-python-keepalive 0.1.0:")
    assert "boto3 1.44.5, botocore 1.44.6" in text


def test_description_fits_lambdas_limit():
    """A long service list is cut to Lambda's 256 characters."""
    text = layer_info.description("0.1.0", "1", "1", services=["service%d" % i for i in range(100)])
    assert len(text) == 256 and text.endswith("...")


def test_versions_come_from_the_pins_and_the_hook():
    """Pins are read from a hash-pinned requirements file, the hook version from __version__."""
    assert layer_info.pinned_versions("boto3==1.2.3 \\\n    --hash=sha256:aa\nbotocore==1.2.4 \\\n") == {
        "boto3": "1.2.3", "botocore": "1.2.4"}
    assert layer_info.hook_version_from_source('"""doc"""\n__version__ = "9.8.7"\n') == "9.8.7"
    with pytest.raises(ValueError):
        layer_info.pinned_versions("boto3==1.2.3\n")


def test_zip_description_matches_the_source_and_marks_trimmed_builds(layer):
    """A full zip is described exactly like the source tree (no service list)."""
    source = layer_info.description_from_source(
        os.path.join(REPO, "layer", "requirements.txt"), os.path.join(REPO, "layer", "aws_keepalive", "__init__.py"))
    assert layer_info.description_from_zip(layer[0]) == source
    assert layer_info.zip_info(layer[0])["services"] is None


def test_trimmed_zip_lists_its_services(trimmed):
    """A zip built with SERVICES=dynamodb,s3 says so in its description."""
    assert layer_info.zip_info(trimmed[0])["services"] == ["dynamodb", "s3"]
    assert layer_info.description_from_zip(trimmed[0]).endswith("; services: dynamodb,s3")


def test_trimmed_zip_record_keeps_only_the_removed_models_lines(trimmed):
    """botocore's RECORD in a trimmed zip names files the zip lacks only under botocore/data/ (the
    removed models, which layer_info reads), and no path outside the install folder."""
    with zipfile.ZipFile(trimmed[0]) as archive:
        inside = set(archive.namelist())
        record = next(name for name in inside if re.fullmatch(r"python/botocore-[^/]+\.dist-info/RECORD", name))
        listed = [line.split(",")[0] for line in archive.read(record).decode().splitlines()]
    missing = [path for path in listed if "python/" + path not in inside]
    assert missing and all(path.startswith("botocore/data/") for path in missing), missing[:5]
    assert not [path for path in listed if path.startswith("..")]


def test_write_template_rewrites_only_the_layer_description(tmp_path):
    """--write-template replaces the one layer Description line and nothing else."""
    template = tmp_path / "template.yaml"
    template.write_text('Description: stack\nX:\n  Description: "aws-python-keepalive 0.0.1: old"\n')
    layer_info.write_template(str(template), "aws-python-keepalive 0.2.0: new")
    assert template.read_text() == 'Description: stack\nX:\n  Description: "aws-python-keepalive 0.2.0: new"\n'


def test_write_template_rewrites_the_hook_flavors_line_apart(tmp_path):
    """With a hook text, the hook layer's Description line is rewritten too, each line with its own text."""
    template = tmp_path / "template.yaml"
    template.write_text('A:\n  Description: "aws-python-keepalive 0.0.1: old"\n'
                        'B:\n  Description: "aws-python-keepalive-hook 0.0.1: old"\n')
    layer_info.write_template(str(template), "aws-python-keepalive 0.2.0: new", "aws-python-keepalive-hook 0.2.0: h")
    assert template.read_text() == ('A:\n  Description: "aws-python-keepalive 0.2.0: new"\n'
                                    'B:\n  Description: "aws-python-keepalive-hook 0.2.0: h"\n')


def test_hook_zip_is_described_as_the_hook_flavor(hook_layer):
    """A hook-only zip (no botocore inside) has its own name and says it brings no SDK."""
    info = layer_info.zip_info(hook_layer[0])
    assert info["flavor"] == "hook" and info["botocore"] is None
    text = layer_info.description_from_zip(hook_layer[0])
    assert text == layer_info.hook_description(info["hook"])
    assert text.startswith("aws-python-keepalive-hook %s:" % info["hook"]) and "brings no SDK" in text
    assert len(text) <= layer_info.MAX_DESCRIPTION
