"""`make publish`: each release zip into each region, one version number everywhere, staged, checked.

    make publish REGIONS="us-east-1 eu-west-1" FLAVOR=all PUBLIC=1
    make publish REGIONS=all                       # every region of tools/release/regions.json enabled here

First the credentials: STS GetCallerIdentity in the partition's home region.  Rejected credentials
(InvalidClientTokenId, UnrecognizedClientException, SignatureDoesNotMatch, ExpiredToken...) stop the
run there, naming the answer, before any region is tried.  Then, for each layer (``--layer NAME=ZIP``:
the Makefile passes the release zips of FLAVOR=full|hook|all; or ``--zip ZIP`` with ``--layer-name
BASE``: ``make publish ZIP=...``, the layer named after the flavor the zip *holds*, BASE or BASE-hook)
and each region (in parallel, one
progress line), three steps (``--step``; all three by default, the release workflow runs them apart
with the smoke test between the first and the second):

1. **stage** (private): every version of the layer is looked at (tools/release/versions.py): this
   zip is found by its ``CodeSha256`` (or, signed, by the release's SSM parameter), or the next
   number is read.  One release is one version number in every region: when the regions disagree,
   nothing is published and the message says how to align (``--align``: placeholder versions,
   published and deleted, in the regions behind).  Then the zip is published where it is missing,
   *without* any grant: runtimes, architectures, license and the description from
   tools/packaging/layer_info.py.  The zip goes up inline (Lambda's 50 MB direct-upload limit), or, with
   ``--signing-profile``, through S3 and an AWS Signer job (tools/release/signing.py).  The
   per-release SSM parameter ``<prefix>/<layer>/<release version>`` names it, written *before* the
   publish (the version number is known), so that a run stopped between the two is re-runnable,
   signed or not.
2. **promote**: ``--public`` grants ``lambda:GetLayerVersion`` to principal ``*`` (any account),
   ``--principal-org o-...`` to one organization's accounts, neither: private; ``<prefix>/<layer>/latest``
   moves to it only when it is the newest version (a re-run of an older release leaves it alone).
3. **check**: in each region the version has the grant asked for and ``latest`` names it.

A re-run publishes nothing and finishes what a partial run left.  ``build/release/layers.json``
maps layer -> region -> ARN (merged with what earlier runs wrote).  Regions: a list, or ``all`` =
tools/release/regions.json's list for ``--partition`` (aws, aws-us-gov, aws-cn, ...).  For ``all``
only, regions the account has not enabled (EC2 DescribeRegions: ``not-opted-in``, or an endpoint
refusing the credentials STS just accepted, which is what a disabled opt-in region answers) are
skipped and listed; a region named explicitly that cannot be published fails the run.  Credentials
and endpoints come from the usual boto3 chain (AWS_PROFILE, AWS_ENDPOINT_URL, ...).  Exit status 1
when any region failed (the others are still recorded).
"""

import argparse
import base64
import concurrent.futures
import hashlib
import json
import os
import re
import sys
import threading
import time
import zipfile

import boto3
import botocore.config
import botocore.exceptions

# Run as a script: the repository root on sys.path, so that tools.<room> and bench resolve.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
from tools.packaging import layer_info  # noqa: E402
from tools.release import regions as region_list  # noqa: E402
from tools.release import signing  # noqa: E402
from tools.release import ssm_params  # noqa: E402
from tools.release import versions  # noqa: E402

# Statement ids of the two grants (unique per layer version).
PUBLIC_STATEMENT_ID = "public-get-layer-version"
ORG_STATEMENT_ID = "organization-get-layer-version"
# Lambda refuses larger inline uploads.
MAX_INLINE_ZIP = 50 * 1024 * 1024
SSM_PREFIX = ssm_params.PREFIX
# What an endpoint answers for credentials it does not know (also what an opt-in region that is not
# enabled answers, hence: skipped under REGIONS=all once STS accepted the same credentials).
REFUSED_CODES = {"UnrecognizedClientException", "InvalidClientTokenId", "AuthFailure", "SignatureDoesNotMatch",
                 "ExpiredToken", "ExpiredTokenException", "InvalidAccessKeyId"}
CLIENT_CONFIG = botocore.config.Config(retries={"mode": "standard", "max_attempts": 8},
                                       connect_timeout=10, read_timeout=300)
# The credentials probe: an answer that will not change is not retried (rejected credentials fail
# the run in seconds, not after the standard mode's back-off).
PROBE_CONFIG = botocore.config.Config(retries={"mode": "standard", "max_attempts": 2}, connect_timeout=5,
                                      read_timeout=15)


