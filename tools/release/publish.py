"""`make publish`: each release zip into each region, public or not, idempotent, recorded.

    make publish REGIONS="us-east-1 eu-west-1" FLAVOR=all PUBLIC=1
    make publish REGIONS=all                       # every region of tools/release/regions.json enabled here

For each region (in parallel, one progress line) and each layer (``--layer NAME=ZIP``; the Makefile
passes the release zips of FLAVOR=full|hook|all):

1. the latest version of the layer is looked up; when its ``CodeSha256`` is the zip's (base64 of
   the sha256, as Lambda reports it), or, for a signed zip whose bytes Signer changed, when the
   release's SSM parameter records this zip's sha256 and names that version, nothing is published:
   a rerun after a partial failure only finishes the regions that are missing;
2. otherwise a new version is published: runtimes, architectures, license and the description
   from tools/build/layer_info.py (the description is read from the zip, so it names what is inside).
   The zip goes up inline (Lambda's 50 MB direct-upload limit; no bucket needed), or, with
   ``--signing-profile``, through S3 and an AWS Signer job (tools/release/signing.py), and the signed
   object is what gets published;
3. permission: ``--public`` grants ``lambda:GetLayerVersion`` to principal ``*`` (any account);
   ``--principal-org o-...`` to the accounts of one organization; neither: private.  Ensured on
   every run, also on an unchanged version (a region where the grant was missed gets it);
4. SSM parameters (String, in the publishing account and region): ``<prefix>/<layer>/latest`` and
   ``<prefix>/<layer>/<release version>`` hold the version's ARN, so a template in this account
   can say ``{{resolve:ssm:/python-keepalive/aws-python-keepalive/latest}}``.  Parameters are
   private to their account: other accounts take the ARN from layers.json (docs/attach.md).

``build/release/layers.json`` maps layer -> region -> ARN (merged with what earlier runs wrote).
Regions: a list, or ``all`` = tools/release/regions.json's list for ``--partition`` (aws, aws-us-gov,
aws-cn, ...; refreshed by ``--refresh-regions``, tools/release/regions.py).  For ``all``, regions the
account has not enabled (EC2 DescribeRegions: ``not-opted-in``) are skipped and said; any region
whose endpoint refuses the credentials as unknown (what an opt-in region not enabled answers) is
skipped and said too.  Credentials and endpoints come from the usual boto3 chain (AWS_PROFILE,
AWS_ENDPOINT_URL, ...).  Exit status 1 when any region failed (the others are still recorded).
"""

import argparse
import base64
import concurrent.futures
import hashlib
import json
import os
import sys
import threading
import time

import boto3
import botocore.config
import botocore.exceptions

# Run as a script: the repository root on sys.path, so that tools.<room> and bench resolve.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
from tools.build import layer_info  # noqa: E402
from tools.release import regions as region_list  # noqa: E402
from tools.release import signing  # noqa: E402

# Statement ids of the two grants (unique per layer version).
PUBLIC_STATEMENT_ID = "public-get-layer-version"
ORG_STATEMENT_ID = "organization-get-layer-version"
# Lambda refuses larger inline uploads.
MAX_INLINE_ZIP = 50 * 1024 * 1024
# SSM reserves names whose first level starts with "aws" or "ssm": the layer's name cannot lead.
SSM_PREFIX = "/python-keepalive"
# What an endpoint answers for credentials it does not know: an opt-in region that is not enabled.
NOT_ENABLED_CODES = {"UnrecognizedClientException", "InvalidClientTokenId", "AuthFailure"}
CLIENT_CONFIG = botocore.config.Config(retries={"mode": "standard", "max_attempts": 8},
                                       connect_timeout=10, read_timeout=300)


class Layer:
    """One zip to publish under one name: its bytes, digests and description, read once."""

    def __init__(self, name, path):
        self.name = name
        self.path = path
        with open(path, "rb") as handle:
            self.data = handle.read()
        if len(self.data) > MAX_INLINE_ZIP:
            raise SystemExit("publish: %s is %d bytes, above Lambda's 50 MB inline limit" % (path, len(self.data)))
        digest = hashlib.sha256(self.data)
        self.sha256 = digest.hexdigest()
        self.code_sha256 = base64.b64encode(digest.digest()).decode()  # Lambda's CodeSha256
        info = layer_info.zip_info(path)
        self.version = info["hook"]
        self.description = layer_info.description_from_zip(path)


def parse_layers(values):
    layers = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise SystemExit("publish: --layer takes NAME=ZIP, got %r" % value)
        if not os.path.isfile(path):
            raise SystemExit("publish: no zip at %s (run `make release`)" % path)
        layers.append(Layer(name, path))
    return layers


