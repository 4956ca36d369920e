"""`make rehearse-release` (tools/release/rehearse.py): the release workflow's own steps, read from
release.yml, run as GitHub's runner runs them (a non-root runner user with sudo, a fresh checkout per
job), against local stand-ins (moto, pypiserver, a gh recorder). The whole rehearsal is its own target
(it checks itself: the first run publishes, the re-run publishes nothing; tens of minutes, too long
for make test's 25 min budget); here, the checks it makes of the workflow before running anything
(a second each): it cannot pass over a step it does not know, nor an OIDC audience the partition
refuses."""

import os
import subprocess

from conftest import REPO, env

WORKFLOW = os.path.join(REPO, ".github", "workflows", "release.yml")


def rehearse(tmp_path, *arguments):
    return subprocess.run(["make", "--no-print-directory", "-C", REPO, "rehearse-release",
                           "BUILD_DIR=%s" % (tmp_path / "build")] + list(arguments),
                          capture_output=True, text=True, env=env(), timeout=1800)


def test_a_step_the_rehearsal_cannot_stand_in_for_stops_it(tmp_path):
    """An action the rehearsal has no stand-in for (the workflow changed) stops it, naming the action,
    instead of being passed over."""
    workflow = tmp_path / "release.yml"
    text = open(WORKFLOW).read()
    checkout = "          persist-credentials: false\n"
    unknown = "      - uses: actions/cache@0000000000000000000000000000000000000000\n"
    workflow.write_text(text.replace(checkout, checkout + unknown, 1))
    completed = rehearse(tmp_path, "REHEARSAL_WORKFLOW=%s" % workflow)
    assert completed.returncode != 0
    assert "the workflow uses actions/cache, which the rehearsal has no stand-in for" in completed.stderr
    assert "rehearsing commit" not in completed.stdout  # refused before anything was set up or run


def test_the_china_jobs_default_audience_stops_it(tmp_path):
    """A China credentials step without `audience: sts.amazonaws.com.cn` (the action's default,
    sts.amazonaws.com, what the workflow had) stops the rehearsal before anything runs, saying what aws-cn's
    STS answers."""
    workflow = tmp_path / "release.yml"
    text = open(WORKFLOW).read()
    assert text.count("          audience: sts.amazonaws.com.cn\n") == 2
    workflow.write_text(text.replace("          audience: sts.amazonaws.com.cn\n", "", 1))
    completed = rehearse(tmp_path, "REHEARSAL_WORKFLOW=%s" % workflow)
    assert completed.returncode != 0
    assert "cn-north-1 (aws-cn) with the OIDC audience sts.amazonaws.com" in completed.stderr
    assert "Incorrect token audience" in completed.stderr and "rehearsing commit" not in completed.stdout
