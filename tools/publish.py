"""Publish a built layer zip to each region, and print the new layer version ARNs.

``make publish REGIONS="us-east-1 eu-west-1" [PUBLIC=1]`` runs this on ``build/layer.zip``.
Runtimes, architectures, license and description come from ``tools/layer_info.py``; the description
is read from the zip itself, so it names the versions actually published (and the kept services of
a trimmed build).  The zip goes up inline (``ZipFile``): fine up to Lambda's 50 MB direct-upload
limit, and it needs no S3 bucket per region.

Public access (``lambda:GetLayerVersion`` for principal ``*``, i.e. any AWS account may attach the
layer) is granted only with ``--public``: publishing to the world is a decision, never a default.

Credentials and endpoints come from the usual boto3 chain (AWS_PROFILE, AWS_ENDPOINT_URL, ...).
"""

import argparse
import sys

import boto3
import layer_info

# The statement id of the public permission (unique per layer version).
PUBLIC_STATEMENT_ID = "public-get-layer-version"
# Lambda refuses larger inline uploads.
MAX_INLINE_ZIP = 50 * 1024 * 1024


def publish(zip_bytes, region, layer_name, description, public):
    """Publish one layer version in ``region``; returns its LayerVersionArn."""
    client = boto3.client("lambda", region_name=region)
    response = client.publish_layer_version(
        LayerName=layer_name,
        Description=description,
        Content={"ZipFile": zip_bytes},
        CompatibleRuntimes=list(layer_info.RUNTIMES),
        CompatibleArchitectures=list(layer_info.ARCHITECTURES),
        LicenseInfo=layer_info.LICENSE,
    )
    if public:
        client.add_layer_version_permission(
            LayerName=layer_name,
            VersionNumber=response["Version"],
            StatementId=PUBLIC_STATEMENT_ID,
            Action="lambda:GetLayerVersion",
            Principal="*",
        )
    return response["LayerVersionArn"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zip", required=True, help="built layer zip (make layer)")
    parser.add_argument("--layer-name", required=True)
    parser.add_argument("--regions", required=True, help="space- or comma-separated region names")
    parser.add_argument("--public", action="store_true", help="let every AWS account use the layer")
    args = parser.parse_args(argv)
    regions = args.regions.replace(",", " ").split()
    if not regions:
        parser.error("no region given (REGIONS=...)")
    with open(args.zip, "rb") as handle:
        zip_bytes = handle.read()
    if len(zip_bytes) > MAX_INLINE_ZIP:
        parser.error("%s is %d bytes, above Lambda's 50 MB inline limit" % (args.zip, len(zip_bytes)))
    description = layer_info.description_from_zip(args.zip)
    print("publishing %s (%s)%s" % (args.layer_name, description, ", public" if args.public else ""),
          file=sys.stderr)
    for region in regions:
        print(publish(zip_bytes, region, args.layer_name, description, args.public))


if __name__ == "__main__":
    main()
