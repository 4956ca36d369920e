""".github/workflows/bump-sdk.yml rehearsed: actionlint (with shellcheck) accepts it, and its last step's
own script (tools/release/bump_pr.py) opens a pull request or pushes a patch release's tag.

The rehearsal: a clone of this checkout, a bare repository standing in for GitHub (git's insteadOf
sends the step's https://x-access-token:...@github.com URL there), a recorder on PATH standing in for
`gh` (it writes its arguments and what it was given on stdin), and the bump itself run for real
against pypiserver on loopback (tests/build/test_bump_sdk.py's fixtures: real wheels from PyPI), with
a make that records targets (the suites cannot run inside test-build).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO, env, tool
from test_bump_sdk import OLDER, PINNED, RECORDING_MAKE, UV, index, packages  # noqa: F401 (fixtures)

WORKFLOW = os.path.join(REPO, ".github", "workflows", "bump-sdk.yml")
REPOSITORY = "example/aws-python-keepalive"

GH_RECORDER = textwrap.dedent("""\
    #!/usr/bin/env python3
    import json, os, sys
    stdin = sys.stdin.read() if "-" in sys.argv[1:] else ""
    with open(os.environ["GH_RECORD"], "a") as record:
        record.write(json.dumps({"argv": sys.argv[1:], "stdin": stdin}) + "\\n")
    if sys.argv[1:3] == ["pr", "list"]:
        print(os.environ.get("GH_PR_LIST", "[]"))
    if sys.argv[1:3] == ["pr", "create"]:
        print("https://github.com/example/aws-python-keepalive/pull/7")
""")


def shellcheck():
    """The shellcheck actionlint runs (make test-build's pinned one, else Debian's on PATH)."""
    found = os.environ.get("AWS_KEEPALIVE_SHELLCHECK") or shutil.which("shellcheck")
    if not found:
        pytest.fail("no shellcheck: apt-get install shellcheck, or run through make test-build")
    return found


def actionlint(path):
    return subprocess.run([tool("AWS_KEEPALIVE_ACTIONLINT"), "-no-color", "-shellcheck", shellcheck(), str(path)],
                          capture_output=True, text=True, env=env(), cwd=REPO)


def test_actionlint_and_shellcheck_accept_the_workflow(tmp_path):
    """actionlint with shellcheck reports nothing, and reports an unquoted expansion in a copy (SC2086)."""
    checked = actionlint(WORKFLOW)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = tmp_path / "bump-sdk.yml"
    broken.write_text(open(WORKFLOW).read().replace('--base "${BASE_BRANCH}"', "--base $BASE_BRANCH"))
    checked = actionlint(broken)
    assert checked.returncode == 1 and "SC2086" in checked.stdout, checked.stdout


def test_workflow_is_daily_pinned_and_least_privileged():
    """A daily schedule; every action pinned by a 40-hex commit; the checkout keeps no token; the
    workflow reads only, the job writes contents and pull requests and nothing else."""
    text = open(WORKFLOW).read()
    assert re.search(r"^on:\n  schedule:\n    - cron: \"\d+ \d+ \* \* \*\"", text, re.MULTILINE)
    uses = re.findall(r"uses: (\S+)", text)
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action) for action in uses), uses
    assert "persist-credentials: false" in text
    assert re.search(r"^permissions:\n  contents: read\n", text, re.MULTILINE)
    job = re.search(r"\n    permissions:\n((?:      .*\n)+)", text).group(1)
    assert sorted(job.split()) == sorted(["contents:", "write", "pull-requests:", "write"])
    assert "make bump-sdk" in text and "tools/release/bump_pr.py" in text


def step_script(name):
    """The `run: |` script of the workflow step called ``name``, unindented."""
    text = open(WORKFLOW).read()
    step = text[text.index("- name: %s\n" % name):]
    block = re.search(r"\n        run: \|\n((?:          .*\n|\n)+)", step).group(1)
    return textwrap.dedent(block)


def git(cwd, *argv, **kwargs):
    return subprocess.run(["git", "-C", str(cwd), *argv], check=True, capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def bumped(index, tmp_path_factory):  # noqa: F811 (the fixture imported above)
    """A clone (this working tree's tools/ and workflow on top, committed) after a real bump to OLDER
    (done once: each test works on its own copy)."""
    tmp_path = tmp_path_factory.mktemp("bumped")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", REPO, str(clone))
    git(clone, "switch", "-q", "-C", "main")
    for folder in ("tools", ".github"):
        shutil.copytree(os.path.join(REPO, folder), clone / folder, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for path in ("layer/requirements.txt", "layer/aws_keepalive/__init__.py", "template.yaml"):
        shutil.copyfile(os.path.join(REPO, path), clone / path)
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    git(clone, "add", "-A")
    git(clone, *identity, "commit", "-q", "--allow-empty", "-m", "the working tree under test")
    make = tmp_path / "make.py"
    make.write_text(RECORDING_MAKE)
    bumped = subprocess.run(
        [sys.executable, str(clone / "tools" / "release" / "bump_sdk.py"), "--uv", UV, "--repo", str(clone),
         "--make", "%s %s" % (sys.executable, make), "--version", OLDER, "--index-url", index,
         "--report", str(clone / "build" / "bump-sdk.json"), "--work", str(tmp_path / "work")],
        capture_output=True, text=True, env=env(NO_PROXY="127.0.0.1", MAKE_RECORD=str(tmp_path / "record")))
    assert bumped.returncode == 0, bumped.stdout + bumped.stderr
    return clone


@pytest.fixture
def rehearsal(bumped, tmp_path):
    """A copy of the bumped clone, GitHub's stand-in (a bare repository of the clone before the bump's
    commit) and the step's environment: (clone, remote, environment)."""
    clone, remote = tmp_path / "clone", tmp_path / "github.git"
    shutil.copytree(bumped, clone, symlinks=True)
    git(tmp_path, "clone", "-q", "--bare", str(clone), str(remote))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH_RECORDER)
    (bin_dir / "gh").chmod(0o755)
    gitconfig = tmp_path / "gitconfig"
    step_env = env(PATH="%s:%s" % (bin_dir, os.environ["PATH"]), GH_RECORD=str(tmp_path / "gh.jsonl"),
                   GH_TOKEN="gh-token", PUSH_TOKEN="push-token", BASE_BRANCH="main", GITHUB_REPOSITORY=REPOSITORY,
                   GIT_CONFIG_GLOBAL=str(gitconfig))
    # What the step pushes to github.com goes to the bare repository instead.
    subprocess.run(["git", "config", "--global", "url.%s.insteadOf" % remote,
                    "https://x-access-token:push-token@github.com/%s.git" % REPOSITORY], check=True, env=step_env)
    return clone, remote, step_env


