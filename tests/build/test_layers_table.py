"""tools/release/layers_table.py: the ARN table of the release notes, from layers.json."""

from tools.release import layers_table


def test_one_row_per_region_one_column_per_layer():
    """Regions sorted, layers sorted; a region a layer is missing from says so."""
    table = {"aws-python-keepalive-hook": {"us-east-1": "arn:h1"},
             "aws-python-keepalive": {"us-east-1": "arn:f1", "eu-west-1": "arn:f2"}}
    assert layers_table.render(table).splitlines() == [
        "| region | `aws-python-keepalive` | `aws-python-keepalive-hook` |",
        "|---|---|---|",
        "| eu-west-1 | `arn:f2` | not published |",
        "| us-east-1 | `arn:f1` | `arn:h1` |",
    ]


def test_nothing_published_says_so():
    """An empty layers.json renders a sentence, not an empty table."""
    assert layers_table.render({}) == "No layer has been published yet: layers.json is empty.\n"


def test_release_notes_carry_changelog_arns_and_code_sha256(tmp_path):
    """--notes: the version's changelog section, the ARN table, and each zip's sha256 with the
    CodeSha256 Lambda reports (base64 of the same digest); a version without a changelog section is
    refused."""
    import base64
    import hashlib
    import json
    import subprocess
    import sys

    from conftest import REPO, env
    release = tmp_path / "release"
    release.mkdir()
    (release / "aws-python-keepalive-1.2.3.zip").write_bytes(b"full")
    (release / "aws-python-keepalive-hook-1.2.3.zip").write_bytes(b"hook")
    (release / "layers.json").write_text(json.dumps({"aws-python-keepalive": {"us-east-1": "arn:f1"}}))
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text("# Changelog\n\n## 1.2.4\n\nlater\n\n## 1.2.3\n\n- fixed the thing\n\n## 1.2.2\n\nolder\n")
    script = [sys.executable, "%s/tools/release/layers_table.py" % REPO, str(release / "layers.json"),
              "--notes", str(release), "--changelog", str(changelog)]
    notes = subprocess.run(script, capture_output=True, text=True, env=env())
    assert notes.returncode == 0, notes.stderr
    text = notes.stdout
    assert "- fixed the thing" in text and "later" not in text and "older" not in text
    assert "| us-east-1 | `arn:f1` |" in text
    digest = hashlib.sha256(b"hook").digest()
    assert "| `aws-python-keepalive-hook-1.2.3.zip` | `%s` | `%s` |" % (
        digest.hex(), base64.b64encode(digest).decode()) in text
    refused = subprocess.run(script + ["--version", "9.9.9"], capture_output=True, text=True, env=env())
    assert refused.returncode != 0 and "no section `## 9.9.9`" in refused.stderr


def test_the_changelog_has_the_current_version():
    """CHANGELOG.md has a section for the version in layer/aws_keepalive/__init__.py (the tag's notes)."""
    import re

    from conftest import REPO
    version = re.search(r'^__version__ = "(.*)"$', open("%s/layer/aws_keepalive/__init__.py" % REPO).read(),
                        re.MULTILINE).group(1)
    assert layers_table.changelog_section(open("%s/CHANGELOG.md" % REPO).read(), version)