def ssm_names(prefix, layer):
    """The latest and the per-release parameter names of one layer."""
    return "%s/%s/latest" % (prefix, layer.name), "%s/%s/%s" % (prefix, layer.name, layer.version)


def latest_version(client, name):
    """The newest version of layer ``name`` (get_layer_version's answer), or None."""
    try:
        versions = client.list_layer_versions(LayerName=name)["LayerVersions"]
    except client.exceptions.ResourceNotFoundException:
        return None
    if not versions:
        return None
    newest = max(versions, key=lambda version: version["Version"])
    return client.get_layer_version(LayerName=name, VersionNumber=newest["Version"])


def _parameter(ssm, name):
    """(value, description) of an SSM parameter, or (None, None)."""
    try:
        value = ssm.get_parameter(Name=name)["Parameter"]["Value"]
    except ssm.exceptions.ParameterNotFound:
        return None, None
    described = ssm.describe_parameters(ParameterFilters=[{"Key": "Name", "Values": [name]}])["Parameters"]
    return value, (described[0].get("Description", "") if described else "")


def parameter_description(layer):
    return "sha256=%s %s" % (layer.sha256, os.path.basename(layer.path))


def already_published(latest, layer, ssm, prefix):
    """Whether ``latest`` (a get_layer_version answer) is this zip: same CodeSha256, or (signed) the
    release parameter records this zip's sha256 and names that very version."""
    if latest is None:
        return False
    if latest["Content"].get("CodeSha256") == layer.code_sha256:
        return True
    value, description = _parameter(ssm, ssm_names(prefix, layer)[1])
    return value == latest["LayerVersionArn"] and description == parameter_description(layer)


def ensure_permission(client, name, version, public, organization):
    """Grant the public or organization read once per version; returns what the version has."""
    if not public and not organization:
        return "private"
    statement_id = PUBLIC_STATEMENT_ID if public else ORG_STATEMENT_ID
    try:
        policy = json.loads(client.get_layer_version_policy(LayerName=name, VersionNumber=version)["Policy"])
        present = {statement.get("Sid") for statement in policy.get("Statement", [])}
    except client.exceptions.ResourceNotFoundException:
        present = set()
    if statement_id not in present:
        grant = dict(LayerName=name, VersionNumber=version, StatementId=statement_id,
                     Action="lambda:GetLayerVersion", Principal="*")
        if not public:
            grant["OrganizationId"] = organization
        client.add_layer_version_permission(**grant)
    return "public" if public else "organization %s" % organization


def ensure_parameters(ssm, layer, arn, prefix):
    """Both parameters hold ``arn`` (written only when they do not already)."""
    description = parameter_description(layer)
    for name in ssm_names(prefix, layer):
        if _parameter(ssm, name) != (arn, description):
            ssm.put_parameter(Name=name, Value=arn, Type="String", Overwrite=True, Description=description)


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


def publish_region(region, layers, options):
    """Publish (or find) every layer in ``region``; returns [(layer name, status, ARN or message)]."""
    session = boto3.session.Session()
    client = session.client("lambda", region_name=region, config=CLIENT_CONFIG)
    ssm = session.client("ssm", region_name=region, config=CLIENT_CONFIG)
    results = []
    for layer in layers:
        latest = latest_version(client, layer.name)
        if already_published(latest, layer, ssm, options["ssm_prefix"]):
            arn, version, status = latest["LayerVersionArn"], latest["Version"], "unchanged"
        else:
            response = client.publish_layer_version(
                LayerName=layer.name,
                Description=layer.description,
                Content=content_for(layer, region, session, options.get("signing")),
                CompatibleRuntimes=list(layer_info.RUNTIMES),
                CompatibleArchitectures=list(layer_info.ARCHITECTURES),
                LicenseInfo=layer_info.LICENSE,
            )
            arn, version, status = response["LayerVersionArn"], response["Version"], "published"
        expected = region_list.layer_arn_prefix(options["partition"], region)
        if not arn.startswith(expected):
            raise RuntimeError("%s: %s is not a %s ARN (%s...)" % (region, arn, options["partition"], expected))
        ensure_permission(client, layer.name, version, options["public"], options["organization"])
        ensure_parameters(ssm, layer, arn, options["ssm_prefix"])
        results.append((layer.name, status, arn))
    return results


def not_enabled(error):
    return isinstance(error, botocore.exceptions.ClientError) and \
        error.response.get("Error", {}).get("Code") in NOT_ENABLED_CODES