def run_step(clone, step_env, mode, **extra):
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", step_script("Pull request or tag")], cwd=clone,
                          capture_output=True, text=True, env=dict(step_env, BUMP_SDK_MODE=mode, **extra))


def gh_calls(step_env):
    path = step_env["GH_RECORD"]
    return [json.loads(line) for line in open(path)] if os.path.exists(path) else []


def test_a_new_release_opens_one_pull_request_with_the_diff_and_the_tests(rehearsal):
    """BUMP_SDK_MODE unset: the branch bump-sdk/botocore-<v> reaches the remote with the new pin, and gh
    opens a pull request on main whose body names the move, botocore's changes, each suite, the files."""
    clone, remote, step_env = rehearsal
    completed = run_step(clone, step_env, "")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    branch = "bump-sdk/botocore"
    pushed = git(remote, "show", "%s:layer/requirements.txt" % branch).stdout
    assert "botocore==%s \\" % OLDER in pushed
    assert git(remote, "show", "main:layer/requirements.txt").stdout.count("botocore==%s " % PINNED["botocore"]) == 1
    calls = gh_calls(step_env)
    assert [call["argv"][:2] for call in calls] == [["pr", "list"], ["pr", "create"]]
    create = calls[1]
    assert create["argv"][create["argv"].index("--head") + 1] == branch
    assert create["argv"][create["argv"].index("--base") + 1] == "main"
    assert "botocore %s" % OLDER in create["argv"][create["argv"].index("--title") + 1]
    body = create["stdin"]
    for expected in ("botocore %s -> %s" % (PINNED["botocore"], OLDER), "## What changed in botocore",
                     "test-build: passed", "test-hook-3.12: passed", "test-compat: passed", "layer/requirements.txt"):
        assert expected in body, (expected, body)


