"""Build the hook as a wheel (build/aws_python_keepalive-<version>-py3-none-any.whl), reproducibly.

Who needs it: functions that cannot attach a layer (container images) or that bundle their
dependencies into the function zip, and any other Python process (ECS, Fargate, EC2 behind a NAT
gateway).  ``pip install`` puts the package and the top-level ``aws_keepalive.pth`` into a site
directory; the interpreter's ``site`` (or the Lambda runtime's ``site.addsitedir`` on the task folder,
which the AWS base images' bootstrap does too) executes the ``.pth`` line before the handler runs.

What is in it, and what is not:

- ``aws_keepalive/`` and ``aws_keepalive.pth``, byte for byte as in ``layer/``; beside the ``.pth``
  its PEP 829 twin ``aws_keepalive.start`` (Python 3.15+ calls the entry point it names and skips
  the ``.pth``'s import line) and the small module that entry point lives in,
  ``_aws_keepalive_site.py``;
- no boto3/botocore and no dependency on them: the hook patches whatever botocore the process
  imports (the function's own copy), and a dependency would make pip replace that copy;
- no ``sitecustomize.py`` / ``usercustomize.py``: a wheel installs them straight into
  site-packages, where they would replace (or be replaced by) the user's own module of that name,
  silently.  The ``.pth`` is the wheel's only entry point; the layer ships the others because
  there they sit in a folder of their own and chain to the user's;
- ``*.dist-info``: METADATA (Requires-Python >= 3.9), WHEEL, entry_points.txt (the OpenTelemetry
  ``opentelemetry_pre_instrument`` entry point, so that ``opentelemetry-instrument`` activates the
  hook in its own process), top_level.txt, the repository's LICENSE (Apache-2.0) and NOTICE (named
  by METADATA's License-File lines, as setuptools writes them) and RECORD (sha256 of every file).
  The layer's copy of the dist-info also carries the third-party texts of what the layer build adds
  (``third_party/``: tools/packaging/build_layer.py says which).

One version number: ``aws_keepalive.__version__`` is read from the source (never imported) by the
same function the layer description uses (tools/packaging/layer_info.py).  The layer carries the same
``*.dist-info`` (``write_dist_info``, called by tools/packaging/build_layer.py) so that importlib.metadata finds
the entry point from /opt/python too.

Reproducible: entries in a fixed order (sorted package files, then dist-info with RECORD last),
dated SOURCE_DATE_EPOCH or 1980-01-01, mode 0644, deflate level 9.  Standard library only.
"""

import argparse
import base64
import hashlib
import os
import sys
import zipfile

# Run as a script: the repository root on sys.path, so that tools.<room> and bench resolve.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
from bench.rows import write_rows  # noqa: E402  (the size docs/ and README quote)
from tools.packaging import layer_info, repro_zip  # noqa: E402

DISTRIBUTION = "aws-python-keepalive"
# The file-name form of the distribution name (PEP 427 / binary distribution format).
WHEEL_NAME = DISTRIBUTION.replace("-", "_")
PACKAGE = "aws_keepalive"
PTH = "aws_keepalive.pth"
# The .pth's PEP 829 twin and the module its entry point (_aws_keepalive_site:start) is in.
START_FILES = ("aws_keepalive.start", "_aws_keepalive_site.py")
REQUIRES_PYTHON = ">=3.9"
# The repository's license and notice, in every artifact's dist-info (wheel and both layer zips).
LICENSE_FILES = ("LICENSE", "NOTICE")
ENTRY_POINTS = "[opentelemetry_pre_instrument]\naws_keepalive = aws_keepalive:opentelemetry_pre_instrument\n"
SUMMARY = "Live TCP keep-alive for every boto3/botocore client, switched on by AWS_PYTHON_KEEPALIVE=1"
DESCRIPTION = """\
# aws-python-keepalive

Makes every boto3/botocore client in the process keep its pooled connections alive: TCP keep-alive
timers (60 s idle, 10 s interval, 3 probes), replacement of connections idle for more than 300 s,
and optional pool size and diagnostics.  Nothing happens unless `AWS_PYTHON_KEEPALIVE=1` is set.

Installed with `pip install aws-python-keepalive` (or `--target` into a Lambda function's folder),
it starts through its `.pth` file: no import and no code change.  It brings no boto3/botocore: it
patches the copy your code imports.  The same hook is published as a Lambda layer.
"""


def source_version(hook_dir):
    """``__version__`` of the hook package in ``hook_dir`` (the one number for wheel and layer)."""
    with open(os.path.join(hook_dir, PACKAGE, "__init__.py")) as handle:
        return layer_info.hook_version_from_source(handle.read())


def wheel_filename(version):
    return "%s-%s-py3-none-any.whl" % (WHEEL_NAME, version)


def dist_info_dir(version):
    return "%s-%s.dist-info" % (WHEEL_NAME, version)


def package_files(hook_dir):
    """[(archive path, bytes)] of the package, the .pth and its .start twin, sorted, without bytecode
    caches."""
    files = []
    package_root = os.path.join(hook_dir, PACKAGE)
    for folder, dirs, names in os.walk(package_root):
        dirs[:] = [name for name in dirs if name != "__pycache__"]
        for name in names:
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, hook_dir).replace(os.sep, "/")
            with open(path, "rb") as handle:
                files.append((relative, handle.read()))
    for name in (PTH,) + START_FILES:
        with open(os.path.join(hook_dir, name), "rb") as handle:
            files.append((name, handle.read()))
    return sorted(files)


