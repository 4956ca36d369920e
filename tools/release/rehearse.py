"""`make rehearse-release`: the release workflow's own steps, in their order, run as GitHub's runner runs
them, with local stand-ins for GitHub's and AWS's side.

    python tools/release/rehearse.py --moto .venv/moto/bin/moto_server --pypiserver .venv/pypiserver/bin/pypi-server \\
        --twine .venv/wheel-tools/bin/twine --version 0.1.0 --work build/rehearsal [--test-suites test-hook-3.12]

The steps are read from .github/workflows/release.yml, so the rehearsal cannot drift from it: jobs in
the order their ``needs`` give, each step as written.  The whole workflow is checked first: an action
without a stand-in, an expression or an ``if:`` the rehearsal does not know stops it before anything
runs (the workflow grew something: teach it here), and so does an OIDC audience the region's
partition would refuse.

As GitHub's ubuntu runner runs it (run as root here, to set this up):

- a non-root user ``runner`` (uid of its own, HOME /home/runner, passwordless sudo through
  /etc/sudoers.d/runner, as on the runner image), created once with useradd, apt's sudo installed
  when missing; python3.12 (and python3) on its PATH as on the image (a pinned Maven Central build in
  ~/.local/python: this machine's Debian has 3.11 only);
- every ``run:`` step as that user, ``bash --noprofile --norc -eo pipefail``, in a clean environment
  (HOME, PATH without root's tools, the GITHUB_* variables; the machine's CA and proxy settings), with
  the workflow's, the job's and the step's ``env``; ``sudo`` in a step is the real sudo;
- each job on a fresh checkout: the workspace /home/runner/work/<repo>/<repo> emptied, then, as the
  runner, a depth-1 fetch of the tag (on the rehearsed commit: HEAD) from a mirror, as
  actions/checkout does; uncommitted changes are not in it (GitHub checks out the pushed commit);
- artifacts as upload/download do: the files copied out of the job's workspace into an artifact
  store, and into the next job's fresh workspace (names, patterns, merge-multiple,
  if-no-files-found);
- every step, Lint and Test included, except a checkout of *another* GitHub repository (github.com is
  not reachable from here: its folder stays empty, and the steps whose script names that folder are
  not run; said when reached). ``$GITHUB_OUTPUT`` and ``steps.<id>.outputs.<name>`` as GitHub has them.
- The Test step runs as written (``sudo -E -H ... make test``)
  with ``TEST_SUITES`` in its environment: ``--test-suites`` (the Makefile's default: a suite's venv,
  what make test does as root before any test runs: every minor's interpreter, uv's cache; the
  step's sudo, HOME and caches for real in minutes instead of make test's half hour; ``all``: every
  suite);
- after each job, the runner's HOME must hold nothing the runner does not own: on GitHub the next
  step (or, on a self-hosted runner, the next job) run as the runner fails on such files.

Stand-ins: ``aws-actions/configure-aws-credentials``: a local moto server (Lambda, SSM, STS, EC2,
IAM, S3) as ``AWS_ENDPOINT_URL``, with the role recorded and the OIDC audience checked against the
partition (aws-cn's STS accepts only sts.amazonaws.com.cn); ``gh``: a recorder on PATH that keeps
the releases it created (``gh release view`` answers as GitHub would); ``actions/attest-build-provenance``:
recorded with each subject's sha256; ``pypa/gh-action-pypi-publish``: twine into a local pypiserver
(``skip-existing`` as the action does).  The GovCloud and China jobs run too (their variables set):
moto knows those partitions.  The smoke step runs against moto, which creates and deletes every
function but cannot invoke them (it runs code in Docker): its FAILs are accepted when every one is
that answer, and said.

Then every job after ``build`` runs again on the same artifacts (a re-run of the run): it must publish
no layer version and upload nothing to the index.  It ends with the ARNs, the release notes and its time.
"""

import argparse
import glob
import hashlib
import json
import os
import pwd
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
RUNNER = "runner"
RUNNER_HOME = "/home/runner"
SUDOERS = "/etc/sudoers.d/runner"
# The runner image's PATH, less what this machine's root has (pyenv's shims, root's go and cargo bins), with
# the image's python3.12 (runner_python).
RUNNER_PATH = ("/home/runner/.local/python/3.12/bin:/home/runner/.local/bin:/usr/local/go/bin:/usr/local/sbin:"
               "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
# What the machine needs to reach registries (a TLS-inspecting proxy's CA), passed to the runner's steps.
MACHINE_ENV = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT",
               "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
               "NO_PROXY", "no_proxy")