def test_tag_mode_pushes_the_patch_release_tag_to_main(rehearsal):
    """BUMP_SDK_MODE=tag: main on the remote gets one commit with the pin, the patch version raised in
    __init__.py and template.yaml, and the tag v<version> on it; gh is not asked for a pull request."""
    clone, remote, step_env = rehearsal
    init = open(os.path.join(REPO, "layer", "aws_keepalive", "__init__.py")).read()
    major, minor, patch = re.search(r'^__version__ = "(\d+)\.(\d+)\.(\d+)"', init, re.MULTILINE).groups()
    version = "%s.%s.%d" % (major, minor, int(patch) + 1)
    completed = run_step(clone, step_env, "tag")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert git(remote, "rev-parse", "v%s^{commit}" % version).stdout == git(remote, "rev-parse", "main").stdout
    assert '__version__ = "%s"' % version in git(remote, "show", "main:layer/aws_keepalive/__init__.py").stdout
    assert "aws-python-keepalive %s:" % version in git(remote, "show", "main:template.yaml").stdout
    assert "botocore==%s \\" % OLDER in git(remote, "show", "main:layer/requirements.txt").stdout
    assert gh_calls(step_env) == []


def test_an_unchanged_pin_opens_nothing(rehearsal, tmp_path):
    """A report saying the pin did not move: the step exits 0, no gh call, nothing pushed."""
    clone, remote, step_env = rehearsal
    report = json.loads((clone / "build" / "bump-sdk.json").read_text())
    report["changed"] = False
    (clone / "build" / "bump-sdk.json").write_text(json.dumps(report))
    before = git(remote, "for-each-ref").stdout
    completed = run_step(clone, step_env, "")
    assert completed.returncode == 0 and "nothing to do" in completed.stdout, completed.stdout + completed.stderr
    assert gh_calls(step_env) == [] and git(remote, "for-each-ref").stdout == before


def step_env_value(name):
    """The `env:` value the workflow's "Pull request or tag" step gives ``name``."""
    text = open(WORKFLOW).read()
    step = text[text.index("- name: Pull request or tag\n"):]
    return re.search(r"\n          %s: (.*)\n" % name, step).group(1)


def test_tag_mode_without_the_push_token_refuses(rehearsal):
    """The step's PUSH_TOKEN is the secret alone (no `|| github.token` fallback: a tag pushed with the job's
    token starts no release), and with it empty tag mode exits 1 naming the secret, pushing nothing."""
    clone, remote, step_env = rehearsal
    assert step_env_value("PUSH_TOKEN") == "${{ secrets.BUMP_SDK_PUSH_TOKEN }}"
    before = git(remote, "for-each-ref").stdout
    completed = run_step(clone, step_env, "tag", PUSH_TOKEN="", JOB_TOKEN="job-token")
    assert completed.returncode == 1 and "BUMP_SDK_PUSH_TOKEN" in completed.stdout, completed.stdout + completed.stderr
    assert git(remote, "for-each-ref").stdout == before and gh_calls(step_env) == []


def test_a_rejected_main_pushes_no_tag(rehearsal):
    """Tag mode when main moved on the remote during the bump: the push of main is rejected, and the tag
    (one atomic push with it) does not reach the remote either."""
    clone, remote, step_env = rehearsal
    other = clone.parent / "other"
    git(clone.parent, "clone", "-q", str(remote), str(other))
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    git(other, *identity, "commit", "-q", "--allow-empty", "-m", "main moved meanwhile")
    git(other, "push", "-q", "origin", "HEAD:refs/heads/main")
    completed = run_step(clone, step_env, "tag")
    assert completed.returncode != 0, completed.stdout + completed.stderr
    assert git(remote, "tag", "--list").stdout.strip() == ""
    assert git(remote, "log", "-1", "--format=%s", "main").stdout.strip() == "main moved meanwhile"


