"""Which version of a layer a release zip already is in a region, and the one number a release gets
in every region.

Lambda numbers a layer's versions per region, 1, 2, 3..., and never reuses a number, not even a
deleted one's.  Users write ``arn:...:layer:NAME:N`` per region, so one release must be version N in
every region (Powertools and Datadog keep it so; users file issues when it drifts).  ``plan`` says
the number each layer gets, or why it cannot have one: a region already ahead (its next number is
higher) cannot come back, a region behind can be brought forward by publishing and deleting
placeholder versions (``align``), which ``make publish ALIGN=1`` does and nothing does unasked:
each placeholder spends a version number for good, in the maintainer's public account.

A zip is found among *every* version, not only the latest, by Lambda's CodeSha256 (base64 of its
sha256), or, for a signed zip whose bytes AWS Signer changed, by the release's SSM parameter
(tools/release/ssm_params.py) naming that version and recording this zip's sha256: a re-run of an
older release finds its version and publishes nothing.
"""

import io
import zipfile

from tools.release import ssm_params


def numbers(client, name):
    """Every version number of layer ``name`` in the client's region, newest first ([] when none)."""
    found = []
    kwargs = {"LayerName": name}
    while True:
        try:
            page = client.list_layer_versions(**kwargs)
        except client.exceptions.ResourceNotFoundException:
            return []
        found.extend(version["Version"] for version in page.get("LayerVersions", []))
        if not page.get("NextMarker"):
            return sorted(found, reverse=True)
        kwargs["Marker"] = page["NextMarker"]


def find(client, ssm, layer, prefix):
    """(this zip's version, or None; the highest version number, 0 when none) in one region."""
    existing = numbers(client, layer.name)
    if not existing:
        return None, 0
    release_value, release_description = ssm_params.get(ssm, ssm_params.names(prefix, layer)[1])
    for number in existing:
        version = client.get_layer_version(LayerName=layer.name, VersionNumber=number)
        if version["Content"].get("CodeSha256") == layer.code_sha256:
            return number, existing[0]
        if release_value == version["LayerVersionArn"] and release_description == ssm_params.description(layer):
            return number, existing[0]
    return None, existing[0]


class Plan:
    """The number one layer gets in every region, from each region's ``find`` answer."""

    def __init__(self, name, found):
        self.name = name
        self.found = found  # region -> (existing version or None, highest)
        existing = {version for version, _ in found.values() if version}
        nexts = {highest + 1 for version, highest in found.values() if not version}
        self.number = max(existing | nexts) if found else None
        # Regions where the zip is already a version other than the number: nothing can move it.
        self.stuck = {region: version for region, (version, _) in found.items() if version and version != self.number}
        # Regions whose next number is lower: placeholders can bring them forward.
        self.behind = {region: self.number - (highest + 1) for region, (version, highest) in found.items()
                       if not version and highest + 1 < self.number}

    def problem(self):
        """None when the release can have one number everywhere as things are; else what to do."""
        if self.stuck:
            where = ", ".join("version %d in %s" % (version, region) for region, version in sorted(self.stuck.items()))
            return ("%s: this zip is already %s, but version %d elsewhere: it cannot have one number in every "
                    "region. Publish it under a new layer name (LAYER_NAME=...)" % (self.name, where, self.number))
        if self.behind:
            where = ", ".join("%s (next would be %d)" % (region, self.number - count)
                              for region, count in sorted(self.behind.items()))
            return ("%s: one release is one version number in every region, here %d, but %s. Align with "
                    "ALIGN=1 (make publish publishes and deletes placeholder versions there until the next "
                    "number is %d; each spends a number for good), or publish under a new layer name"
                    % (self.name, self.number, where, self.number))
        return None


def placeholder_zip():
    """The zip of a placeholder version: one file saying what it is."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("PLACEHOLDER.txt", "A deleted placeholder that aligned this layer's version numbers "
                                            "across regions (tools/release/versions.py).\n")
    return buffer.getvalue()


def align(client, name, count):
    """Publish and delete ``count`` placeholder versions of ``name``; returns the numbers spent."""
    spent = []
    for _ in range(count):
        version = client.publish_layer_version(LayerName=name, Content={"ZipFile": placeholder_zip()},
                                               Description="placeholder (deleted): aligns version numbers")["Version"]
        client.delete_layer_version(LayerName=name, VersionNumber=version)
        spent.append(version)
    return spent
