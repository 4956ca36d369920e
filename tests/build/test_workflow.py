""".github/workflows/release.yml: actionlint, with the runner's shellcheck, accepts it; it has the release's
steps in order; actions pinned by SHA, checkouts without a persisted token, the artifact checked before
use; make publish never rebuilds."""

import functools
import json
import os
import re
import shutil
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
    """A tag starts it; credentials come from an OIDC role (no access keys); the changelog's section checked
    before anything is built; every region staged private, the smoke invoke, then the release notes (the
    last check that can fail), then public read and latest, then the check of each region, then PyPI by
    trusted publishing, then the attested GitHub release; GovCloud and China are the same steps in jobs
    behind repository variables."""
    text = open(WORKFLOW).read()
    assert re.search(r"^on:\n  push:\n    tags: \[\"v\*\.\*\.\*\"\]", text, re.MULTILINE)
    assert "role-to-assume:" in text and "aws-access-key-id" not in text and "secrets." not in text
    jobs = text[text.index("\njobs:"):]
    order = [jobs.index(marker) for marker in (
        "tools/release/layers_table.py --check-changelog", "make lint", "make test", "make release",
        "sha256sum -c SHA256SUMS", "make publish REGIONS=all FLAVOR=all STEP=stage", "make smoke-release",
        "tools/release/layers_table.py build/staged/layers-*.json --notes",
        "make publish REGIONS=all FLAVOR=all PUBLIC=1 PARTITION=aws STEP=promote",
        "make publish REGIONS=all FLAVOR=all PUBLIC=1 PARTITION=aws STEP=check", "pypa/gh-action-pypi-publish",
        "actions/attest-build-provenance", "gh release create")]
    assert order == sorted(order)
    steps = jobs_steps()
    for job, partition, variable in (("layers-govcloud", "aws-us-gov", "AWS_GOVCLOUD_RELEASE_ROLE_ARN"),
                                     ("layers-china", "aws-cn", "AWS_CHINA_RELEASE_ROLE_ARN")):
        assert "if: vars.%s != ''" % variable in steps[job] and "PARTITION: %s" % partition in steps[job]
        for line in steps["layers"].splitlines():
            if line.strip().startswith(("run: make publish", "run: make smoke-release", "run: cd build/release")):
                assert line in steps[job].splitlines(), (job, line)
        for step in ("promote", "check"):
            assert "PARTITION=%s STEP=%s" % (partition, step) in steps["promote"]
    pypi = text[text.index("  pypi:"):]
    assert "id-token: write" in pypi and "pypa/gh-action-pypi-publish" in pypi


@functools.lru_cache(maxsize=None)
def load_yaml(path):
    """A workflow as GitHub reads it (PyYAML, in the moto venv make test-build passes in: the test venv has
    no YAML parser). PyYAML reads the key `on` as true."""
    python = os.path.join(os.path.dirname(tool("AWS_KEEPALIVE_MOTO")), "python")
    loaded = subprocess.run([python, "-c", "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), "
                             "sys.stdout)", path], capture_output=True, text=True, check=True).stdout
    return json.loads(loaded)


def workflow_jobs(path=WORKFLOW):
    return load_yaml(path)["jobs"]


def test_nothing_is_public_before_every_check_that_can_fail():
    """The changelog's section is checked in the build job before Lint (a missing one stops the release
    before anything is staged); no staging job makes anything public (no PUBLIC=1, no STEP=promote); the
    promote job needs every staging job, renders the release notes (changelog, ARN table, digests) before
    its first promote; PyPI needs the promote job, the GitHub release needs PyPI."""
    jobs = workflow_jobs()
    build = [step.get("name") or step.get("uses") for step in jobs["build"]["steps"]]
    assert build.index("The changelog has a section for the version") < build.index("Lint")
    for name in ("layers", "layers-govcloud", "layers-china"):
        runs = " ".join(step.get("run", "") for step in jobs[name]["steps"])
        assert jobs[name]["needs"] == "build" and "PUBLIC=1" not in runs and "STEP=promote" not in runs, name
        assert "STEP=stage" in runs and "make smoke-release" in runs
    promote = jobs["promote"]
    assert sorted(promote["needs"]) == ["layers", "layers-china", "layers-govcloud"]
    runs = [step.get("run", "") for step in promote["steps"]]
    notes = next(i for i, run in enumerate(runs) if "layers_table.py" in run and "--notes" in run)
    first_promote = next(i for i, run in enumerate(runs) if "STEP=promote" in run)
    assert notes < first_promote
    assert jobs["pypi"]["needs"] == "promote" and jobs["github"]["needs"] == "pypi"
    github = " ".join(step.get("run", "") for step in jobs["github"]["steps"])
    assert "--notes-file build/notes.md" in github and "layers_table.py" not in github


