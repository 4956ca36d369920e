"""After a green `make bump-sdk` on GitHub (.github/workflows/bump-sdk.yml): a pull request with the
new pin, or a patch release's tag (repository variable BUMP_SDK_MODE=tag).

    python tools/release/bump_pr.py --report build/bump-sdk.json [--mode pr|tag] [--remote origin] [--base main]

pr (the default): the working tree's changes committed on the one bump branch, ``bump-sdk/botocore``,
force-pushed, and one pull request with ``gh`` whose body says what moved, what changed in botocore
(services, defaults, the modules the hook patches), each suite's result and the diff's file list.
There is one bump pull request at a time: when it is open already it is updated in place (the
branch and its title and body; left as it is when it already proposes this release), and a pull
request of an older branch ``bump-sdk/botocore-<version>`` (what earlier runs opened, one per
release) is closed as superseded, its branch deleted.

tag: the same commit with the hook's version's patch number raised (layer/aws_keepalive/__init__.py,
template.yaml's descriptions, a CHANGELOG.md section when the file exists: the release notes need
one), pushed to the base branch with the tag ``v<version>`` in one atomic push: when the base
branch moved meanwhile, git refuses both and no tag exists on a commit the branch lacks. The tag
starts the release workflow. (GitHub does not start workflows for pushes made with the job's own
GITHUB_TOKEN: the workflow pushes with a token that can, and refuses tag mode without one.)

Nothing here decides whether the bump is good: make bump-sdk did, and wrote the report only then
with ``changed``; a refused or unchanged report makes this exit without touching git.
"""

import argparse
import json
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from tools.packaging import layer_info  # noqa: E402
from tools.release import bump_sdk  # noqa: E402

INIT = "layer/aws_keepalive/__init__.py"
CHANGELOG = "CHANGELOG.md"


CHECKOUT = REPO  # the checkout the bump ran in (--repo; the rehearsal's clone)


def run(argv, **kwargs):
    print("+ " + " ".join(argv), flush=True)
    return subprocess.run(argv, cwd=CHECKOUT, check=True, text=True, **kwargs)


def title(report):
    new, old = report["new"], report["old"]
    return "Pin boto3 %s, botocore %s, s3transfer %s (was botocore %s)" % (
        new["boto3"], new["botocore"], new["s3transfer"], old["botocore"])


def body(report, diff_stat):
    """The pull request's (and the commit's) text: what moved, what changed, how it was judged."""
    moved = bump_sdk.describe_pins(report["old"], report["new"])
    lines = ["`make bump-sdk` moved the full layer's SDK: %s." % moved, "", "## What changed in botocore", ""]
    lines += ["- " + line for line in bump_sdk.format_changes(report["changes"])]
    lines += ["", "## Tests (make %s)" % " ".join(report["suites"]), ""]
    for suite, result in report["suites"].items():
        lines.append("- %s: %s" % (suite, "passed" if result["exit"] == 0 else "exit %d" % result["exit"]))
    lines += ["", "Run time of the bump: %.0f s." % report["seconds"], "", "## Files", "", "```", diff_stat.rstrip(),
              "```", ""]
    return "\n".join(lines)


def next_patch(version):
    major, minor, patch = version.split(".")
    return "%s.%s.%d" % (major, minor, int(patch) + 1)


def raise_version(report):
    """The hook's version's patch + 1 in __init__.py, template.yaml, and CHANGELOG.md; returns it."""
    path = os.path.join(CHECKOUT, INIT)
    with open(path) as handle:
        text = handle.read()
    version = next_patch(layer_info.hook_version_from_source(text))
    with open(path, "w") as handle:
        handle.write(re.sub(r'^__version__ = "[^"]*"$', '__version__ = "%s"' % version, text, count=1,
                            flags=re.MULTILINE))
    layer_info.main(["--requirements", os.path.join(CHECKOUT, bump_sdk.LOCK), "--init", path,
                     "--write-template", os.path.join(CHECKOUT, "template.yaml")])
    changelog = os.path.join(CHECKOUT, CHANGELOG)
    if os.path.exists(changelog):
        with open(changelog) as handle:
            text = handle.read()
        section = "## %s\n\n%s\n\n" % (version, "The full layer's SDK: %s (make bump-sdk)." % bump_sdk.describe_pins(
            report["old"], report["new"]))
        first = text.find("\n## ")
        text = text[:first + 1] + section + text[first + 1:] if first >= 0 else text + "\n" + section
        with open(changelog, "w") as handle:
            handle.write(text)
    return version