KNOWN_ACTIONS = ("actions/checkout", "actions/upload-artifact", "actions/download-artifact",
                 "aws-actions/configure-aws-credentials", "actions/attest-build-provenance",
                 "pypa/gh-action-pypi-publish")
NO_DOCKER = "error running docker"
DEFAULT_AUDIENCE = "sts.amazonaws.com"
PARTITION_AUDIENCE = {"aws-cn": "sts.amazonaws.com.cn"}
TEST_STEP = "Test"
RUNNER_PYTHON = "3.12"
RUNNER_PYTHON_PREFIX = "/home/runner/.local/python/3.12"
GH_STANDIN = r'''#!/usr/bin/python3
# gh, stood in for by tools/release/rehearse.py: each call recorded (with the notes file's text); the
# releases it created kept, so that `gh release view TAG` answers as GitHub would.
import json, os, sys
argv = sys.argv[1:]
state = os.environ["REHEARSAL_GH_STATE"]
record = {"argv": argv}
if "--notes-file" in argv:
    record["notes"] = open(argv[argv.index("--notes-file") + 1]).read()
with open(state + ".jsonl", "a") as out:
    out.write(json.dumps(record) + "\n")
created = json.load(open(state)) if os.path.exists(state) else []
if argv[:2] == ["release", "view"]:
    sys.exit(0 if argv[2] in created else 1)
if argv[:2] == ["release", "create"]:
    if argv[2] in created:
        sys.exit("a release with the same tag name already exists: %s" % argv[2])
    json.dump(created + [argv[2]], open(state, "w"))
'''


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


def check_audience(given):
    """configure-aws-credentials' OIDC audience for its region's partition, or SystemExit saying what that
    partition's STS would answer (aws-cn accepts only sts.amazonaws.com.cn; the action's default is
    sts.amazonaws.com). Returns the audience."""
    region = given["aws-region"]
    partition = "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"
    audience, wanted = given.get("audience", DEFAULT_AUDIENCE), PARTITION_AUDIENCE.get(partition, DEFAULT_AUDIENCE)
    if audience != wanted:
        raise SystemExit("rehearse: configure-aws-credentials in %s (%s) with the OIDC audience %s: that partition's "
                         "STS answers 'Incorrect token audience' (it accepts %s)" % (region, partition, audience,
                                                                                     wanted))
    return audience


def ensure_runner():
    """The runner user, as on GitHub's image: its own HOME, passwordless sudo. Created once (root)."""
    if os.geteuid() != 0:
        raise SystemExit("rehearse: run as root: it creates the `runner` user and runs the workflow's sudo")
    if not shutil.which("sudo"):
        print("rehearse: installing sudo (apt)", flush=True)
        install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "sudo"]
        if subprocess.run(install, capture_output=True).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], check=True, capture_output=True)
            subprocess.run(install, check=True, capture_output=True)
    try:
        pwd.getpwnam(RUNNER)
    except KeyError:
        print("rehearse: creating the user %s (HOME %s)" % (RUNNER, RUNNER_HOME), flush=True)
        subprocess.run(["useradd", "--create-home", "--home-dir", RUNNER_HOME, "--shell", "/bin/bash", RUNNER],
                       check=True)
    line = "%s ALL=(ALL) NOPASSWD:ALL\n" % RUNNER
    if not os.path.exists(SUDOERS) or open(SUDOERS).read() != line:
        with open(SUDOERS, "w") as out:
            out.write(line)
        os.chmod(SUDOERS, 0o440)
    entry = pwd.getpwnam(RUNNER)
    runner_python(entry.pw_uid, entry.pw_gid)
    return entry.pw_uid, entry.pw_gid