# A file or layer name that says "hook" as a word (layer-hook.zip, aws-python-keepalive-hook-0.1.0.zip,
# my-layer-hook): the hook-only flavor; any other: the full one.
HOOK_WORD = re.compile(r"(?:^|[-_.])hook(?:[-_.]|$)")


def named_flavor(name):
    """The flavor a file or layer name says: 'hook' when it has the word hook, else 'full'."""
    return "hook" if HOOK_WORD.search(name) else "full"


def check_flavor(path, held):
    """Refuse a zip whose file name says another flavor than the one it holds (``held``, read from its
    contents): a hook-only zip published as the full layer would take the SDK away from every
    function that attaches it as the full layer, and a full zip named as the hook's would bring one."""
    what = {"full": "the full layer (boto3/botocore inside)", "hook": "the hook-only layer (no boto3/botocore inside)"}
    said = named_flavor(os.path.basename(path))
    if said != held:
        raise SystemExit("publish: %s holds %s, but its file name says %s: nothing was published. Check that this "
                         "is the zip you meant; a hook-only zip's name has the word hook (layer-hook.zip, "
                         "aws-python-keepalive-hook-<version>.zip), a full zip's has not"
                         % (path, what[held], what[said].split(" (")[0]))


def read_zip_info(path):
    """layer_info.zip_info of ``path``, or a refusal naming the file when it is not a zip or not a
    layer zip of this project (no python/aws_keepalive/): the flavor cannot be read from it."""
    try:
        return layer_info.zip_info(path)
    except (KeyError, zipfile.BadZipFile) as error:
        raise SystemExit("publish: %s is not an aws-python-keepalive layer zip (%s): nothing was published. "
                         "Publish a zip that `make release` or `make layer` wrote, or a release's zip"
                         % (path, error)) from None


class Layer:
    """One zip to publish under one name: its bytes, digests and description, read once.  The flavor
    is read from the zip's contents (layer_info.zip_info).  ``name`` None (``--zip``): the base name
    ``base``, with -hook for a hook-only zip, and the file's name must agree (``check_flavor``);
    ``--layer NAME=ZIP`` names the layer itself (the release's own files, the tests' copies)."""

    def __init__(self, name, path, base=None):
        self.path = path
        with open(path, "rb") as handle:
            self.data = handle.read()
        if len(self.data) > MAX_INLINE_ZIP:
            raise SystemExit("publish: %s is %d bytes, above Lambda's 50 MB inline limit" % (path, len(self.data)))
        digest = hashlib.sha256(self.data)
        self.sha256 = digest.hexdigest()
        self.code_sha256 = base64.b64encode(digest.digest()).decode()  # Lambda's CodeSha256
        info = read_zip_info(path)
        self.flavor = info["flavor"]
        if name is None:
            check_flavor(path, self.flavor)
            name = base + "-hook" if self.flavor == "hook" else base
        self.name = name
        self.version = info["hook"]
        self.description = layer_info.description_from_zip(path)


def parse_layers(values, zips=(), base=None):
    """Layers of ``--layer NAME=ZIP`` values and of ``--zip ZIP`` paths (named from ``base``)."""
    layers = []
    pairs = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise SystemExit("publish: --layer takes NAME=ZIP, got %r" % value)
        pairs.append((name, path))
    if zips and not base:
        raise SystemExit("publish: --zip needs --layer-name (the base name; a hook-only zip gets -hook)")
    pairs += [(None, path) for path in zips]
    for name, path in pairs:
        if not os.path.isfile(path):
            raise SystemExit("publish: no zip at %s (run `make release`)" % path)
        layers.append(Layer(name, path, base))
    names = [layer.name for layer in layers]
    if len(set(names)) != len(names):
        raise SystemExit("publish: two zips for one layer name (%s): give one zip per flavor" % ", ".join(names))
    return layers


def arn_of(client, name, number):
    return client.get_layer_version(LayerName=name, VersionNumber=number)["LayerVersionArn"]


def ensure_permission(client, name, version, public, organization):
    """Grant the public or organization read once per version; returns what the version has."""
    if not public and not organization:
        return "private"
    statement_id = PUBLIC_STATEMENT_ID if public else ORG_STATEMENT_ID
    if statement_id not in granted(client, name, version):
        grant = dict(LayerName=name, VersionNumber=version, StatementId=statement_id,
                     Action="lambda:GetLayerVersion", Principal="*")
        if not public:
            grant["OrganizationId"] = organization
        client.add_layer_version_permission(**grant)
    return "public" if public else "organization %s" % organization