BRANCH = "bump-sdk/botocore"


def open_pull_request(report, remote, base):
    """The one bump pull request: created, or updated in place; older bumps' pull requests closed."""
    listed = run(["gh", "pr", "list", "--state", "open", "--limit", "200", "--json", "number,headRefName,title"],
                 capture_output=True).stdout.strip()
    open_prs = json.loads(listed or "[]")
    ours = [pr for pr in open_prs if pr["headRefName"] == BRANCH]
    older = [pr for pr in open_prs if pr["headRefName"].startswith(BRANCH + "-")]
    if ours and ours[0]["title"] == title(report) and not older:
        print("bump_pr: pull request #%d already proposes %s; nothing to do" % (ours[0]["number"], title(report)))
        return
    diff_stat = run(["git", "diff", "--stat"], capture_output=True).stdout
    text = body(report, diff_stat)
    run(["git", "switch", "-C", BRANCH])
    run(["git", "commit", "-q", "-a", "-F", "-"], input=title(report) + "\n\n" + text)
    run(["git", "push", "-f", remote, "HEAD:refs/heads/" + BRANCH])
    if ours:
        number = ours[0]["number"]
        run(["gh", "pr", "edit", str(number), "--title", title(report), "--body-file", "-"], input=text)
    else:
        created = run(["gh", "pr", "create", "--base", base, "--head", BRANCH, "--title", title(report),
                       "--body-file", "-"], input=text, capture_output=True).stdout.strip()
        print(created)
        number = created.rstrip("/").rsplit("/", 1)[-1] or "?"
    for pr in older:
        run(["gh", "pr", "close", str(pr["number"]), "--delete-branch", "--comment",
             "Superseded by #%s (%s)." % (number, title(report))])


def tag_release(report, remote, base):
    diff_stat = run(["git", "diff", "--stat"], capture_output=True).stdout
    version = raise_version(report)
    run(["git", "commit", "-q", "-a", "-F", "-"],
        input="Release %s: %s\n\n%s" % (version, title(report), body(report, diff_stat)))
    run(["git", "tag", "-a", "v" + version, "-m", "v%s: %s" % (version, title(report))])
    # Both or neither: a push of main rejected (main moved during the bump) must not leave the tag behind.
    run(["git", "push", "--atomic", remote, "HEAD:refs/heads/" + base, "refs/tags/v" + version])
    print("bump_pr: tagged v%s; the release workflow takes it from here" % version)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", required=True)
    parser.add_argument("--mode", default="pr", help="pr (default; also when empty) or tag")
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--base", default="main")
    parser.add_argument("--repo", default=REPO, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    global CHECKOUT
    CHECKOUT = os.path.abspath(args.repo)
    mode = args.mode or "pr"
    if mode not in ("pr", "tag"):
        raise SystemExit("bump_pr: BUMP_SDK_MODE is %r; it must be pr or tag" % mode)
    with open(args.report) as handle:
        report = json.load(handle)
    if report.get("refused"):
        raise SystemExit("bump_pr: the bump was refused (%s failed): no pull request" % ", ".join(report["refused"]))
    if not report["changed"]:
        print("bump_pr: the pin is the newest release (botocore %s); nothing to do" % report["new"]["botocore"])
        return 0
    (tag_release if mode == "tag" else open_pull_request)(report, args.remote, args.base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
