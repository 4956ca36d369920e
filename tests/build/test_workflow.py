""".github/workflows/release.yml: actionlint accepts it, and it has the release's steps in order."""

import os
import re
import subprocess

from conftest import REPO, env, tool

WORKFLOW = os.path.join(REPO, ".github", "workflows", "release.yml")


def actionlint(path):
    return subprocess.run([tool("AWS_KEEPALIVE_ACTIONLINT"), "-no-color", path], capture_output=True, text=True,
                          env=env(), cwd=REPO)


def test_actionlint_accepts_the_release_workflow(tmp_path):
    """actionlint (pinned, make actionlint) reports nothing for the workflow, and does report a broken
    copy (an expression naming a context that does not exist)."""
    checked = actionlint(WORKFLOW)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = tmp_path / "release.yml"
    broken.write_text(open(WORKFLOW).read().replace("${{ vars.AWS_SMOKE_ROLE_ARN }}", "${{ nothing.here }}"))
    assert actionlint(str(broken)).returncode == 1


def test_release_workflow_runs_the_release_in_order():
    """A tag starts it; credentials come from an OIDC role (no access keys); the smoke invoke runs in one
    region between publishing there and publishing everywhere; the files are attested and attached;
    the wheel goes to PyPI by trusted publishing."""
    text = open(WORKFLOW).read()
    assert re.search(r"^on:\n  push:\n    tags: \[\"v\*\.\*\.\*\"\]", text, re.MULTILINE)
    assert "role-to-assume:" in text and "aws-access-key-id" not in text and "secrets." not in text
    jobs = text[text.index("\njobs:"):]
    order = [jobs.index(marker) for marker in (
        "make test", "make release", 'make publish REGIONS="$SMOKE_REGION"', "tools/release/smoke.py",
        "make publish REGIONS=all FLAVOR=all PUBLIC=1", "actions/attest-build-provenance", "gh release create")]
    assert order == sorted(order)
    pypi = text[text.index("  pypi:"):]
    assert "id-token: write" in pypi and "pypa/gh-action-pypi-publish" in pypi
