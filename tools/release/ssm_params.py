"""The SSM parameters a release writes in each region: ``<prefix>/<layer>/latest`` and
``<prefix>/<layer>/<release version>``, each holding the layer version's ARN, with a description that
records the zip's sha256 (how a signed zip, whose bytes Signer changed, is recognised again).

SSM reserves names whose first level starts with "aws" or "ssm": the layer's name cannot lead, hence
the prefix.  Parameters belong to the account that wrote them (docs/release.md).
"""

import os

PREFIX = "/python-keepalive"


def names(prefix, layer):
    """The latest and the per-release parameter names of one layer."""
    return "%s/%s/latest" % (prefix, layer.name), "%s/%s/%s" % (prefix, layer.name, layer.version)


def description(layer):
    return "sha256=%s %s" % (layer.sha256, os.path.basename(layer.path))


def get(ssm, name):
    """(value, description) of an SSM parameter, or (None, None)."""
    try:
        value = ssm.get_parameter(Name=name)["Parameter"]["Value"]
    except ssm.exceptions.ParameterNotFound:
        return None, None
    described = ssm.describe_parameters(ParameterFilters=[{"Key": "Name", "Values": [name]}])["Parameters"]
    return value, (described[0].get("Description", "") if described else "")


def ensure(ssm, layer, name, arn):
    """Parameter ``name`` holds ``arn`` with this zip's description (written only when it does not)."""
    if get(ssm, name) != (arn, description(layer)):
        ssm.put_parameter(Name=name, Value=arn, Type="String", Overwrite=True, Description=description(layer))