def granted(client, name, version):
    """The statement ids of a layer version's policy."""
    try:
        policy = json.loads(client.get_layer_version_policy(LayerName=name, VersionNumber=version)["Policy"])
    except client.exceptions.ResourceNotFoundException:
        return set()
    return {statement.get("Sid") for statement in policy.get("Statement", [])}


def content_for(layer, region, session, signer_options):
    """The Content argument of publish_layer_version: inline, or the signed object in S3."""
    if not signer_options:
        return {"ZipFile": layer.data}
    bucket = signer_options["bucket"].format(region=region)
    signed = signing.sign(session.client("s3", region_name=region, config=CLIENT_CONFIG),
                          session.client("signer", region_name=region, config=CLIENT_CONFIG),
                          bucket, layer.data, os.path.basename(layer.path), signer_options["profile"],
                          timeout_s=signer_options.get("timeout_s", 600))
    return {"S3Bucket": signed["bucketName"], "S3Key": signed["key"]}


def clients(region):
    session = boto3.session.Session()
    return (session, session.client("lambda", region_name=region, config=CLIENT_CONFIG),
            session.client("ssm", region_name=region, config=CLIENT_CONFIG))


def find_region(region, layers, options):
    """{layer name: (this zip's version or None, the highest version)} in one region."""
    _, client, ssm = clients(region)
    return {layer.name: versions.find(client, ssm, layer, options["ssm_prefix"]) for layer in layers}


def stage_region(region, layers, plans, found, options):
    """Step 1, private: the zip becomes version ``plans[name].number`` (published, after placeholders
    when aligning, or found); the per-release SSM parameter names it. No grant, no `latest`.
    Returns [(layer name, 'published'|'unchanged', ARN)]."""
    session, client, ssm = clients(region)
    results = []
    for layer in layers:
        existing, _ = found[layer.name]
        number = plans[layer.name].number
        if existing:
            arn, status = arn_of(client, layer.name, existing), "unchanged"
        else:
            if options.get("align") and region in plans[layer.name].behind:
                versions.align(client, layer.name, plans[layer.name].behind[region])
            # The per-release parameter first, naming the version this zip is about to become: a run
            # stopped right after the publish (before anything else is written) leaves a version a re-run
            # must recognise, and a signed zip's bytes (Signer's) can only be recognised through this
            # parameter. Written after, it would be missing there, the re-run would plan the next number
            # in that region only, and refuse for good (one number everywhere). A parameter naming a
            # version that never came (the publish failed) names no existing version: found nothing.
            ssm_params.ensure(ssm, layer, ssm_params.names(options["ssm_prefix"], layer)[1],
                              "%s%s:layer:%s:%d" % (region_list.layer_arn_prefix(options["partition"], region),
                                                    account_of(session, region, options), layer.name, number))
            response = client.publish_layer_version(
                LayerName=layer.name,
                Description=layer.description,
                Content=content_for(layer, region, session, options.get("signing")),
                CompatibleRuntimes=list(layer_info.RUNTIMES),
                CompatibleArchitectures=list(layer_info.ARCHITECTURES),
                LicenseInfo=layer_info.LICENSE,
            )
            arn, status = response["LayerVersionArn"], "published"
            if response["Version"] != number:
                # A deleted newest version spent a number list_layer_versions no longer shows.
                raise RuntimeError("%s is version %d here, not %d as in the other regions: align by hand "
                                   "(docs/release.md) before making it public" % (arn, response["Version"], number))
        expected = region_list.layer_arn_prefix(options["partition"], region)
        if not arn.startswith(expected):
            raise RuntimeError("%s: %s is not a %s ARN (%s...)" % (region, arn, options["partition"], expected))
        ssm_params.ensure(ssm, layer, ssm_params.names(options["ssm_prefix"], layer)[1], arn)
        results.append((layer.name, status, arn))
    return results


def account_of(session, region, options):
    """The account id (main() proved the credentials with it; asked of STS in ``region`` otherwise)."""
    if not options.get("account"):
        options["account"] = session.client("sts", region_name=region, config=CLIENT_CONFIG).get_caller_identity()[
            "Account"]
    return options["account"]


