"""What a layer is: its versions and the description that carries them (template, publish).

The description names the layer, boto3 and botocore versions, so that a user looking at a layer
version in the console or `aws lambda get-layer-version` sees what it brings; the hook-only flavor
(``make layer FLAVOR=hook``) has a name of its own and says that it brings no SDK.  Two sources:

- the source tree (``layer/requirements.txt`` + ``layer/aws_keepalive/__init__.py``): what
  ``template.yaml`` states, rewritten by ``make lock`` (``--write-template``) and checked by a test;
- a built zip: what ``tools/release/publish.py`` states, read from the zip itself so that the description
  always matches the bytes published, including a trimmed build (``make layer SERVICES=...``).
  A trimmed zip is recognised from botocore's ``RECORD`` (it lists every service model the wheel
  installed), compared with the models the zip still has.
"""

import argparse
import ast
import re
import sys
import zipfile

NAME = "aws-python-keepalive"
HOOK_NAME = NAME + "-hook"  # the hook-only flavor's layer name
# Lambda's limit for a layer version description.
MAX_DESCRIPTION = 256
RUNTIMES = ("python3.10", "python3.11", "python3.12", "python3.13", "python3.14")
ARCHITECTURES = ("x86_64", "arm64")
LICENSE = "Apache-2.0"
# The template line rewritten by --write-template (a quoted scalar starting with the layer's name).
TEMPLATE_LINE = re.compile(r'^([ \t]*Description:[ \t]*)"%s [^"\n]*"[ \t]*$' % re.escape(NAME), re.MULTILINE)
HOOK_TEMPLATE_LINE = re.compile(r'^([ \t]*Description:[ \t]*)"%s [^"\n]*"[ \t]*$' % re.escape(HOOK_NAME),
                                re.MULTILINE)


def hook_version_from_source(text):
    """The ``__version__`` string assigned in the hook package's ``__init__.py``."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__version__" for target in node.targets
        ):
            return ast.literal_eval(node.value)
    raise ValueError("no __version__ in aws_keepalive/__init__.py")


def pinned_versions(requirements_text):
    """{'boto3': ..., 'botocore': ...} from a hash-pinned requirements file."""
    versions = dict(re.findall(r"^(boto3|botocore)==([^\s;\\]+)", requirements_text, re.MULTILINE))
    missing = {"boto3", "botocore"} - set(versions)
    if missing:
        raise ValueError("requirements file does not pin %s" % ", ".join(sorted(missing)))
    return versions


def description(hook_version, boto3_version, botocore_version, services=None):
    """The layer version description (at most 256 characters, as Lambda requires)."""
    text = "%s %s: TCP keep-alive for boto3 clients (AWS_PYTHON_KEEPALIVE=1); boto3 %s, botocore %s" % (
        NAME, hook_version, boto3_version, botocore_version,
    )
    if services is not None:
        text += "; services: " + ",".join(services)
    if len(text) > MAX_DESCRIPTION:
        text = text[: MAX_DESCRIPTION - 3] + "..."
    return text


def hook_description(hook_version):
    """The hook-only flavor's description: no SDK inside, it patches the one the function imports."""
    return ("%s %s: TCP keep-alive for the function's own boto3/botocore, the runtime's or a bundled "
            "one (AWS_PYTHON_KEEPALIVE=1); brings no SDK" % (HOOK_NAME, hook_version))


def description_from_source(requirements_path, init_path):
    with open(requirements_path) as handle:
        versions = pinned_versions(handle.read())
    with open(init_path) as handle:
        hook = hook_version_from_source(handle.read())
    return description(hook, versions["boto3"], versions["botocore"])


def _metadata_version(archive, distribution):
    for name in archive.namelist():
        if re.fullmatch(r"python/%s-[^/]+\.dist-info/METADATA" % distribution, name):
            match = re.search(r"^Version: (\S+)", archive.read(name).decode(), re.MULTILINE)
            return match.group(1)
    raise ValueError("no %s METADATA in the zip" % distribution)


def zip_info(path):
    """Flavor, versions and kept services (None when not trimmed) of a built layer zip; the hook
    flavor (no botocore inside) has no SDK versions."""
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        hook = hook_version_from_source(archive.read("python/aws_keepalive/__init__.py").decode())
        if not any(re.fullmatch(r"python/botocore-[^/]+\.dist-info/RECORD", name) for name in names):
            return {"flavor": "hook", "hook": hook, "boto3": None, "botocore": None, "services": None}
        present = {name.split("/")[3] for name in names if name.startswith("python/botocore/data/") and
                   name.count("/") >= 4}
        record = next(name for name in names if re.fullmatch(r"python/botocore-[^/]+\.dist-info/RECORD", name))
        installed = set(re.findall(r"^botocore/data/([^/,\n]+)/", archive.read(record).decode(), re.MULTILINE))
        return {
            "flavor": "full",
            "hook": hook,
            "boto3": _metadata_version(archive, "boto3"),
            "botocore": _metadata_version(archive, "botocore"),
            "services": sorted(present) if present < installed else None,
        }


def description_from_zip(path):
    info = zip_info(path)
    if info["flavor"] == "hook":
        return hook_description(info["hook"])
    return description(info["hook"], info["boto3"], info["botocore"], info["services"])


def write_template(template_path, text, hook_text=None):
    """Replace the layers' Description lines in the SAM template (the full layer's, and with
    ``hook_text`` the hook flavor's); fails if one is not found exactly once."""
    with open(template_path) as handle:
        template = handle.read()
    lines = [(TEMPLATE_LINE, NAME, text)] + ([(HOOK_TEMPLATE_LINE, HOOK_NAME, hook_text)] if hook_text else [])
    for pattern, name, new in lines:
        template, count = pattern.subn(lambda match, new=new: '%s"%s"' % (match.group(1), new), template)
        if count != 1:
            raise SystemExit("layer_info: expected one 'Description: \"%s ...\"' line in %s" % (name, template_path))
    with open(template_path, "w") as handle:
        handle.write(template)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requirements", default="layer/requirements.txt")
    parser.add_argument("--init", default="layer/aws_keepalive/__init__.py")
    parser.add_argument("--zip", help="describe this built zip instead of the source tree")
    parser.add_argument("--write-template", metavar="TEMPLATE", help="rewrite the layer description there")
    args = parser.parse_args(argv)
    if args.zip:
        text = description_from_zip(args.zip)
    else:
        text = description_from_source(args.requirements, args.init)
    if args.write_template:
        with open(args.init) as handle:
            hook_text = hook_description(hook_version_from_source(handle.read()))
        write_template(args.write_template, text, hook_text)
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