def runner_python(uid, gid):
    """python3.12 and python3 on the runner's PATH, as ubuntu-24.04 has them (/usr/bin/python3.12): this
    machine's Debian has 3.11 only, and the repository's tools need 3.12 (SAM CLI's lock). The pinned
    Maven Central build (tools/interpreters/install_python.py; relocatable: RUNPATH $ORIGIN/../lib),
    unpacked once into ~/.local/python/3.12, the runner's; its bin/ leads RUNNER_PATH (a symlink
    elsewhere would not do: a venv made through it looks for the standard library beside the link)."""
    sys.path.insert(0, REPO)
    from tools.interpreters import install_python
    install_python.ensure_pinned(RUNNER_PYTHON, os.path.dirname(RUNNER_PYTHON_PREFIX))
    chown_tree(os.path.join(RUNNER_HOME, ".local"), uid, gid)


def chown_tree(path, uid, gid):
    for root, dirs, files in os.walk(path):
        for name in [root] + [os.path.join(root, n) for n in dirs + files]:
            os.lchown(name, uid, gid)


def not_owned(home, uid, limit=10):
    """Up to ``limit`` paths under ``home`` the runner does not own."""
    found = [home] if os.lstat(home).st_uid != uid else []
    for root, dirs, files in os.walk(home):
        for name in [os.path.join(root, n) for n in dirs + files]:
            if os.lstat(name).st_uid != uid:
                found.append(name)
                if limit and len(found) >= limit:
                    return found
    return found


