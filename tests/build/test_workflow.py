""".github/workflows/release.yml: actionlint, with the runner's shellcheck, accepts it; it has the release's
steps in order; actions pinned by SHA, checkouts without a persisted token, the artifact checked before
use; make publish never rebuilds."""

import os
import re
import subprocess

from conftest import REPO, env, tool

WORKFLOW = os.path.join(REPO, ".github", "workflows", "release.yml")


def actionlint(path):
    return subprocess.run([tool("AWS_KEEPALIVE_ACTIONLINT"), "-no-color", "-shellcheck",
                           tool("AWS_KEEPALIVE_SHELLCHECK"), path], capture_output=True, text=True, env=env(), cwd=REPO)


def test_actionlint_accepts_the_release_workflow(tmp_path):
    """actionlint (pinned, make actionlint) reports nothing for the workflow, and does report a broken
    copy (an expression naming a context that does not exist)."""
    checked = actionlint(WORKFLOW)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = tmp_path / "release.yml"
    broken.write_text(open(WORKFLOW).read().replace("${{ vars.AWS_SMOKE_ROLE_ARN }}", "${{ nothing.here }}"))
    assert actionlint(str(broken)).returncode == 1


def test_shellcheck_runs_on_the_run_scripts_as_on_the_runner(tmp_path):
    """The pinned shellcheck is GitHub's ubuntu-24.04 runner's 0.9.0, and through it actionlint reports
    an unquoted expansion in a `run:` script (SC2086: what failed the runner's `make lint`)."""
    version = subprocess.run([tool("AWS_KEEPALIVE_SHELLCHECK"), "--version"], capture_output=True, text=True)
    assert "version: 0.9.0" in version.stdout.splitlines()
    broken = tmp_path / "release.yml"
    text = open(WORKFLOW).read()
    assert "        run: make lint\n" in text
    broken.write_text(text.replace("        run: make lint\n", "        run: make lint $LINT_FLAGS\n"))
    checked = actionlint(str(broken))
    assert checked.returncode == 1 and "SC2086" in checked.stdout, checked.stdout


def test_actions_pinned_by_sha_and_checkouts_drop_their_token():
    """Every `uses:` names a 40-hex commit (the tag only in a comment), and every checkout says
    persist-credentials: false."""
    text = open(WORKFLOW).read()
    uses = re.findall(r"uses: (\S+)", text)
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action) for action in uses), uses
    checkouts = [m.start() for m in re.finditer(r"uses: actions/checkout@", text)]
    assert checkouts and all("persist-credentials: false" in text[at:at + 200] for at in checkouts)


def jobs_steps():
    """{job: its text} of the workflow, split at the two-space job keys."""
    jobs = open(WORKFLOW).read().split("\njobs:\n")[1]
    parts = re.split(r"^  (\w[\w-]*):\n", jobs, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def test_release_files_checked_before_use():
    """Each job that downloads the release checks it with sha256sum -c before anything uses it."""
    for name, text in jobs_steps().items():
        if "download-artifact" in text:
            after = text[text.index("download-artifact"):]
            assert "sha256sum -c SHA256SUMS" in after, name
            checked = after.index("sha256sum -c SHA256SUMS")
            for use in ("run: make publish", "gh release create", "uses: pypa/gh-action-pypi-publish",
                        "uses: actions/attest-build-provenance"):
                if use in after:
                    assert checked < after.index(use), (name, use)


def test_release_workflow_runs_the_release_in_order():
    """A tag starts it; credentials come from an OIDC role (no access keys); every region staged private,
    the smoke invoke, then public read and latest, then the check of each region; the files are attested
    and attached with the release notes; the wheel goes to PyPI by trusted publishing; GovCloud and
    China are the same steps in jobs behind repository variables."""
    text = open(WORKFLOW).read()
    assert re.search(r"^on:\n  push:\n    tags: \[\"v\*\.\*\.\*\"\]", text, re.MULTILINE)
    assert "role-to-assume:" in text and "aws-access-key-id" not in text and "secrets." not in text
    jobs = text[text.index("\njobs:"):]
    order = [jobs.index(marker) for marker in (
        "make test", "make release", "sha256sum -c SHA256SUMS", "make publish REGIONS=all FLAVOR=all STEP=stage",
        "make smoke-release", "make publish REGIONS=all FLAVOR=all PUBLIC=1 STEP=promote",
        "make publish REGIONS=all FLAVOR=all PUBLIC=1 STEP=check", "actions/attest-build-provenance",
        "tools/release/layers_table.py build/release/layers-*.json --notes", "gh release create")]
    assert order == sorted(order)
    steps = jobs_steps()
    for job, partition, variable in (("layers-govcloud", "aws-us-gov", "AWS_GOVCLOUD_RELEASE_ROLE_ARN"),
                                     ("layers-china", "aws-cn", "AWS_CHINA_RELEASE_ROLE_ARN")):
        assert "if: vars.%s != ''" % variable in steps[job] and "PARTITION: %s" % partition in steps[job]
        for line in steps["layers"].splitlines():
            if line.strip().startswith(("run: make publish", "run: make smoke-release", "run: cd build/release")):
                assert line in steps[job].splitlines(), (job, line)
    pypi = text[text.index("  pypi:"):]
    assert "id-token: write" in pypi and "pypa/gh-action-pypi-publish" in pypi


def test_make_publish_never_rebuilds(tmp_path):
    """make publish (and make -n publish) on a release folder whose files are older than every source
    runs publish.py on those zips and nothing else: no `make release`, no release.py."""
    release = tmp_path / "build" / "release"
    release.mkdir(parents=True)
    for name in ("aws-python-keepalive-0.1.0.zip", "SHA256SUMS"):
        (release / name).write_bytes(b"")
        os.utime(release / name, (0, 0))
    planned = subprocess.run(["make", "-n", "--no-print-directory", "-C", REPO, "publish", "FLAVOR=full",
                              "BUILD_DIR=%s" % (tmp_path / "build")], capture_output=True, text=True, env=env())
    assert planned.returncode == 0, planned.stderr
    commands = [line for line in planned.stdout.splitlines() if line.strip()]
    assert not any("release.py" in line or "make release" in line or " release" in line.split("publish.py")[0]
                   for line in commands), commands
    assert any("tools/release/publish.py --layer aws-python-keepalive=%s/aws-python-keepalive-" % release in line
               for line in commands), commands
