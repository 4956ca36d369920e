"""`make rehearse-release`: the release workflow's own steps, in their order, with local stand-ins.

    python tools/release/rehearse.py --moto .venv/moto/bin/moto_server --pypiserver .venv/pypiserver/bin/pypi-server \
        --twine .venv/wheel-tools/bin/twine --work build/rehearsal

The steps are read from .github/workflows/release.yml, so the rehearsal cannot drift from it: jobs in
the order their ``needs`` give, each step as written.  A ``run:`` step runs under ``bash -e`` in the
job's workspace (a copy of the repository's tracked files, ``.venv`` shared), with the workflow's,
the job's and the step's ``env``; the expressions it may use (``vars.*``, ``github.run_id``,
``github.token``) are filled in, and any other expression stops the rehearsal (the workflow grew
something the rehearsal does not know: teach it here).  The actions and GitHub's side are stand-ins:

- ``actions/checkout``: the workspace; ``upload-artifact``/``download-artifact``: folders under
  the work directory (names, patterns, merge-multiple, if-no-files-found as GitHub does them);
- ``aws-actions/configure-aws-credentials``: a local moto server (Lambda, SSM, STS, EC2, IAM) as
  ``AWS_ENDPOINT_URL``, with the role recorded;
- ``gh``: a recorder on PATH (its arguments and the notes file it is given);
- ``actions/attest-build-provenance``: recorded with the sha256 of each subject (it needs GitHub's
  OIDC token and Sigstore);
- ``pypa/gh-action-pypi-publish``: twine uploads the same folder to a local pypiserver.

Not run, said when reached: the ``Lint`` and ``Test`` steps (``make test`` is what runs this
rehearsal; ``make lint`` is run by CI on its own), jobs whose ``if:`` is false for the rehearsal's
variables (GovCloud, China).  The smoke step runs against moto, which creates and deletes every
function but cannot invoke them here (it runs code in Docker): its FAILs are accepted when every one
is that answer, and said.  Then the layers jobs run a second time on the same artifact (a re-run),
which must publish nothing.  It ends with the published ARNs and the release notes.
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import boto3
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKFLOW = os.path.join(REPO, ".github", "workflows", "release.yml")
SKIPPED_STEPS = {"Lint": "make lint runs on its own in CI", "Test": "make test is what runs this rehearsal"}
NO_DOCKER = "error running docker"
GH_RECORDER = """#!/bin/sh
# gh, recorded by tools/release/rehearse.py: its arguments, and the notes file it was given.
exec "%s" "%s" gh-record "$@"
"""
SUDO = """#!/bin/sh
# sudo stand-in (this rehearsal already runs as the user the runner's sudo would give): drop -E.
[ "$1" = "-E" ] && shift
exec "$@"
"""


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(argv, port, log):
    process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise SystemExit("rehearse: %s did not start (see %s)" % (argv[0], log.name)) from None
            time.sleep(0.2)


def job_order(jobs):
    """Job names in an order their needs allow (the file's order among equals)."""
    order, left = [], list(jobs)
    while left:
        ready = [name for name in left if all(need in order for need in needs(jobs[name]))]
        if not ready:
            raise SystemExit("rehearse: the jobs' needs form a cycle: %s" % left)
        order.append(ready[0])
        left.remove(ready[0])
    return order


def needs(job):
    value = job.get("needs", [])
    return [value] if isinstance(value, str) else list(value)


class Rehearsal:
    def __init__(self, args, variables, endpoint, index_url):
        self.args = args
        self.work = os.path.abspath(args.work)
        self.variables = variables
        self.endpoint = endpoint
        self.index_url = index_url
        self.results = {}
        self.records = []
        self.published = 0
        self.workflow = yaml.safe_load(open(args.workflow))
        self.bin = os.path.join(self.work, "bin")
        os.makedirs(self.bin, exist_ok=True)
        with open(os.path.join(self.bin, "gh"), "w") as out:
            out.write(GH_RECORDER % (sys.executable, os.path.abspath(__file__)))
        os.chmod(os.path.join(self.bin, "gh"), 0o755)
        if not shutil.which("sudo"):
            with open(os.path.join(self.bin, "sudo"), "w") as out:
                out.write(SUDO)
            os.chmod(os.path.join(self.bin, "sudo"), 0o755)

    def say(self, text):
        print(text, flush=True)

    def expand(self, text):
        """The workflow's expressions the rehearsal knows, filled in; any other stops it."""
        if not isinstance(text, str):
            return text

        def one(match):
            expression = match.group(1).strip()
            if expression.startswith("vars."):
                return self.variables.get(expression[5:], "")
            known = {"github.run_id": "4242", "github.token": "rehearsal-token"}
            if expression in known:
                return known[expression]
            raise SystemExit("rehearse: the workflow uses ${{ %s }}, which the rehearsal does not know" % expression)
        return re.sub(r"\$\{\{(.*?)\}\}", one, text)

    def wanted(self, name, job):
        """Whether the job's `if:` holds here (the forms the workflow uses)."""
        condition = str(job.get("if", "")).strip()
        if condition.startswith("${{"):
            condition = condition[3:-2].strip()
        if not condition:
            return all(self.results.get(need) == "success" for need in needs(job))
        match = re.fullmatch(r"vars\.(\w+) != ''", condition)
        if match:
            return bool(self.variables.get(match.group(1))) and \
                all(self.results.get(need) == "success" for need in needs(job))
        if "!cancelled()" in condition:  # the github job: every needed job succeeded or was skipped
            return all(self.results.get(need) in ("success", "skipped") for need in needs(job)) and \
                all(self.results.get(need) == "success" for need in re.findall(r"needs\.([\w-]+)\.result == 'success'",
                                                                                 condition))
        raise SystemExit("rehearse: job %s has `if: %s`, which the rehearsal does not know" % (name, condition))

    def fresh(self, name):
        """The job's workspace, empty (as on a runner, until a checkout fills it)."""
        folder = os.path.join(self.work, "jobs", name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        return folder

    def workspace(self, name):
        """The job's workspace with a copy of the repository's tracked files (as they are now), .venv shared."""
        folder = self.fresh(name)
        files = subprocess.run(["git", "-C", REPO, "ls-files", "-z"], capture_output=True, check=True).stdout
        for path in files.decode().split("\0"):
            if path and os.path.isfile(os.path.join(REPO, path)):
                os.makedirs(os.path.dirname(os.path.join(folder, path)), exist_ok=True)
                shutil.copy2(os.path.join(REPO, path), os.path.join(folder, path))
        os.symlink(os.path.join(REPO, ".venv"), os.path.join(folder, ".venv"))
        return folder

    def run_job(self, name, job):
        self.say("\n== job %s" % name)
        env = dict(os.environ)
        env.update({k: self.expand(v) for k, v in (self.workflow.get("env") or {}).items()})
        env.update({k: self.expand(v) for k, v in (job.get("env") or {}).items()})
        env.update({"GITHUB_REF_NAME": "v%s" % self.args.version, "GITHUB_RUN_ID": "4242", "CI": "true",
                    "PATH": self.bin + os.pathsep + os.environ.get("PATH", ""),
                    "REHEARSAL_RECORDS": os.path.join(self.work, "gh-calls.jsonl")})
        folder = self.fresh(name)
        for step in job["steps"]:
            label = step.get("name") or step.get("uses", "").split("@")[0]
            if label in SKIPPED_STEPS:
                self.say("-- %s: not run (%s)" % (label, SKIPPED_STEPS[label]))
                continue
            started = time.monotonic()
            if "uses" in step:
                action = step["uses"].split("@")[0]
                folder = self.action(action, {k: self.expand(v) for k, v in (step.get("with") or {}).items()},
                                     env, folder, name)
            else:
                step_env = dict(env, **{k: self.expand(v) for k, v in (step.get("env") or {}).items()})
                self.run_step(label, self.expand(step["run"]), step_env, folder)
            self.say("-- %s (%.0f s)" % (label, time.monotonic() - started))
        return "success"

    def run_step(self, label, script, env, folder):
        completed = subprocess.run(["bash", "-e", "-c", script], cwd=folder, env=env, capture_output=True, text=True)
        output = completed.stdout + completed.stderr
        self.published += sum(1 for line in completed.stdout.splitlines() if line.startswith("published "))
        if completed.returncode != 0:
            results = re.split(r"^(?=FAIL |ok )", completed.stdout, flags=re.MULTILINE)[1:]
            fails = [result for result in results if result.startswith("FAIL")]
            if "smoke-release" in script and fails and all(NO_DOCKER in result for result in fails):
                self.say("-- %s: %d function(s) created, invoked and deleted against moto; every invoke "
                         "answered '%s' (moto runs code in Docker, absent here): accepted, not a test of the layer"
                         % (label, len(fails), NO_DOCKER))
                return
            raise SystemExit("rehearse: step %r failed (exit %d):\n%s" % (label, completed.returncode, output[-4000:]))
        if self.args.verbose:
            self.say(output)

    def action(self, action, given, env, folder, job_name):
        artifacts = os.path.join(self.work, "artifacts")
        if action == "actions/checkout":
            assert given.get("persist-credentials") is False, "checkout without persist-credentials: false"
            return self.workspace(job_name)
        if action == "actions/upload-artifact":
            source = os.path.join(folder, given["path"])
            if not os.path.exists(source):
                raise SystemExit("rehearse: upload-artifact %s: no files at %s" % (given["name"], given["path"]))
            target = os.path.join(artifacts, given["name"])
            shutil.rmtree(target, ignore_errors=True)
            if os.path.isdir(source):
                shutil.copytree(source, target)
            else:
                os.makedirs(target)
                shutil.copy2(source, target)
            return folder
        if action == "actions/download-artifact":
            names = [given["name"]] if "name" in given else sorted(
                os.path.basename(p) for p in glob.glob(os.path.join(artifacts, given["pattern"])))
            for artifact in names:
                target = os.path.join(folder, given["path"])
                if "name" not in given and not given.get("merge-multiple"):
                    target = os.path.join(target, artifact)
                shutil.copytree(os.path.join(artifacts, artifact), target, dirs_exist_ok=True)
            return folder
        if action == "aws-actions/configure-aws-credentials":
            env.update({"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "AKIDREHEARSAL",
                        "AWS_SECRET_ACCESS_KEY": "rehearsal", "AWS_REGION": given["aws-region"],
                        "AWS_DEFAULT_REGION": given["aws-region"], "AWS_CONFIG_FILE": os.devnull,
                        "AWS_SHARED_CREDENTIALS_FILE": os.devnull})
            self.records.append({"assume-role": given["role-to-assume"]})
            return folder
        if action == "actions/attest-build-provenance":
            subjects = sorted(path for pattern in given["subject-path"].split() for path in
                              glob.glob(os.path.join(folder, pattern)))
            self.records.append({"attest": {os.path.basename(p): hashlib.sha256(open(p, "rb").read()).hexdigest()
                                            for p in subjects}})
            return folder
        if action == "pypa/gh-action-pypi-publish":
            files = sorted(glob.glob(os.path.join(folder, given["packages-dir"], "*")))
            subprocess.run([self.args.twine, "upload", "--non-interactive", "--repository-url", self.index_url,
                            "-u", "rehearsal", "-p", "rehearsal"] + files, check=True, capture_output=True)
            self.records.append({"pypi": [os.path.basename(p) for p in files]})
            return folder
        raise SystemExit("rehearse: the workflow uses %s, which the rehearsal has no stand-in for" % action)

    def run(self, only=None):
        jobs = self.workflow["jobs"]
        for name in job_order(jobs):
            if only and name not in only:
                continue
            if not self.wanted(name, jobs[name]):
                self.results[name] = "skipped"
                self.say("\n== job %s: skipped (its `if:` is false here)" % name)
                continue
            self.results[name] = self.run_job(name, jobs[name])


def gh_record(argv):
    """The gh stand-in: append its arguments (and the notes file's text) to REHEARSAL_RECORDS."""
    record = {"argv": argv}
    if "--notes-file" in argv:
        record["notes"] = open(argv[argv.index("--notes-file") + 1]).read()
    with open(os.environ["REHEARSAL_RECORDS"], "a") as out:
        out.write(json.dumps(record) + "\n")


def main(argv=None):
    if argv is None and sys.argv[1:2] == ["gh-record"]:
        return gh_record(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moto", required=True)
    parser.add_argument("--pypiserver", required=True)
    parser.add_argument("--twine", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--work", default=os.path.join("build", "rehearsal"))
    parser.add_argument("--workflow", default=WORKFLOW)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(os.path.join(args.work, "packages"))
    started = time.monotonic()
    moto_port, index_port = free_port(), free_port()
    with open(os.path.join(args.work, "moto.log"), "w") as moto_log, \
            open(os.path.join(args.work, "pypiserver.log"), "w") as index_log:
        moto = start([args.moto, "-H", "127.0.0.1", "-p", str(moto_port)], moto_port, moto_log)
        index = start([args.pypiserver, "run", "-i", "127.0.0.1", "-p", str(index_port), "-P", ".", "-a", ".",
                       "--disable-fallback", os.path.join(args.work, "packages")], index_port, index_log)
        try:
            endpoint = "http://127.0.0.1:%d" % moto_port
            role = boto3.client("iam", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id="a",
                                aws_secret_access_key="b").create_role(
                RoleName="smoke", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
            variables = {"AWS_RELEASE_ROLE_ARN": "arn:aws:iam::123456789012:role/release", "AWS_SMOKE_ROLE_ARN": role}
            rehearsal = Rehearsal(args, variables, endpoint, "http://127.0.0.1:%d/" % index_port)
            rehearsal.run()
            first = rehearsal.published
            rehearsal.say("\n== the same layers jobs again on the same artifact (a re-run): nothing may be published")
            rehearsal.run(only=[name for name in rehearsal.workflow["jobs"] if name.startswith("layers")
                                and rehearsal.results.get(name) == "success"])
            again = rehearsal.published - first
        finally:
            for process in (moto, index):
                process.terminate()
                process.wait(timeout=30)
    artifacts = os.path.join(args.work, "artifacts")
    print("\n== published ARNs")
    for path in sorted(glob.glob(os.path.join(artifacts, "layers-*", "*.json"))):
        for layer, arns in sorted(json.load(open(path)).items()):
            for region, arn in sorted(arns.items()):
                print("%-28s %-16s %s" % (layer, region, arn))
    records = [json.loads(line) for line in open(os.path.join(args.work, "gh-calls.jsonl"))]
    print("\n== gh (recorded): %s" % " ".join(records[-1]["argv"][:4]))
    print("\n== release notes\n%s" % records[-1].get("notes", "(none)"))
    print("== other stand-ins: %s" % json.dumps(rehearsal.records)[:2000])
    print("\nrehearsal: first run published %d layer version(s), the re-run %d; %.0f s"
          % (first, again, time.monotonic() - started))
    if not first or again:
        raise SystemExit("rehearse: the first run must publish and the re-run must publish nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
