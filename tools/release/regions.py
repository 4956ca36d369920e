"""The regions `make publish REGIONS=all` means, per partition, kept in tools/release/regions.json.

    make regions                    refresh tools/release/regions.json from AWS's public SSM parameters
    make regions REGIONS_SOURCE=botocore   ... from the pinned botocore's endpoint data (offline)

``ssm``: ``/aws/service/global-infrastructure/services/lambda/regions`` (AWS's own list of the
regions where Lambda runs, readable by any account), asked in one region of the partition; each
region is filed under its partition by botocore's partition data.  ``botocore``: the regions
botocore's endpoints.json lists for Lambda, per partition (no credentials, no network; it lags a
new region until botocore ships it).  The ISO partitions (aws-iso*, air-gapped) are left out.

At publish time a region of the list may still not be usable: an opt-in region the account has
not enabled.  ``not_enabled`` asks EC2 DescribeRegions (AllRegions) once; publish.py skips and
says those.
"""

import argparse
import json
import os
import sys

import boto3
import botocore.exceptions

REGIONS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regions.json")
LAMBDA_REGIONS_PATH = "/aws/service/global-infrastructure/services/lambda/regions"
# Where each partition's SSM tree is asked (any region of the partition serves it).
HOME_REGIONS = {"aws": "us-east-1", "aws-us-gov": "us-gov-west-1", "aws-cn": "cn-north-1",
                "aws-eusc": "eusc-de-east-1"}


def partition_of(region):
    return boto3.session.Session().get_partition_for_region(region)


def layer_arn_prefix(partition, region):
    """What every layer ARN of that region starts with: arn:<partition>:lambda:<region>:."""
    return "arn:%s:lambda:%s:" % (partition, region)


def check_partition(regions, partition):
    """SystemExit when a region belongs to another partition (its ARNs and credentials differ)."""
    wrong = ["%s (%s)" % (region, partition_of(region)) for region in regions if partition_of(region) != partition]
    if wrong:
        raise SystemExit("publish: not in partition %s: %s; publish to another partition with PARTITION=<name> "
                         "and that partition's credentials" % (partition, ", ".join(wrong)))


def load(path, partition):
    with open(path) as handle:
        partitions = json.load(handle)["partitions"]
    if partition not in partitions:
        raise SystemExit("publish: %s lists no partition %s (it has %s)" % (path, partition, ", ".join(partitions)))
    return list(partitions[partition])


def not_enabled(regions, partition):
    """The regions of ``regions`` this account has not opted in to (EC2 DescribeRegions, AllRegions);
    [] with a warning when the account may not ask."""
    ec2 = boto3.client("ec2", region_name=HOME_REGIONS.get(partition, regions[0]))
    try:
        answer = ec2.describe_regions(AllRegions=True)["Regions"]
    except botocore.exceptions.ClientError as error:
        print("publish: cannot list the account's regions (%s): trying every region"
              % error.response["Error"]["Code"], file=sys.stderr)
        return []
    status = {region["RegionName"]: region.get("OptInStatus") for region in answer}
    return [region for region in regions if status.get(region) == "not-opted-in"]


def from_ssm():
    """{partition: [region, ...]} from AWS's global-infrastructure parameters (commercial partition's tree)."""
    ssm = boto3.client("ssm", region_name=HOME_REGIONS["aws"])
    names = []
    for page in ssm.get_paginator("get_parameters_by_path").paginate(Path=LAMBDA_REGIONS_PATH):
        names += [parameter["Value"] for parameter in page["Parameters"]]
    partitions = {}
    for region in names:
        partitions.setdefault(partition_of(region), []).append(region)
    return partitions


def from_botocore():
    session = boto3.session.Session()
    return {partition: session.get_available_regions("lambda", partition_name=partition)
            for partition in session.get_available_partitions()}


def write(path, partitions, source):
    kept = {partition: sorted(set(regions)) for partition, regions in sorted(partitions.items())
            if regions and not partition.startswith("aws-iso")}
    with open(path, "w") as out:
        json.dump({"source": source, "partitions": kept}, out, indent=2, sort_keys=True)
        out.write("\n")
    return kept


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", choices=("ssm", "botocore"), default="ssm")
    parser.add_argument("--out", default=REGIONS_FILE)
    args = parser.parse_args(argv)
    if args.source == "ssm":
        partitions, source = from_ssm(), "ssm:" + LAMBDA_REGIONS_PATH
    else:
        partitions, source = from_botocore(), "botocore %s endpoints.json" % botocore.__version__
    kept = write(args.out, partitions, source)
    for partition, regions in kept.items():
        print("%-10s %2d: %s" % (partition, len(regions), " ".join(regions)))


if __name__ == "__main__":
    main()