def staged(region, layers, options):
    """[(layer, ssm client, lambda client, its version, the highest version, ARN)] of staged zips in one
    region; RuntimeError when a zip is not published there."""
    _, client, ssm = clients(region)
    found = []
    for layer in layers:
        number, highest = versions.find(client, ssm, layer, options["ssm_prefix"])
        if not number:
            raise RuntimeError("%s: this zip is not published here (the stage step did not run, or failed)"
                               % layer.name)
        found.append((layer, ssm, client, number, highest, arn_of(client, layer.name, number)))
    return found


def promote_region(region, layers, options):
    """Step 2, after the smoke: the grant (PUBLIC / PRINCIPAL_ORG) and `latest`, which moves only to
    the newest version (a re-run of an older release leaves it alone). The zip must be staged.
    Returns [(layer name, what was done, ARN)]."""
    results = []
    for layer, ssm, client, number, highest, arn in staged(region, layers, options):
        access = ensure_permission(client, layer.name, number, options["public"], options["organization"])
        if number == highest:
            ssm_params.ensure(ssm, layer, ssm_params.names(options["ssm_prefix"], layer)[0], arn)
            done = "%s, latest" % access
        else:
            done = "%s, latest left at version %d (this is an older release)" % (access, highest)
        results.append((layer.name, done, arn))
    return results


def check_region(region, layers, options):
    """Step 3, after the fan-out: the version has the grant asked for and `latest` names it (unless a
    newer version exists). Returns [(layer name, 'checked', ARN)]; a RuntimeError says what is wrong."""
    results = []
    for layer, ssm, client, number, highest, arn in staged(region, layers, options):
        wanted = PUBLIC_STATEMENT_ID if options["public"] else ORG_STATEMENT_ID if options["organization"] else None
        if wanted and wanted not in granted(client, layer.name, number):
            raise RuntimeError("%s has no %s grant" % (arn, wanted))
        latest, _ = ssm_params.get(ssm, ssm_params.names(options["ssm_prefix"], layer)[0])
        if number == highest and latest != arn:
            raise RuntimeError("%s: latest names %s, not %s" % (layer.name, latest, arn))
        results.append((layer.name, "checked", arn))
    return results


def publish_region(region, layers, options):
    """Stage and promote every layer in one region alone (the number is this region's own next)."""
    found = find_region(region, layers, options)
    plans = {layer.name: versions.Plan(layer.name, {region: found[layer.name]}) for layer in layers}
    results = stage_region(region, layers, plans, found, options)
    promote_region(region, layers, options)
    return results


def refused(error):
    """The error code when ``error`` is an endpoint refusing the credentials, else None."""
    if isinstance(error, botocore.exceptions.ClientError):
        code = error.response.get("Error", {}).get("Code")
        return code if code in REFUSED_CODES else None
    return None


def prove_credentials(partition, regions):
    """The account id, from STS in the partition's home region (or the first region): rejected
    credentials stop the run here, naming the cause, before any region is tried (a few seconds: no
    retries for an answer that will not change)."""
    region = region_list.HOME_REGIONS.get(partition) or regions[0]
    sts = boto3.session.Session().client("sts", region_name=region, config=PROBE_CONFIG)
    try:
        return sts.get_caller_identity()["Account"]
    except botocore.exceptions.NoCredentialsError:
        raise SystemExit("publish: no AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID..., or a role): "
                         "nothing was published") from None
    except botocore.exceptions.ClientError as error:
        answer = error.response.get("Error", {})
        raise SystemExit("publish: the credentials were refused by STS in %s (%s: %s): nothing was published. "
                         "Check AWS_PROFILE / AWS_ACCESS_KEY_ID / the role, and that they are for partition %s"
                         % (region, answer.get("Code"), answer.get("Message"), partition)) from None
    except botocore.exceptions.BotoCoreError as error:
        raise SystemExit("publish: cannot reach STS in %s (%s): nothing was published" % (region, error)) from None


class Progress:
    """One line on a terminal, rewritten as regions finish; one line per region otherwise."""

    def __init__(self, total, stream=sys.stderr, step=""):
        self.total = total
        self.step = step
        self.done = 0
        self.counts = {}
        self.stream = stream
        self.tty = stream.isatty()
        self.lock = threading.Lock()
        self.started = time.monotonic()

    def region_done(self, region, state):
        with self.lock:
            self.done += 1
            self.counts[state] = self.counts.get(state, 0) + 1
            summary = ", ".join("%d %s" % (count, name) for name, count in sorted(self.counts.items()))
            line = "[%s%d/%d regions, %.0f s] %s: %s (%s)" % (self.step + " " if self.step else "", self.done,
                                                              self.total, time.monotonic() - self.started,
                                                              region, state, summary)
            if self.tty:
                self.stream.write("\r\033[K" + line + ("\n" if self.done == self.total else ""))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()