def metadata(version, license_files=LICENSE_FILES):
    """Core metadata 2.1: name, version, license (and, as setuptools writes them, one License-File
    line per license text in the dist-info), Requires-Python, and no Requires-Dist at all."""
    headers = [
        ("Metadata-Version", "2.1"),
        ("Name", DISTRIBUTION),
        ("Version", version),
        ("Summary", SUMMARY),
        ("License", layer_info.LICENSE),
    ]
    headers += [("License-File", name) for name in license_files]
    headers += [
        ("Requires-Python", REQUIRES_PYTHON),
        ("Description-Content-Type", "text/markdown"),
    ]
    return ("".join("%s: %s\n" % pair for pair in headers) + "\n" + DESCRIPTION).encode()


def license_texts(repo=REPO):
    """[(name, bytes)] of the repository's LICENSE and NOTICE."""
    texts = []
    for name in LICENSE_FILES:
        with open(os.path.join(repo, name), "rb") as handle:
            texts.append((name, handle.read()))
    return texts


def dist_info_files(version, generator="tools/packaging/build_wheel.py", third_party=()):
    """[(name inside the dist-info folder, bytes)] except RECORD: ``third_party`` [(name, bytes)]
    adds license texts (the layer's), listed in METADATA like the repository's own."""
    wheel = "Wheel-Version: 1.0\nGenerator: %s\nRoot-Is-Purelib: true\nTag: py3-none-any\n" % generator
    licenses = license_texts() + sorted(third_party)
    return [
        ("METADATA", metadata(version, [name for name, _ in licenses])),
        ("WHEEL", wheel.encode()),
        ("entry_points.txt", ENTRY_POINTS.encode()),
        ("top_level.txt", (PACKAGE + "\n" + START_FILES[1][:-len(".py")] + "\n").encode()),
    ] + licenses


def record_line(path, data):
    """One RECORD row: path, urlsafe-base64 sha256 without padding, size (PEP 376 / 427)."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (path, digest, len(data))


def record(files, record_path):
    """RECORD's bytes for ``files`` [(path, bytes)]; RECORD lists itself with no hash."""
    return ("".join(record_line(path, data) for path, data in files) + "%s,,\n" % record_path).encode()


def wheel_entries(hook_dir, version):
    """Every file of the wheel, in archive order: package files, then dist-info, RECORD last."""
    info = dist_info_dir(version)
    files = package_files(hook_dir) + [("%s/%s" % (info, name), data) for name, data in dist_info_files(version)]
    record_path = "%s/RECORD" % info
    return files + [(record_path, record(files, record_path))]


def write_wheel(entries, out):
    """Write ``entries`` to ``out`` with fixed metadata (no folder entries, as wheels have none)."""
    date_time = repro_zip.zip_date_time()
    temporary = out + ".tmp"
    with zipfile.ZipFile(temporary, "w") as archive:
        for path, data in entries:
            repro_zip.write_file(archive, path, data, date_time)
    os.replace(temporary, out)


def write_dist_info(hook_dir, target, third_party=(), generated=()):
    """Write the package's dist-info into an installed tree (the layer's python/ folder).

    Same METADATA and entry points as the wheel, so ``importlib.metadata`` (and with it
    OpenTelemetry's ``opentelemetry_pre_instrument`` lookup) finds the package on /opt/python.
    ``third_party``: [(name inside the dist-info, bytes)], license texts of what the build added.
    RECORD lists the package's sources, the .pth and the .start as shipped, the dist-info, and
    ``generated`` [(path relative to ``target``, bytes)]: the files the build made inside the package
    (CA directories, prepared data), so that every file of the layer but the compiled bytecode is in
    some RECORD.  Returns the dist-info folder's name.
    """
    version = source_version(hook_dir)
    info = dist_info_dir(version)
    meta = [("%s/%s" % (info, name), data)
            for name, data in dist_info_files(version, "tools/packaging/build_layer.py", third_party)]
    record_path = "%s/RECORD" % info
    os.makedirs(os.path.join(target, info))
    listed = sorted(package_files(hook_dir) + list(generated)) + meta
    for path, data in meta + [(record_path, record(listed, record_path))]:
        os.makedirs(os.path.dirname(os.path.join(target, path)), exist_ok=True)
        with open(os.path.join(target, path), "wb") as handle:
            handle.write(data)
    return info


def build(hook_dir, out_dir):
    """Write the wheel into ``out_dir``; returns its path."""
    version = source_version(hook_dir)
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, wheel_filename(version))
    write_wheel(wheel_entries(hook_dir, version), out)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hook", default="layer", help="folder holding aws_keepalive/ and the .pth (layer/)")
    parser.add_argument("--out-dir", default="build", help="folder to write the wheel into")
    parser.add_argument("--print-path", action="store_true", help="only print the wheel's path, build nothing")
    args = parser.parse_args(argv)
    if args.print_path:
        print(os.path.join(args.out_dir, wheel_filename(source_version(args.hook))))
        return
    out = build(args.hook, args.out_dir)
    sha256, size = repro_zip.sha256_of(out), os.path.getsize(out)
    print("wheel:    %s" % out)
    print("sha256:   %s" % sha256)
    print("size:     %d bytes" % size)
    write_rows(os.path.join(args.out_dir, "wheel.json"),
               [{"wheel": os.path.basename(out), "sha256": sha256, "size": size}])


if __name__ == "__main__":
    main()
