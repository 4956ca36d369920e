"""The release notes: the published ARNs as a Markdown table, CodeSha256 per zip, the changelog.

    python tools/release/layers_table.py build/release/layers.json                 # the ARN table alone
    python tools/release/layers_table.py build/release/layers.json --notes build/release --changelog CHANGELOG.md
    python tools/release/layers_table.py --check-changelog 0.1.1    # the section exists (before a release builds)

The table: one row per region, one column per layer (the full layer and the hook-only one), each cell
the layer version's ARN; regions sorted.  An empty or missing file says that nothing has been
published, rather than printing an empty table.

``--notes RELEASE_DIR``: the whole release notes the workflow attaches to the GitHub release: the
version's section of the changelog (a release without one is refused: the notes would say nothing
about what changed), the table, and for each zip its sha256 and the CodeSha256 Lambda reports for it
(base64 of the same digest), so a user can compare ``aws lambda get-layer-version`` with the file.

``--check-changelog VERSION``: only that the changelog has the version's section. The release workflow
asks first, before it builds or stages anything: the notes come from the tagged commit, so a missing
section found once the layers are public could not be fixed by a re-run.
"""

import argparse
import base64
import hashlib
import json
import os
import re


def render(table):
    """Markdown for ``table`` (layer -> region -> ARN)."""
    layers = sorted(table)
    regions = sorted({region for arns in table.values() for region in arns})
    if not regions:
        return "No layer has been published yet: layers.json is empty.\n"
    lines = ["| region | %s |" % " | ".join("`%s`" % name for name in layers),
             "|---|" + "---|" * len(layers)]
    for region in regions:
        cells = ["`%s`" % table[name][region] if region in table[name] else "not published" for name in layers]
        lines.append("| %s | %s |" % (region, " | ".join(cells)))
    return "\n".join(lines) + "\n"


def changelog_section(text, version):
    """The body of ``## <version>`` (up to the next ``## ``) in a changelog, or None."""
    match = re.search(r"^## \[?v?%s\]?[^\n]*\n(.*?)(?=^## |\Z)" % re.escape(version), text, re.MULTILINE | re.DOTALL)
    return match.group(1).strip() + "\n" if match and match.group(1).strip() else None


def digests(release_dir):
    """Markdown rows: each zip of the release, its sha256 and Lambda's CodeSha256."""
    lines = ["| zip | sha256 | CodeSha256 (Lambda) |", "|---|---|---|"]
    for name in sorted(os.listdir(release_dir)):
        if name.endswith(".zip"):
            with open(os.path.join(release_dir, name), "rb") as handle:
                digest = hashlib.sha256(handle.read())
            code_sha256 = base64.b64encode(digest.digest()).decode()
            lines.append("| `%s` | `%s` | `%s` |" % (name, digest.hexdigest(), code_sha256))
    return "\n".join(lines) + "\n"


def notes(table, release_dir, changelog, version):
    section = changelog_section(changelog, version)
    if section is None:
        raise SystemExit("layers_table: the changelog has no section `## %s`: write what changed before releasing"
                         % version)
    return "## What changed\n\n%s\n## Layer ARNs\n\n%s\n## Layer zips\n\n%s" % (section, render(table),
                                                                             digests(release_dir))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("layers_json", nargs="*", help="layers.json files (one per partition), merged")
    parser.add_argument("--notes", metavar="RELEASE_DIR", help="the whole release notes for the zips of this folder")
    parser.add_argument("--changelog", default="CHANGELOG.md")
    parser.add_argument("--version", help="the release's version (default: the one in the zips' folder names)")
    parser.add_argument("--check-changelog", metavar="VERSION", help="only check the changelog's section")
    args = parser.parse_args(argv)
    if args.check_changelog:
        with open(args.changelog) as handle:
            if changelog_section(handle.read(), args.check_changelog) is None:
                raise SystemExit("layers_table: the changelog has no section `## %s`: write what changed before "
                                 "releasing" % args.check_changelog)
        print("layers_table: %s has a section for %s" % (args.changelog, args.check_changelog))
        return
    if not args.layers_json:
        parser.error("no layers.json given")
    table = {}
    for path in args.layers_json:
        try:
            with open(path) as handle:
                for name, arns in json.load(handle).items():
                    table.setdefault(name, {}).update(arns)
        except FileNotFoundError:
            pass
    if not args.notes:
        print(render(table), end="")
        return
    version = args.version or _version_of(args.notes)
    with open(args.changelog) as handle:
        print(notes(table, args.notes, handle.read(), version), end="")


def _version_of(release_dir):
    """The version in the full zip's name (aws-python-keepalive-<version>.zip)."""
    for name in os.listdir(release_dir):
        match = re.fullmatch(r"aws-python-keepalive-(\d[^-]*)\.zip", name)
        if match:
            return match.group(1)
    raise SystemExit("layers_table: no aws-python-keepalive-<version>.zip in %s" % release_dir)


if __name__ == "__main__":
    main()