def in_parallel(step, regions, work, options, jobs, stream):
    """``work(region)`` for every region at once; {region: ('done', results) | ('skipped'|'failed', message)}.
    A region refusing the credentials (after STS accepted them) is skipped when ``options['all']``
    (an opt-in region this account has not enabled), failed when it was named."""
    outcome = {}
    progress = Progress(len(regions), stream, step)

    def one(region):
        try:
            results = work(region)
            outcome[region] = ("done", results)
            state = "published" if isinstance(results, list) and any(
                result[1] == "published" for result in results) else "done"
        except Exception as error:  # one region's failure must not stop the others
            code = refused(error)
            if code and options.get("all"):
                outcome[region] = ("skipped", "not enabled in this account (%s)" % code)
                state = "skipped"
            elif code:
                outcome[region] = ("failed", "the credentials were refused here (%s), though STS accepted them: "
                                             "is the region enabled in this account?" % code)
                state = "failed"
            else:
                outcome[region] = ("failed", "%s: %s" % (type(error).__name__, error))
                state = "failed"
        progress.region_done(region, state)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(jobs, len(regions)))) as pool:
        list(pool.map(one, regions))
    return outcome


def run(layers, regions, options, jobs=16, stream=sys.stderr, step="all"):
    """One step (stage, promote, check) or all three, every region in parallel; returns
    {region: ('done', results) | ('skipped'|'failed', message)}: a region's results are those of the
    first step run (the stage's: published or unchanged), a later step's failure replaces them.
    SystemExit when the layers cannot have one version number in every region, before anything is
    published."""
    outcome = {}

    def merge(phase):
        for region, result in phase.items():
            if result[0] != "done" or region not in outcome:
                outcome[region] = result

    def failed():
        return any(state == "failed" for state, _ in outcome.values())

    def good():
        return [region for region in regions if outcome.get(region, ("done",))[0] == "done"]

    if step in ("stage", "all"):
        found = in_parallel("look", regions, lambda region: find_region(region, layers, options), options, jobs,
                            stream)
        answered = {region: detail for region, (state, detail) in found.items() if state == "done"}
        plans = {layer.name: versions.Plan(layer.name, {region: detail[layer.name]
                                                        for region, detail in answered.items()})
                 for layer in layers}
        problems = [plan.problem() for plan in plans.values() if plan.problem()]
        alignable = options.get("align") and not any(plan.stuck for plan in plans.values())
        if problems and not alignable:
            raise SystemExit("publish: nothing was published.\n" + "\n".join(problems))
        merge({region: result for region, result in found.items() if result[0] != "done"})
        merge(in_parallel("stage", [region for region in regions if region in answered],
                          lambda region: stage_region(region, layers, plans, answered[region], options),
                          options, jobs, stream))
        if step == "stage" or failed():
            return outcome
    if step in ("promote", "all"):
        merge(in_parallel("promote", good(), lambda region: promote_region(region, layers, options), options, jobs,
                          stream))
        if failed():
            return outcome
    if step in ("check", "all"):
        merge(in_parallel("check", good(), lambda region: check_region(region, layers, options), options, jobs,
                          stream))
    return outcome


def update_layers_json(path, outcome):
    """Merge the ARNs of this run into layers.json (layer -> region -> ARN), keys sorted."""
    try:
        with open(path) as handle:
            table = json.load(handle)
    except FileNotFoundError:
        table = {}
    for region, (state, results) in outcome.items():
        if state == "done":
            for name, _, arn in results:
                table.setdefault(name, {})[region] = arn
    table = {name: dict(sorted(arns.items())) for name, arns in sorted(table.items())}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as out:
        json.dump(table, out, indent=2, sort_keys=True)
        out.write("\n")
    return table