class Rehearsal:
    def __init__(self, args, variables, endpoint, index_url, uid, gid):
        self.args = args
        self.work = os.path.abspath(args.work)
        self.variables = variables
        self.endpoint = endpoint
        self.index_url = index_url
        self.uid, self.gid = uid, gid
        self.results = {}
        self.records = []
        self.published = 0
        self.uploaded = 0
        self.workflow = yaml.safe_load(open(args.workflow))
        self.commit = git("rev-parse", "HEAD")
        self.tag = "v%s" % args.version
        repository = os.path.basename(REPO.rstrip("/")) or "repo"
        self.workspace_path = os.path.join(RUNNER_HOME, "work", repository, repository)
        # The runner's side of the rehearsal (its own files: the mirror, gh's stand-in and its state).
        self.side = os.path.join(RUNNER_HOME, "work", "_rehearsal")
        self.artifacts = os.path.join(self.work, "artifacts")
        self.outputs = {}  # step id -> {name: value}, the job's $GITHUB_OUTPUT
        self.unreachable = {}  # path in the workspace -> why it is empty (another repository's checkout)
        self.packages = os.path.join(self.work, "packages")

    def say(self, text):
        print(text, flush=True)

    # --- set-up -------------------------------------------------------------------------------------

    def prepare(self):
        """The mirror the checkouts fetch from (the commit, tagged), gh's stand-in: the runner's."""
        # The HOME persists from run to run here (a cache stand-in; GitHub's VM is new each job): what an
        # earlier, failed rehearsal left root-owned is given back first, as a fresh VM has none.
        left = not_owned(RUNNER_HOME, self.uid, limit=None)
        if left:
            self.say("rehearse: %d file(s) in %s not the runner's (an earlier rehearsal's root step), given back: "
                     "%s" % (len(left), RUNNER_HOME, " ".join(left[:3])))
        shutil.rmtree(self.side, ignore_errors=True)
        os.makedirs(os.path.join(self.side, "bin"))
        mirror = os.path.join(self.side, "source.git")
        subprocess.run(["git", "init", "-q", "--bare", mirror], check=True)
        subprocess.run(["git", "-C", mirror, "fetch", "-q", REPO, "%s:refs/heads/rehearsed" % self.commit], check=True)
        subprocess.run(["git", "-C", mirror, "tag", self.tag, self.commit], check=True)
        with open(os.path.join(self.side, "bin", "gh"), "w") as out:
            out.write(GH_STANDIN)
        os.chmod(os.path.join(self.side, "bin", "gh"), 0o755)
        os.makedirs(os.path.dirname(self.workspace_path), exist_ok=True)
        chown_tree(RUNNER_HOME, self.uid, self.gid)
        self.mirror = mirror
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        self.say("rehearsing commit %s as tag %s%s" % (self.commit[:12], self.tag,
                                                         " (uncommitted changes are not in it)" if dirty else ""))

    # --- what the workflow may say --------------------------------------------------------------

    def expand(self, text, env=None):
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
            output = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
            if output:  # what an earlier step of the job wrote to $GITHUB_OUTPUT ("" while validating)
                return self.outputs.get(output.group(1), {}).get(output.group(2), "")
            raise SystemExit("rehearse: the workflow uses ${{ %s }}, which the rehearsal does not know" % expression)
        return re.sub(r"\$\{\{(.*?)\}\}", one, text)

    def holds(self, condition, job=None):
        """Whether an `if:` holds here (the forms the workflow uses); a job's also needs its needs."""
        condition = str(condition or "").strip()
        if condition.startswith("${{"):
            condition = condition[3:-2].strip()
        needed = needs(job) if job is not None else []
        if not condition:
            return all(self.results.get(need) == "success" for need in needed)
        match = re.fullmatch(r"vars\.(\w+) != ''", condition)
        if match:
            return bool(self.variables.get(match.group(1))) and \
                all(self.results.get(need) == "success" for need in needed)
        if job is not None and "!cancelled()" in condition:  # every needed job succeeded or was skipped
            return all(self.results.get(need) in ("success", "skipped") for need in needed) and \
                all(self.results.get(need) == "success" for need in re.findall(r"needs\.([\w-]+)\.result == 'success'",
                                                                                 condition))
        raise SystemExit("rehearse: `if: %s`, which the rehearsal does not know" % condition)

    def validate(self):
        """Every action, expression and `if:` of the workflow known, before anything runs."""
        self.results = {name: "success" for name in self.workflow["jobs"]}
        for job in self.workflow["jobs"].values():
            self.holds(job.get("if"), job)
            for value in list((job.get("env") or {}).values()):
                self.expand(value)
            for step in job["steps"]:
                self.holds(step.get("if"))
                if "uses" in step and step["uses"].split("@")[0] not in KNOWN_ACTIONS:
                    raise SystemExit("rehearse: the workflow uses %s, which the rehearsal has no stand-in for"
                                     % step["uses"].split("@")[0])
                if step.get("uses", "").startswith("aws-actions/configure-aws-credentials@"):
                    check_audience(step["with"])
                for value in [step.get("run")] + list((step.get("with") or {}).values()) + \
                        list((step.get("env") or {}).values()):
                    self.expand(value)
        self.results = {}

    # --- a job, as the runner ---------------------------------------------------------------------

    def base_env(self):
        env = {name: os.environ[name] for name in MACHINE_ENV if name in os.environ}
        env.update({"HOME": RUNNER_HOME, "USER": RUNNER, "LOGNAME": RUNNER, "SHELL": "/bin/bash",
                    "LANG": "C.UTF-8", "XDG_CONFIG_HOME": os.path.join(RUNNER_HOME, ".config"),
                    "PATH": os.path.join(self.side, "bin") + ":" + RUNNER_PATH,
                    "CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux",
                    "GITHUB_WORKSPACE": self.workspace_path, "GITHUB_REF_NAME": self.tag,
                    "GITHUB_REF": "refs/tags/" + self.tag, "GITHUB_SHA": self.commit, "GITHUB_RUN_ID": "4242",
                    "GITHUB_REPOSITORY": "example/aws-python-keepalive",
                    "RUNNER_TEMP": os.path.join(RUNNER_HOME, "work", "_temp"),
                    "REHEARSAL_GH_STATE": os.path.join(self.side, "gh-releases.json")})
        return env

    def as_runner(self, argv, env, cwd, **kwargs):
        return subprocess.run(argv, cwd=cwd, env=env, user=self.uid, group=self.gid, extra_groups=[], **kwargs)

    def fresh_workspace(self):
        """The job's workspace, empty and the runner's (a fresh VM's), until a checkout fills it."""
        shutil.rmtree(self.workspace_path, ignore_errors=True)
        os.makedirs(self.workspace_path)
        os.makedirs(os.path.join(RUNNER_HOME, "work", "_temp"), exist_ok=True)
        chown_tree(os.path.join(RUNNER_HOME, "work", "_temp"), self.uid, self.gid)
        os.chown(self.workspace_path, self.uid, self.gid)
        return self.workspace_path

    def checkout(self, env):
        """What actions/checkout does (persist-credentials: false): the tag, depth 1, as the runner."""
        folder = self.workspace_path
        for argv in (["git", "init", "-q", folder],
                     ["git", "-C", folder, "fetch", "-q", "--no-tags", "--depth=1", "file://" + self.mirror,
                      "+refs/tags/%s:refs/tags/%s" % (self.tag, self.tag)],
                     ["git", "-C", folder, "checkout", "-q", "--detach", "refs/tags/" + self.tag]):
            completed = self.as_runner(argv, env, folder, capture_output=True, text=True)
            if completed.returncode:
                raise SystemExit("rehearse: checkout failed: %s\n%s" % (" ".join(argv), completed.stderr))

    def run_job(self, name, job):
        self.say("\n== job %s (as %s, in a fresh %s)" % (name, RUNNER, self.workspace_path))
        env = self.base_env()
        env.update({k: self.expand(v) for k, v in (self.workflow.get("env") or {}).items()})
        env.update({k: self.expand(v) for k, v in (job.get("env") or {}).items()})
        self.fresh_workspace()
        self.outputs, self.unreachable = {}, {}
        for step in job["steps"]:
            label = step.get("name") or step.get("uses", "").split("@")[0]
            if not self.holds(step.get("if")):
                self.say("-- %s: skipped (its `if:` is false here)" % label)
                continue
            needing = [path for path in self.unreachable if path in str(step.get("run", ""))]
            if needing:
                self.say("-- %s: NOT RUN: it uses %s, %s" % (label, needing[0], self.unreachable[needing[0]]))
                continue
            started = time.monotonic()
            if "uses" in step:
                given = {k: self.expand(v) for k, v in (step.get("with") or {}).items()}
                self.action(step["uses"].split("@")[0], given, env)
            else:
                step_env = dict(env, **{k: self.expand(v) for k, v in (step.get("env") or {}).items()})
                output_file = os.path.join(RUNNER_HOME, "work", "_temp", "output-%s" % (step.get("id") or "step"))
                with open(output_file, "w"):
                    pass
                os.chown(output_file, self.uid, self.gid)
                step_env["GITHUB_OUTPUT"] = output_file
                if label == TEST_STEP and self.args.test_suites != "all":
                    step_env["TEST_SUITES"] = self.args.test_suites
                    self.say("-- %s: as written, with TEST_SUITES=%s (a subset, for time; REHEARSAL_TEST_SUITES=all "
                             "runs every suite)" % (label, self.args.test_suites))
                self.run_step(label, self.expand(step["run"]), step_env)
                if step.get("id"):
                    self.outputs[step["id"]] = dict(line.split("=", 1) for line in open(output_file).read().splitlines()
                                                    if "=" in line)
            self.say("-- %s (%.0f s)" % (label, time.monotonic() - started))
        left = not_owned(RUNNER_HOME, self.uid)
        if left:
            raise SystemExit("rehearse: after job %s the runner's HOME holds files it does not own (a step run as "
                             "root wrote them; the runner's next step fails on them):\n  %s"
                             % (name, "\n  ".join(left)))
        return "success"

    def run_step(self, label, script, env):
        completed = self.as_runner(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], env,
                                   self.workspace_path, capture_output=True, text=True)
        output = completed.stdout + completed.stderr
        self.published += sum(1 for line in completed.stdout.splitlines() if line.startswith("published "))
        with open(os.path.join(self.work, "logs", re.sub(r"[^\w.-]+", "_", label) + ".log"), "a") as log:
            log.write(output)
        if completed.returncode != 0:
            results = re.split(r"^(?=FAIL |ok )", completed.stdout, flags=re.MULTILINE)[1:]
            fails = [result for result in results if result.startswith("FAIL")]
            if "smoke-release" in script and fails and all(NO_DOCKER in result for result in fails):
                self.say("-- %s: %d function(s) created, invoked and deleted against moto; every invoke "
                         "answered '%s' (moto runs code in Docker, absent here): accepted, not a test of the layer"
                         % (label, len(fails), NO_DOCKER))
                return
            raise SystemExit("rehearse: step %r failed (exit %d):\n%s" % (label, completed.returncode, output[-6000:]))
        if self.args.verbose:
            self.say(output)

    def action(self, action, given, env):
        folder = self.workspace_path
        if action == "actions/checkout":
            assert given.get("persist-credentials") is False, "checkout without persist-credentials: false"
            if given.get("repository"):
                # Another GitHub repository: GitHub is not reachable from here (PyPI and Maven Central are).
                path = given.get("path", ".")
                os.makedirs(os.path.join(folder, path), exist_ok=True)
                chown_tree(folder, self.uid, self.gid)
                self.unreachable[path] = "a checkout of github.com/%s at %s, which is not reachable from here" % (
                    given["repository"], given.get("ref") or "its default branch")
                self.say("-- actions/checkout of %s: NOT RUN (%s stays empty; github.com is not reachable from "
                         "here): the steps that use it are not run either" % (given["repository"], path))
                return
            return self.checkout(env)
        if action == "actions/upload-artifact":
            source = os.path.join(folder, given["path"])
            files = [source] if os.path.isfile(source) else sorted(
                p for p in glob.glob(os.path.join(source, "**"), recursive=True) if os.path.isfile(p))
            if not files and given.get("if-no-files-found", "warn") == "error":
                raise SystemExit("rehearse: upload-artifact %s: no files at %s" % (given["name"], given["path"]))
            target = os.path.join(self.artifacts, given["name"])
            shutil.rmtree(target, ignore_errors=True)
            os.makedirs(target)
            for path in files:
                relative = os.path.basename(path) if path == source else os.path.relpath(path, source)
                os.makedirs(os.path.dirname(os.path.join(target, relative)), exist_ok=True)
                shutil.copyfile(path, os.path.join(target, relative))
            return
        if action == "actions/download-artifact":
            names = [given["name"]] if "name" in given else sorted(
                os.path.basename(p) for p in glob.glob(os.path.join(self.artifacts, given["pattern"])))
            for artifact in names:
                if not os.path.isdir(os.path.join(self.artifacts, artifact)):
                    raise SystemExit("rehearse: download-artifact: no artifact %s" % artifact)
                target = os.path.join(folder, given["path"])
                if "name" not in given and not given.get("merge-multiple"):
                    target = os.path.join(target, artifact)
                shutil.copytree(os.path.join(self.artifacts, artifact), target, dirs_exist_ok=True,
                                copy_function=shutil.copyfile)
            chown_tree(folder, self.uid, self.gid)
            return
        if action == "aws-actions/configure-aws-credentials":
            region, audience = given["aws-region"], check_audience(given)
            env.update({"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "AKIDREHEARSAL",
                        "AWS_SECRET_ACCESS_KEY": "rehearsal", "AWS_REGION": region, "AWS_DEFAULT_REGION": region,
                        "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull})
            self.records.append({"assume-role": given["role-to-assume"], "audience": audience})
            return
        if action == "actions/attest-build-provenance":
            subjects = sorted(path for pattern in given["subject-path"].split() for path in
                              glob.glob(os.path.join(folder, pattern)))
            self.records.append({"attest": {os.path.basename(p): hashlib.sha256(open(p, "rb").read()).hexdigest()
                                            for p in subjects}})
            return
        if action == "pypa/gh-action-pypi-publish":
            files = sorted(glob.glob(os.path.join(folder, given["packages-dir"], "*")))
            before = set(os.listdir(self.packages))
            upload = [self.args.twine, "upload", "--non-interactive", "--repository-url", self.index_url,
                      "-u", "rehearsal", "-p", "rehearsal"]
            if str(given.get("skip-existing", "false")).lower() == "true":
                # The action passes twine --skip-existing, which twine honours for PyPI only: the same here,
                # by name (pypiserver keeps each file under its own name).
                files = [path for path in files if os.path.basename(path) not in before]
            completed = subprocess.run(upload + files, capture_output=True, text=True) if files else None
            if completed and completed.returncode:
                raise SystemExit("rehearse: the upload to the index failed:\n%s"
                                 % (completed.stdout + completed.stderr))
            new = sorted(set(os.listdir(self.packages)) - before)
            self.uploaded += len(new)
            self.records.append({"pypi": new})
            return
        raise SystemExit("rehearse: the workflow uses %s, which the rehearsal has no stand-in for" % action)

    def run(self, only=None):
        jobs = self.workflow["jobs"]
        for name in job_order(jobs):
            if only is not None and name not in only:
                continue
            if not self.holds(jobs[name].get("if"), jobs[name]):
                self.results[name] = "skipped"
                self.say("\n== job %s: skipped (its `if:` is false here)" % name)
                continue
            started = time.monotonic()
            self.results[name] = self.run_job(name, jobs[name])
            self.say("== job %s: %s (%.0f s)" % (name, self.results[name], time.monotonic() - started))


def git(*argv):
    return subprocess.run(["git", "-C", REPO, *argv], capture_output=True, text=True, check=True).stdout.strip()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moto", required=True)
    parser.add_argument("--pypiserver", required=True)
    parser.add_argument("--twine", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--work", default=os.path.join("build", "rehearsal"))
    parser.add_argument("--workflow", default=WORKFLOW)
    parser.add_argument("--test-suites", default=".venv/test-3.12/.installed",
                        help="TEST_SUITES for the Test step (make test's suites; `all`: every one)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(os.path.join(args.work, "packages"))
    os.makedirs(os.path.join(args.work, "logs"))
    started = time.monotonic()
    variables = {"AWS_RELEASE_ROLE_ARN": "arn:aws:iam::123456789012:role/release",
                 "AWS_GOVCLOUD_RELEASE_ROLE_ARN": "arn:aws-us-gov:iam::123456789012:role/release",
                 "AWS_CHINA_RELEASE_ROLE_ARN": "arn:aws-cn:iam::123456789012:role/release"}
    probe = Rehearsal(args, variables, "", "", 0, 0)
    probe.validate()  # before anything is set up: an unknown step stops it in a second
    uid, gid = ensure_runner()
    moto_port, index_port = free_port(), free_port()
    with open(os.path.join(args.work, "moto.log"), "w") as moto_log, \
            open(os.path.join(args.work, "pypiserver.log"), "w") as index_log:
        moto = start([args.moto, "-H", "127.0.0.1", "-p", str(moto_port)], moto_port, moto_log)
        index = start([args.pypiserver, "run", "-i", "127.0.0.1", "-p", str(index_port), "-P", ".", "-a", ".",
                       "--disable-fallback", os.path.join(args.work, "packages")], index_port, index_log)
        try:
            endpoint = "http://127.0.0.1:%d" % moto_port
            for variable, partition_region in (("AWS_SMOKE_ROLE_ARN", "us-east-1"),
                                               ("AWS_GOVCLOUD_SMOKE_ROLE_ARN", "us-gov-west-1"),
                                               ("AWS_CHINA_SMOKE_ROLE_ARN", "cn-north-1")):
                variables[variable] = boto3.client(
                    "iam", region_name=partition_region, endpoint_url=endpoint, aws_access_key_id="a",
                    aws_secret_access_key="b").create_role(RoleName="smoke-" + partition_region,
                                                           AssumeRolePolicyDocument="{}")["Role"]["Arn"]
            rehearsal = Rehearsal(args, variables, endpoint, "http://127.0.0.1:%d/" % index_port, uid, gid)
            rehearsal.prepare()
            rehearsal.run()
            first, first_uploads = rehearsal.published, rehearsal.uploaded
            rehearsal.say("\n== every job after build again, on the same artifacts (a re-run): nothing may be "
                          "published")
            rehearsal.run(only=[name for name in rehearsal.workflow["jobs"] if name != "build"
                                and rehearsal.results.get(name) == "success"])
            again, again_uploads = rehearsal.published - first, rehearsal.uploaded - first_uploads
        finally:
            for process in (moto, index):
                process.terminate()
                process.wait(timeout=30)
    print("\n== published ARNs")
    for path in sorted(glob.glob(os.path.join(rehearsal.artifacts, "layers-*", "*.json"))):
        for layer, arns in sorted(json.load(open(path)).items()):
            for region, arn in sorted(arns.items()):
                print("%-28s %-16s %s" % (layer, region, arn))
    calls = os.path.join(rehearsal.side, "gh-releases.json.jsonl")
    records = [json.loads(line) for line in open(calls)] if os.path.exists(calls) else []
    for record in records:
        print("\n== gh (recorded): %s" % " ".join(record["argv"][:3]))
    notes = [record["notes"] for record in records if "notes" in record]
    print("\n== release notes\n%s" % (notes[-1] if notes else "(none)"))
    print("== other stand-ins: %s" % json.dumps(rehearsal.records)[:2000])
    print("\nrehearsal: the first run published %d layer version(s) and %d file(s) to the index, the re-run %d "
          "and %d; %.0f s" % (first, first_uploads, again, again_uploads, time.monotonic() - started))
    if not first or not first_uploads or again or again_uploads:
        raise SystemExit("rehearse: the first run must publish and the re-run must publish nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