def test_an_open_bump_pull_request_is_updated_and_older_ones_closed(rehearsal):
    """With the bump's pull request open (branch bump-sdk/botocore, an older release's title) and an older
    per-release one (bump-sdk/botocore-1.40.0): the branch is force-pushed with the new pin, the open
    pull request's title and body edited (none created), the older one closed as superseded, its branch
    deleted."""
    clone, remote, step_env = rehearsal
    listed = [{"number": 5, "headRefName": "bump-sdk/botocore", "title": "Pin boto3 0, botocore 0, s3transfer 0"},
              {"number": 3, "headRefName": "bump-sdk/botocore-1.40.0", "title": "Pin botocore 1.40.0"},
              {"number": 4, "headRefName": "feature/unrelated", "title": "A contributor's"}]
    completed = run_step(clone, step_env, "", GH_PR_LIST=json.dumps(listed))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "botocore==%s \\" % OLDER in git(remote, "show", "bump-sdk/botocore:layer/requirements.txt").stdout
    calls = [call["argv"] for call in gh_calls(step_env)]
    assert [argv[:3] for argv in calls] == [["pr", "list", "--state"], ["pr", "edit", "5"], ["pr", "close", "3"]]
    assert "botocore %s" % OLDER in calls[1][calls[1].index("--title") + 1]
    assert "--delete-branch" in calls[2] and "Superseded by #5" in calls[2][calls[2].index("--comment") + 1]


def test_the_same_release_already_proposed_changes_nothing(rehearsal):
    """The bump pull request already proposes this release (same title), no older one open: nothing pushed,
    nothing edited (a daily run does not restart the pull request's checks for nothing)."""
    clone, remote, step_env = rehearsal
    report = json.loads((clone / "build" / "bump-sdk.json").read_text())
    sys.path.insert(0, REPO)
    from tools.release import bump_pr
    listed = [{"number": 5, "headRefName": "bump-sdk/botocore", "title": bump_pr.title(report)}]
    before = git(remote, "for-each-ref").stdout
    completed = run_step(clone, step_env, "", GH_PR_LIST=json.dumps(listed))
    assert completed.returncode == 0 and "nothing to do" in completed.stdout, completed.stdout + completed.stderr
    assert [call["argv"][:2] for call in gh_calls(step_env)] == [["pr", "list"]]
    assert git(remote, "for-each-ref").stdout == before


def test_tag_mode_runs_boto3s_own_suite_before_the_tag():
    """Tag mode runs boto3's own suite (a checkout of boto/boto3 at the bumped pin, REQUIRE_BOTO3_SUITE=1),
    as the release's build job does, before the step that pushes the tag: make bump-sdk's test-upstream
    skips it (no checkout), so without this a bump the release refuses would be tagged, never released."""
    text = open(WORKFLOW).read()
    suite = "make test-upstream BOTO3_SOURCE=build/boto3-source REQUIRE_BOTO3_SUITE=1"
    assert suite in text and text.index(suite) < text.index("- name: Pull request or tag\n")
    step = text[text.rindex("- ", 0, text.index(suite)):text.index(suite)]
    assert "if: vars.BUMP_SDK_MODE == 'tag'" in step
    checkout = text[text.index("repository: boto/boto3"):]
    assert checkout.index("ref: ${{ steps.boto3.outputs.version }}") < checkout.index("path: build/boto3-source")
    assert text.index("repository: boto/boto3") < text.index(suite)
    assert "id: boto3" in text and "layer/requirements.txt" in text[text.index("id: boto3"):text.index(suite)]


def test_tag_mode_is_judged_by_the_release_suite():
    """In tag mode the workflow's bump runs with BUMP_SUITES="test test-upstream", and make bump-sdk hands that
    to bump_sdk.py as --suites: the release's own make test and the SDK's own suites on the patched tree
    judge a bump before it is tagged."""
    text = open(WORKFLOW).read()
    assert "BUMP_SUITES: ${{ vars.BUMP_SDK_MODE == 'tag' && 'test test-upstream' || '' }}" in text
    assert 'make bump-sdk VERSION="${VERSION}" BUMP_SUITES="${BUMP_SUITES}"' in text
    # Not `make -n`: the recipe names $(MAKE), so make would run it (the bump itself). TOOL_PYTHON=echo prints
    # the command line the recipe runs, and runs nothing.
    def planned(*arguments):
        completed = subprocess.run(["make", "--no-print-directory", "-s", "-C", REPO, "bump-sdk", "TOOL_PYTHON=echo",
                                    *arguments], capture_output=True, text=True, env=env())
        assert completed.returncode == 0 and "tools/release/bump_sdk.py" in completed.stdout, completed.stderr
        return completed.stdout
    assert '--suites test test-upstream ' in planned("BUMP_SUITES=test test-upstream")
    assert "--suites" not in planned()
