"""The full layer's SDK patches (layer/patches/, tools/packaging/patches.py): applied strictly, and
the patched SDK in build/layer.zip behaves as the stock wheels do (tests/build/sdk_probe.py), while
`import boto3` + the first client no longer import what the patches made lazy."""

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import REPO, env

from tools.packaging import patches

PROBE = os.path.join(REPO, "tests", "build", "sdk_probe.py")
# The modules each patch keeps out of `import boto3` + boto3.client("dynamodb") (stock imports all).
KEPT_OUT = ["boto3.docs.action", "botocore.docs.method", "concurrent.futures.thread", "configparser",
            "dateutil.parser", "importlib.metadata", "multiprocessing", "pathlib", "s3transfer"]
# The IPv6 patterns the patches compile at their first use (stock compiles them at import).
DEFERRED = ["_IPV6_RE", "_IPV6_ADDRZ_RE", "_BRACELESS_IPV6_ADDRZ_RE", "_HOST_PORT_RE", "IPV6_ADDRZ_RE"]


def probe(python_path, endpoint="", stock_names=""):
    """tests/build/sdk_probe.py's JSON in a fresh interpreter (the test venv: stock boto3/botocore of
    the pinned versions), with ``python_path`` (a patched tree) first when given; ``stock_names``: a
    JSON file of the names the stock modules have, for the probe to read too."""
    extra = {"PYTHONNOUSERSITE": "1", "SDK_PROBE_STOCK_NAMES": stock_names}
    if python_path:
        extra["PYTHONPATH"] = python_path
    completed = subprocess.run([sys.executable, PROBE, endpoint], capture_output=True, text=True,
                               env=env(**extra), timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout)


@pytest.fixture(scope="module")
def stock_and_patched(opt, moto_endpoint, tmp_path_factory):
    """The probe's output with the stock wheels and with the layer's patched tree (which also reads
    every name the stock modules have)."""
    stock = probe("")
    names = tmp_path_factory.mktemp("probe") / "stock-names.json"
    names.write_text(json.dumps({module: sorted(attributes) for module, attributes in
                                 stock["module attributes"].items()}))
    return stock, probe(os.path.join(opt, "python"), moto_endpoint, str(names))


def test_patched_sdk_behaves_as_stock(stock_and_patched, moto_endpoint):
    """Docstrings (client, paginator, waiter, resource), both ServiceDocumenters' output, boto3.compat's
    names, TransferConfig, the S3 transfer methods, timestamp parsing, the module attributes the patches
    defer or keep (the IPv6 patterns, configparser, Path, CancelledError, http2's version, the dateutil
    of botocore.utils, credentials and tokens, credentials.parse), what the functions using them answer
    while mock.patch replaced them before their first use (dateutil's parse through
    botocore.utils.dateutil, both generate_docs' ServiceDocumenter too), how many objects 16
    threads get at a simultaneous first use (one), what each kept lazy name of boto3.compat, both docs
    packages, both docstring modules and botocore.credentials is once a replacement of its source at
    its first read ended and once it was set and its module reloaded (the original: stock's
    import-time one), the dateutil.parser of botocore.utils, credentials and tokens with a dateutil
    that imports no submodule on access (< 2.9), a config file's loading, a JSONFileCache's delete,
    URLLib3Session.send's errors (concurrent.futures' CancelledError let through, also after that
    module left sys.modules) and a threaded multipart S3 upload + download (a local
    moto S3) are the same with the patches as without them."""
    stock, patched = stock_and_patched
    assert not stock["patched"] and patched["patched"]
    stock_upload = probe("", moto_endpoint)["s3 upload"]
    assert patched["s3 upload"] == stock_upload and stock_upload["round trip"] is True
    assert stock_upload["etag"].endswith('-3"')  # three 5 MiB parts: the TransferConfig was used
    for key in sorted(set(stock) - {"patched", "imported_at_first_client", "compiled_at_first_client", "hosts",
                                 "s3 upload", "module attributes"}):
        assert patched[key] == stock[key], key