class Progress:
    """One line on a terminal, rewritten as regions finish; one line per region otherwise."""

    def __init__(self, total, stream=sys.stderr):
        self.total = total
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
            line = "[%d/%d regions, %.0f s] %s: %s (%s)" % (self.done, self.total, time.monotonic() - self.started,
                                                            region, state, summary)
            if self.tty:
                self.stream.write("\r\033[K" + line + ("\n" if self.done == self.total else ""))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()


def run(layers, regions, options, jobs=16, stream=sys.stderr):
    """Publish into every region in parallel; returns {region: ('done', results) | ('skipped'|'failed', msg)}."""
    outcome = {}
    progress = Progress(len(regions), stream)

    def one(region):
        try:
            results = publish_region(region, layers, options)
            state = "published" if any(status == "published" for _, status, _ in results) else "unchanged"
            outcome[region] = ("done", results)
        except Exception as error:  # one region's failure must not stop the others
            if not_enabled(error):
                outcome[region] = ("skipped", "not enabled in this account (%s)" % error.response["Error"]["Code"])
                state = "skipped"
            else:
                outcome[region] = ("failed", "%s: %s" % (type(error).__name__, error))
                state = "failed"
        progress.region_done(region, state)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(jobs, len(regions)))) as pool:
        list(pool.map(one, regions))
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
    """The regions to publish to: the list given, or (``all``) the file's list minus those the
    account has not enabled (said on ``stream``)."""
    names = spec.replace(",", " ").split()
    if not names:
        raise SystemExit("publish: no region given (REGIONS=... or REGIONS=all)")
    if names != ["all"]:
        return names
    known = region_list.load(regions_file, partition)
    disabled = region_list.not_enabled(known, partition)
    for region in disabled:
        print("skipped %s: not enabled in this account (EC2 DescribeRegions: not-opted-in)" % region, file=stream)
    return [region for region in known if region not in disabled]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layer", action="append", default=[], metavar="NAME=ZIP", help="a layer name and its zip")
    parser.add_argument("--regions", required=True, help="space- or comma-separated region names, or all")
    parser.add_argument("--partition", default="aws", help="aws, aws-us-gov, aws-cn, ... (ARN format, region list)")
    parser.add_argument("--regions-file", default=region_list.REGIONS_FILE)
    parser.add_argument("--public", action="store_true", help="let every AWS account use the layers")
    parser.add_argument("--principal-org", default="", help="let the accounts of this organization (o-...) use them")
    parser.add_argument("--signing-profile", default="", help="AWS Signer profile: publish signed zips")
    parser.add_argument("--signing-bucket", default="",
                        help="versioned S3 bucket for signing, per region: {region} is replaced")
    parser.add_argument("--ssm-prefix", default=SSM_PREFIX)
    parser.add_argument("--layers-json", default=os.path.join("build", "release", "layers.json"))
    parser.add_argument("--jobs", type=int, default=16, help="regions published at once")
    args = parser.parse_args(argv)
    if not args.layer:
        parser.error("no --layer NAME=ZIP given")
    if args.public and args.principal_org:
        parser.error("PUBLIC=1 already lets every account (an organization included) use the layer: give one")
    if args.principal_org and not args.principal_org.startswith("o-"):
        parser.error("PRINCIPAL_ORG is an organization id (o-...), got %r" % args.principal_org)
    if args.ssm_prefix.strip("/").split("/")[0].lower().startswith(("aws", "ssm")):
        parser.error("SSM reserves parameter names starting with aws or ssm: choose another SSM prefix than %r"
                     % args.ssm_prefix)
    if bool(args.signing_profile) != bool(args.signing_bucket):
        parser.error("signing needs both SIGNING_PROFILE and SIGNING_BUCKET (a versioned bucket per region)")
    layers = parse_layers(args.layer)
    regions = choose_regions(args.regions, args.partition, args.regions_file)
    region_list.check_partition(regions, args.partition)
    options = {"public": args.public, "organization": args.principal_org, "ssm_prefix": args.ssm_prefix.rstrip("/"),
               "partition": args.partition,
               "signing": {"profile": args.signing_profile, "bucket": args.signing_bucket}
               if args.signing_profile else None}
    access = "public" if args.public else ("organization " + args.principal_org if args.principal_org else "private")
    print("publishing %s to %d region(s), %s%s" % (", ".join(layer.name for layer in layers), len(regions), access,
                                                  ", signed with " + args.signing_profile if args.signing_profile
                                                  else ""), file=sys.stderr)
    started = time.monotonic()
    outcome = run(layers, regions, options, args.jobs)
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