def test_a_missing_changelog_section_stops_the_build_job_step(tmp_path):
    """The build job's changelog step, run as written on a checkout whose CHANGELOG.md lacks the tag's
    section, fails naming the section; with the section it passes."""
    step = next(s for s in workflow_jobs()["build"]["steps"] if s.get("name") == "The changelog has a section "
                "for the version")
    (tmp_path / "tools" / "release").mkdir(parents=True)
    shutil.copy(os.path.join(REPO, "tools", "release", "layers_table.py"), tmp_path / "tools" / "release")
    (tmp_path / "CHANGELOG.md").write_text("# Changelog\n\n## 0.1.0\n\nFirst.\n")

    def run_step(tag):
        return subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path, capture_output=True,
                              text=True, env=env(GITHUB_REF_NAME=tag))
    missing = run_step("v0.1.1")
    assert missing.returncode == 1 and "no section `## 0.1.1`" in missing.stderr, missing.stderr
    assert run_step("v0.1.0").returncode == 0


def test_root_steps_keep_their_own_home():
    """Every `sudo -E` in the workflows also says -H: root's caches (uv, Maven, npm) in root's HOME, not
    root-owned files in the runner's, on which the next step's uv (as the runner) stops with "Failed to
    initialize cache ... Permission denied" (what failed every tag's build job)."""
    found = 0
    for name in ("release.yml", "test.yml", "bump-sdk.yml"):
        for line in open(os.path.join(REPO, ".github", "workflows", name)):
            if re.search(r"\bsudo -E\b", line) and not line.lstrip().startswith("#"):
                found += 1
                assert re.search(r"\bsudo -E -H\b", line), (name, line)
    assert found == 3


def test_china_uses_its_partitions_oidc_audience():
    """Each configure-aws-credentials step for cn-* regions asks for the audience sts.amazonaws.com.cn (the
    only one aws-cn's STS accepts), the others keep the default; docs/release.md gives China its own
    provider and trust policy with that audience, never "the same trust policy"."""
    configured = [(step["with"]["aws-region"], step["with"].get("audience")) for job in workflow_jobs().values()
                  for step in job["steps"] if step.get("uses", "").startswith("aws-actions/configure-aws-credentials")]
    assert {region for region, _ in configured} == {"us-east-1", "us-gov-west-1", "cn-north-1"}
    for region, audience in configured:
        assert audience == ("sts.amazonaws.com.cn" if region.startswith("cn-") else None), (region, audience)
    docs = open(os.path.join(REPO, "docs", "release.md")).read()
    assert "same trust policy" not in docs and "sts.amazonaws.com.cn" in docs


def test_pull_requests_run_what_the_release_runs():
    """test.yml runs on every pull request (and push to main), and its job's steps are release.yml's build
    job's from Lint to Release files, the same steps in the same order (only the tag's and the changelog's
    checks and the upload are the release's own): a pull request shows the release's suite."""
    test = load_yaml(os.path.join(REPO, ".github", "workflows", "test.yml"))
    triggers = test["true"]
    assert "pull_request" in triggers and triggers["push"]["branches"] == ["main"]
    (job,) = test["jobs"].values()
    build = workflow_jobs()["build"]["steps"]
    names = [step.get("name") for step in build]
    release_suite = build[names.index("Lint"):names.index("Release files") + 1]
    assert job["steps"][0]["uses"].startswith("actions/checkout@") and job["steps"][1:] == release_suite
    assert job["runs-on"] == workflow_jobs()["build"]["runs-on"]


def test_a_third_tag_does_not_cancel_the_second():
    """One release at a time, none cancelled: the workflow's concurrency group says cancel-in-progress: false
    and queue: max (without it GitHub keeps one pending run per group and cancels it for a newer one)."""
    concurrency = load_yaml(WORKFLOW)["concurrency"]
    assert concurrency == {"group": "release", "cancel-in-progress": False, "queue": "max"}


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