def test_patched_modules_keep_every_stock_attribute(stock_and_patched):
    """Every module a patch changes has, once each name was read, every attribute stock's has, in
    dir() and of the same kind (a module by name; a class or function by module, qualified name and
    parameters; anything else by type): the lazy names stay attributes after their first use (boto3's
    TransferConfig and both ServiceDocumenters too), and no patch removed one (the `dateutil` of
    botocore.utils, credentials and tokens) or put another function in its place
    (botocore.credentials.parse is dateutil's).  Names only a patch adds (its __getattr__) are not
    compared."""
    stock, patched = stock_and_patched
    assert set(patched["module attributes"]) == set(stock["module attributes"])
    assert {"botocore.utils", "botocore.credentials", "botocore.tokens", "boto3.compat"} <= set(
        stock["module attributes"])
    assert stock["module attributes"]["botocore.utils"]["dateutil"] == "module dateutil"
    for module, attributes in sorted(stock["module attributes"].items()):
        differing = {name: (kind, patched["module attributes"][module].get(name))
                     for name, kind in attributes.items() if patched["module attributes"][module].get(name) != kind}
        assert not differing, module


def test_patched_sdk_keeps_the_lazy_modules_out_of_the_first_client(stock_and_patched):
    """`import boto3` + the first DynamoDB client import none of the modules the patches made lazy
    (s3transfer and multiprocessing, the docs writers, importlib.metadata, dateutil.parser,
    configparser, pathlib) and compile none of the IPv6 patterns, which stock
    imports and compiles."""
    stock, patched = stock_and_patched
    assert stock["imported_at_first_client"] == KEPT_OUT
    assert patched["imported_at_first_client"] == []
    assert stock["compiled_at_first_client"] == DEFERRED
    assert patched["compiled_at_first_client"] == []


def test_patched_sdk_parses_hosts_as_stock(stock_and_patched):
    """The IPv6 patterns' first-use checks give stock's answer for every host and URL of the probe:
    urllib3's parse_url, _normalize_host and is_ipaddress, botocore's IPv6 endpoint checks, SigV4's
    host and the endpoint rules' parseURL (some of them IPv6 literals that match), and what the host
    checks raise or answer for bytes, None and other non-str hosts."""
    stock, patched = stock_and_patched
    count, matched, _ = stock["hosts"]
    assert count > 5000 and matched > 100
    assert patched["hosts"] == stock["hosts"]


def write_tree(root, files):
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


PATCH = """Subject: demo: change b
Why: to show
 a continued line.

--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -1,3 +1,3 @@
 a = 1
-b = 2
+b = 3
 c = 4
"""


def one_patch(tmp_path, text=PATCH):
    folder = tmp_path / "patches" / "pkg"
    folder.mkdir(parents=True)
    (folder / "0001-demo.patch").write_text(text)
    return patches.load(str(tmp_path / "patches"))


def test_apply_rewrites_the_file_and_only_its_record_line(tmp_path):
    """A patch changes its file as the diff says, the header gives subject and why, and the RECORD
    line of that file (only that line) gets the new sha256 and size."""
    tree = tmp_path / "tree"
    write_tree(tree, {"pkg/mod.py": "a = 1\nb = 2\nc = 4\n", "pkg/other.py": "x = 1\n",
                      "pkg-1.0.dist-info/RECORD": "pkg/mod.py,sha256=old,12\npkg/other.py,sha256=keep,6\n"
                                                  "pkg-1.0.dist-info/RECORD,,\n"})
    (loaded,) = one_patch(tmp_path)
    assert (loaded["subject"], loaded["why"], loaded["files"]) == ("demo: change b", "to show a continued line.",
                                                                    ["pkg/mod.py"])
    patches.apply_all(str(tree), [loaded])
    patched = "a = 1\nb = 3\nc = 4\n\n" + "".join(patches.change_notice([loaded]))
    assert (tree / "pkg" / "mod.py").read_text() == patched
    record = (tree / "pkg-1.0.dist-info" / "RECORD").read_text().splitlines()
    assert record[0] == "pkg/mod.py,%s,%d" % (patches.record_hash(patched.encode()), len(patched))
    assert record[1:] == ["pkg/other.py,sha256=keep,6", "pkg-1.0.dist-info/RECORD,,"]


def test_a_patched_file_says_it_was_changed_and_by_which_patch(tmp_path):
    """Apache-2.0 4(b): each file a patch changed ends with a notice naming the patch file and its
    subject (every line number stays the wheel's); a file no patch touched is left byte for byte."""
    tree = tmp_path / "tree"
    write_tree(tree, {"pkg/mod.py": "a = 1\nb = 2\nc = 4\n", "pkg/other.py": "x = 1\n",
                      "pkg-1.0.dist-info/RECORD": "pkg/mod.py,sha256=old,12\npkg/other.py,sha256=keep,6\n"})
    patches.apply_all(str(tree), one_patch(tmp_path))
    lines = (tree / "pkg" / "mod.py").read_text().splitlines()
    assert lines[:3] == ["a = 1", "b = 3", "c = 4"]
    assert lines[4].startswith("# Changed by aws-python-keepalive (Apache-2.0 section 4(b))")
    assert lines[5] == "#   layer/patches/pkg/0001-demo.patch: demo: change b"
    assert (tree / "pkg" / "other.py").read_text() == "x = 1\n"