def choose_regions(spec, partition, regions_file, stream=sys.stderr):
    """(the regions to publish to, whether they are ``all``): the list given, or the file's list minus
    those the account has not enabled (said on ``stream``)."""
    names = spec.replace(",", " ").split()
    if not names:
        raise SystemExit("publish: no region given (REGIONS=... or REGIONS=all)")
    if names != ["all"]:
        return names, False
    known = region_list.load(regions_file, partition)
    disabled = region_list.not_enabled(known, partition)
    for region in disabled:
        print("skipped %s: not enabled in this account (EC2 DescribeRegions: not-opted-in)" % region, file=stream)
    return [region for region in known if region not in disabled], True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layer", action="append", default=[], metavar="NAME=ZIP", help="a layer name and its zip")
    parser.add_argument("--zip", action="append", default=[], metavar="ZIP",
                        help="a zip published under --layer-name, or --layer-name-hook when it holds the hook only")
    parser.add_argument("--layer-name", default="", help="with --zip: the base layer name")
    parser.add_argument("--regions", required=True, help="space- or comma-separated region names, or all")
    parser.add_argument("--partition", default="aws", help="aws, aws-us-gov, aws-cn, ... (ARN format, region list)")
    parser.add_argument("--regions-file", default=region_list.REGIONS_FILE)
    parser.add_argument("--step", choices=("all", "stage", "promote", "check"), default="all",
                        help="stage: publish private; promote: grant and move latest; check: both are in place")
    parser.add_argument("--align", action="store_true",
                        help="bring regions behind to the release's version number with placeholder versions")
    parser.add_argument("--public", action="store_true", help="let every AWS account use the layers")
    parser.add_argument("--principal-org", default="", help="let the accounts of this organization (o-...) use them")
    parser.add_argument("--signing-profile", default="", help="AWS Signer profile: publish signed zips")
    parser.add_argument("--signing-bucket", default="",
                        help="versioned S3 bucket for signing, per region: {region} is replaced")
    parser.add_argument("--ssm-prefix", default=SSM_PREFIX)
    parser.add_argument("--layers-json", default=os.path.join("build", "release", "layers.json"))
    parser.add_argument("--jobs", type=int, default=16, help="regions published at once")
    args = parser.parse_args(argv)
    if not args.layer and not args.zip:
        parser.error("no --layer NAME=ZIP or --zip ZIP given")
    if args.public and args.principal_org:
        parser.error("PUBLIC=1 already lets every account (an organization included) use the layer: give one")
    if args.principal_org and not args.principal_org.startswith("o-"):
        parser.error("PRINCIPAL_ORG is an organization id (o-...), got %r" % args.principal_org)
    if args.ssm_prefix.strip("/").split("/")[0].lower().startswith(("aws", "ssm")):
        parser.error("SSM reserves parameter names starting with aws or ssm: choose another SSM prefix than %r"
                     % args.ssm_prefix)
    if bool(args.signing_profile) != bool(args.signing_bucket):
        parser.error("signing needs both SIGNING_PROFILE and SIGNING_BUCKET (a versioned bucket per region)")
    layers = parse_layers(args.layer, args.zip, args.layer_name)
    names = args.regions.replace(",", " ").split()
    if not names:
        parser.error("no region given (REGIONS=... or REGIONS=all)")
    if names != ["all"]:
        region_list.check_partition(names, args.partition)
    started = time.monotonic()
    account = prove_credentials(args.partition, names)
    regions, every = choose_regions(args.regions, args.partition, args.regions_file)
    region_list.check_partition(regions, args.partition)
    options = {"public": args.public, "organization": args.principal_org, "ssm_prefix": args.ssm_prefix.rstrip("/"),
               "partition": args.partition, "account": account, "all": every, "align": args.align,
               "signing": {"profile": args.signing_profile, "bucket": args.signing_bucket}
               if args.signing_profile else None}
    access = "public" if args.public else ("organization " + args.principal_org if args.principal_org else "private")
    print("%s %s in %d region(s) of account %s, %s%s" % (
        "publishing" if args.step == "all" else "step %s:" % args.step, ", ".join(layer.name for layer in layers),
        len(regions), account, access, ", signed with " + args.signing_profile if args.signing_profile else ""),
        file=sys.stderr)
    outcome = run(layers, regions, options, args.jobs, step=args.step)
    update_layers_json(args.layers_json, outcome)
    counts = {}
    for region in regions:
        state, detail = outcome[region]
        if state == "done":
            for _layer, status, arn in detail:
                counts[status] = counts.get(status, 0) + 1
                print("%-9s %s" % (status, arn))
        else:
            counts[state] = counts.get(state, 0) + 1
            print("%-9s %s: %s" % (state, region, detail))
    print("%s in %.1f s; ARNs in %s" % (", ".join("%d %s" % (n, state) for state, n in sorted(counts.items())),
                                       time.monotonic() - started, args.layers_json), file=sys.stderr)
    sys.exit(1 if counts.get("failed") else 0)


if __name__ == "__main__":
    main()