def test_apply_never_writes_into_a_hard_linked_file(tmp_path):
    """A patched file and a rewritten RECORD are new files: another hard link to the installed file
    (uv's cache, by default on Linux, and every other install of the same wheel) keeps the original
    bytes."""
    tree = tmp_path / "tree"
    write_tree(tree, {"pkg/mod.py": "a = 1\nb = 2\nc = 4\n", "pkg-1.0.dist-info/RECORD": "pkg/mod.py,,\n"})
    cache = tmp_path / "cache"
    cache.mkdir()
    os.link(tree / "pkg" / "mod.py", cache / "mod.py")
    os.link(tree / "pkg-1.0.dist-info" / "RECORD", cache / "RECORD")
    patches.apply_all(str(tree), one_patch(tmp_path))
    assert (tree / "pkg" / "mod.py").read_text().startswith("a = 1\nb = 3\nc = 4\n")
    assert (cache / "mod.py").read_text() == "a = 1\nb = 2\nc = 4\n"
    assert (cache / "RECORD").read_text() == "pkg/mod.py,,\n"


def test_a_patch_that_does_not_fit_stops_with_the_line(tmp_path):
    """Context or removed lines that differ from the file (a new pin moved the code) raise PatchError
    naming the patch, the file and the line, and leave the file as it was."""
    tree = tmp_path / "tree"
    write_tree(tree, {"pkg/mod.py": "a = 1\nb = 5\nc = 4\n", "pkg-1.0.dist-info/RECORD": "pkg/mod.py,,\n"})
    with pytest.raises(patches.PatchError, match=r"pkg/0001-demo.patch: pkg/mod.py: line 2 is 'b = 5\\n'"):
        patches.apply_all(str(tree), one_patch(tmp_path))
    assert (tree / "pkg" / "mod.py").read_text() == "a = 1\nb = 5\nc = 4\n"


def test_a_hunk_applies_at_an_offset_only_when_asked(tmp_path):
    """A hunk whose lines moved (a patch made after another one to the same file, applied without it)
    is refused by default (the build), and with allow_offset (bench-patches' lever alone) applies
    where its lines are, nearest its stated line, every line still checked."""
    tree = tmp_path / "tree"
    write_tree(tree, {"pkg/mod.py": "x = 0\ny = 0\na = 1\nb = 2\nc = 4\nb = 2\n",
                      "pkg-1.0.dist-info/RECORD": "pkg/mod.py,,\n"})
    patch = one_patch(tmp_path)
    with pytest.raises(patches.PatchError, match="line 1 is 'x = 0"):
        patches.apply_all(str(tree), patch)
    patches.apply_all(str(tree), patch, allow_offset=True)
    assert (tree / "pkg" / "mod.py").read_text().startswith("x = 0\ny = 0\na = 1\nb = 3\nc = 4\nb = 2\n")
    write_tree(tree, {"pkg/mod.py": "a = 1\nb = 5\nc = 4\n"})
    with pytest.raises(patches.PatchError, match="line 2 is 'b = 5"):
        patches.apply_all(str(tree), patch, allow_offset=True)


def test_a_patch_without_a_why_is_refused(tmp_path):
    """Every patch says why: a header without a Why: line is refused at load."""
    with pytest.raises(patches.PatchError, match="Why"):
        one_patch(tmp_path, PATCH.replace("Why: to show\n a continued line.\n", ""))


def test_repository_patches_touch_only_their_own_distribution():
    """Each patch of layer/patches/<distribution>/ changes files of that distribution's package only,
    and has a subject and a reason."""
    declared = patches.load()
    assert {patch["distribution"] for patch in declared} == {"boto3", "botocore", "urllib3"}
    for patch in declared:
        assert patch["subject"] and len(patch["why"]) > 80, patch["name"]
        assert {path.split("/")[0] for path in patch["files"]} == {patch["distribution"]}, patch["name"]


def test_readme_lists_every_patch():
    """README names every patch file of layer/patches/ (the full layer's SDK is upstream's plus these)."""
    with open(os.path.join(REPO, "README.md")) as handle:
        readme = handle.read()
    listed = set(re.findall(r"`(layer/patches/[^`]+\.patch)`", readme))
    assert listed == {"layer/patches/%s/%s" % (patch["distribution"], patch["name"]) for patch in patches.load()}
