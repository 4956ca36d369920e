"""What the full layer's SDK patches (layer/patches/) must leave as stock has it, printed as JSON.

Run as a script by tests/build/test_patched_sdk.py, once with the layer's patched tree first on
PYTHONPATH and once with the stock wheels (the test venv's own boto3/botocore, the same pinned
versions); the test compares the two outputs.  Everything the patches made lazy is read here, so
that what a function (or a tool: Sphinx, help(), OpenTelemetry) sees is compared, not how it got
there: client, paginator and waiter docstrings, resource action and collection docstrings,
ServiceDocumenter output (botocore's and boto3's), boto3.compat's names, TransferConfig and the S3
transfer methods, timestamp and credential-expiry parsing, and a multipart S3 upload and download
with a TransferConfig (threads) against a local S3 (argv[1], a moto server; "" skips it).
Last, every attribute of each module a patch changes, after the first use of each name (``module
attributes``): with STOCK_NAMES (an environment variable naming the stock run's JSON of those
names), the names stock's modules have are read too, so the test sees one a patch removed.

Also printed (not compared): which of the modules the patches keep out of ``import boto3`` +
the first client were imported by then, and whether this tree is the patched one.
"""

import glob
import hashlib
import inspect
import json
import operator
import os
import re
import subprocess
import sys
import tempfile

LAZY = ("s3transfer", "multiprocessing", "concurrent.futures.thread", "importlib.metadata",
        "botocore.docs.method", "boto3.docs.action", "dateutil.parser", "configparser", "pathlib")
# The IPv6 patterns the patches compile at their first use: (module, attribute).
DEFERRED_PATTERNS = (("urllib3.util.url", "_IPV6_RE"), ("urllib3.util.url", "_IPV6_ADDRZ_RE"),
                     ("urllib3.util.url", "_BRACELESS_IPV6_ADDRZ_RE"), ("urllib3.util.url", "_HOST_PORT_RE"),
                     ("botocore.compat", "IPV6_ADDRZ_RE"))
# The modules the patches change: every file a layer/patches/<distribution>/*.patch diff names.
PATCHES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "layer",
                       "patches")
STOCK_NAMES = "SDK_PROBE_STOCK_NAMES"
THREADS = "--first-use-from-threads"  # argv[1]: print first_use_from_threads() only
AFTER = "--after-replacements"  # argv[1]: print after_replacements() only
OLD_DATEUTIL = "--dateutil-without-lazy-submodules"  # argv[1]: print with_old_dateutil() only
# Hosts for the host-parsing comparison: names, IPv4, IPv6 with and without brackets, zone IDs, ports,
# and malformed ones (the patterns' first-use checks must give stock's answer for each).
HOSTS = ("localhost", "dynamodb.us-east-1.amazonaws.com", "EXAMPLE.com.", "127.0.0.1", "0x7f.1", "1.2.3.4:80",
         "[::1]", "::1", "[::1]:8000", "[::1]:", "[::1]:99999", "[::1%25eth0]", "::1%eth0", "[fe80::1%en0]",
         "[2001:db8::1]", "2001:db8::1", "[2001:db8::1]x", "[::ffff:1.2.3.4]", "::ffff:1.2.3.4",
         "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7:8:9]", "[v1.fe]", "[", "]", "[]", "[:]", ":", "a:b", "h:0080",
         "[::1", "::1]", " [::1]", "[::1]\n", "::1\n", "", "[%25]", "a%41b", "%zz", "bücher.example")


def digest(value):
    if isinstance(value, str):
        value = value.encode()
    return hashlib.sha256(value).hexdigest()


def main(endpoint):
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1")
    result = {"imported_at_first_client": sorted(name for name in LAZY if name in sys.modules),
              "compiled_at_first_client": [attribute for module, attribute in DEFERRED_PATTERNS
                                           if attribute in vars(sys.modules[module])]}
    # send_errors first (before concurrent.futures is imported), then, before anything else reads them,
    # the lazy attributes replaced; their first use from many threads, in a fresh interpreter.
    result.update(send_errors=send_errors(), replaced_attributes=replaced_attributes())
    for key, flag in (("first use from threads", THREADS), ("after replacements", AFTER),
                      ("dateutil without lazy submodules", OLD_DATEUTIL)):
        fresh = subprocess.run([sys.executable, __file__, flag], capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))  # this SDK
        result[key] = json.loads(fresh.stdout) if fresh.returncode == 0 else fresh.stderr
    result.update(deferred_names(), hosts=host_parsing(), config_file=config_file(), file_cache=file_cache())
    import boto3.compat

    result["patched"] = "TransferConfig" not in vars(boto3.compat)
    result["client docstrings"] = [digest(str(client.put_item.__doc__)),
                                   digest(str(client.get_paginator("scan").paginate.__doc__)),
                                   digest(str(client.get_waiter("table_exists").wait.__doc__))]
    table = boto3.resource("dynamodb", region_name="us-east-1").Table("t")
    queue = boto3.resource("sqs", region_name="us-east-1").Queue("https://sqs.us-east-1.amazonaws.com/1/q")
    result["resource docstrings"] = [digest(str(table.put_item.__doc__)), digest(str(table.reload.__doc__)),
                                     digest(str(queue.receive_messages.__doc__)),
                                     digest(str(boto3.resource("sqs", region_name="us-east-1").queues.__doc__))]
    import botocore.docs
    import botocore.session
    from boto3.docs import ServiceDocumenter as Boto3Documenter
    from botocore.docs import ServiceDocumenter

    with tempfile.TemporaryDirectory() as folder:
        result["botocore ServiceDocumenter"] = digest(
            ServiceDocumenter("sqs", botocore.session.get_session(), folder).document_service())
        result["boto3 ServiceDocumenter"] = digest(
            Boto3Documenter("sqs", boto3.Session(region_name="us-east-1"), folder).document_service())
        result["botocore.docs names"] = sorted(name for name in ("ServiceDocumenter", "generate_docs",
                                                                 "DEPRECATED_SERVICE_NAMES")
                                               if hasattr(botocore.docs, name))
    from boto3.compat import TRANSFER_CONFIG_SUPPORTS_CRT, TransferConfig
    from boto3.s3.transfer import TransferConfig as Boto3TransferConfig

    result["compat"] = [TRANSFER_CONFIG_SUPPORTS_CRT, TransferConfig.__module__ + "." + TransferConfig.__qualname__]
    config = Boto3TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024,
                                 max_concurrency=4, use_threads=True)
    # (s3transfer's UNSET_DEFAULT sentinel prints its address: the address is cut.)
    result["TransferConfig"] = sorted((key, re.sub(" at 0x[0-9a-f]+", "", repr(value)))
                                      for key, value in vars(config).items())
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=endpoint or None)
    result["s3 transfer methods"] = sorted(name for name in ("upload_file", "download_file", "upload_fileobj",
                                                             "download_fileobj", "copy") if hasattr(s3, name))
    from botocore import credentials, utils

    result["timestamps"] = [utils.parse_timestamp(value).isoformat() for value in
                            ("2026-11-28T08:00:00Z", "Sat, 28 Nov 2026 08:00:00 GMT", "1795852800")]
    result["credential expiry"] = credentials._parse_if_needed("2026-11-28T08:00:00+01:00").isoformat()
    if endpoint:
        result["s3 upload"] = upload(s3, config)
    names = {}
    if os.environ.get(STOCK_NAMES):
        with open(os.environ[STOCK_NAMES]) as handle:
            names = json.load(handle)
    result["module attributes"] = module_attributes(names)
    return result


def patched_modules():
    """The modules whose files a declared patch changes (``botocore/docs/__init__.py`` -> botocore.docs)."""
    modules = set()
    for path in glob.glob(os.path.join(PATCHES, "*", "*.patch")):
        with open(path) as handle:
            for line in handle:
                if line.startswith("+++ b/"):
                    modules.add(re.sub(r"(/__init__)?\.py$", "", line[6:].strip()).replace("/", "."))
    return sorted(modules)


def what_it_is(value):
    """A module by name, a class or function by module, qualified name and parameters (so a function
    put in place of another shows), anything else by type."""
    if inspect.ismodule(value):
        return "module " + value.__name__
    if inspect.isclass(value) or inspect.isroutine(value):
        try:
            parameters = [str(parameter.replace(default=inspect.Parameter.empty, annotation=inspect.Parameter.empty))
                          for parameter in inspect.signature(value).parameters.values()]
        except (TypeError, ValueError):
            parameters = ["?"]
        return "%s %s.%s(%s)" % (type(value).__name__, getattr(value, "__module__", "?"),
                                 getattr(value, "__qualname__", "?"), ", ".join(parameters))
    return type(value).__name__


def module_attributes(stock_names):
    """{module: {name: what_it_is}} of each module a patch changes, after the first use of every name
    it lists and ``stock_names`` gives for it: each name dir() then lists, and each given name dir()
    does not (what reading it gives: a lazy name must stay an attribute once read, as stock's is)."""
    import importlib

    found = {}
    for name in patched_modules():
        module = importlib.import_module(name)
        wanted = set(dir(module)) | set(stock_names.get(name, ()))
        seen = {attribute: outcome(getattr, module, attribute) for attribute in sorted(wanted)}  # the first use
        listed = set(dir(module))
        found[name] = {attribute: (what_it_is(getattr(module, attribute)) if attribute in listed
                                   else "not in dir() once read: " + seen[attribute][:80])
                       for attribute in sorted(wanted)}
    return found


def outcome(function, *args):
    """repr of what ``function(*args)`` returned, or the exception's type and message."""
    try:
        return repr(function(*args))
    except Exception as error:  # noqa: BLE001 (an exception is an outcome to compare)
        return "%s: %s" % (type(error).__name__, error)


def deferred_names():
    """The module attributes the patches compile or import at their first use, read as a user would."""
    import importlib

    patterns = [[module, attribute, getattr(importlib.import_module(module), attribute).pattern,
                 getattr(importlib.import_module(module), attribute).flags]
                for module, attribute in DEFERRED_PATTERNS]
    for module in ("botocore.utils", "botocore.httpsession"):
        patterns.append([module, "IPV6_ADDRZ_RE", importlib.import_module(module).IPV6_ADDRZ_RE.pattern])
    import botocore.configloader
    import botocore.httpsession
    import botocore.utils

    import botocore.credentials
    import botocore.tokens

    names = [botocore.configloader.configparser.__name__, botocore.utils.Path.__module__ + ".Path",
             botocore.httpsession.CancelledError.__module__ + "." + botocore.httpsession.CancelledError.__qualname__]
    # The dateutil package botocore.utils, credentials and tokens imported (its parser at the first
    # access), and credentials' parse (dateutil's function).
    names += [outcome(operator.attrgetter(path), botocore) for path in (
        "utils.dateutil.__name__", "credentials.dateutil.__name__", "tokens.dateutil.__name__",
        "utils.dateutil.parser.__name__", "credentials.dateutil.parser.parse.__module__")]
    names.append(outcome(lambda: what_it_is(botocore.credentials.parse)))
    return {"deferred patterns": patterns, "deferred names": names}


def first_use_from_threads():
    """How many objects 16 threads get when they all read each lazy pattern attribute first at once
    (stock: one each, compiled at import).  re.compile is made slow and cache-less meanwhile, so that
    every thread of a first use that is not one-at-a-time compiles its own, as a race would."""
    import importlib
    import re as re_module
    import threading
    import time

    original = re_module.compile

    def slow_uncached_compile(pattern, flags=0):
        time.sleep(0.05)
        return re_module._compiler.compile(pattern, flags)

    attributes = DEFERRED_PATTERNS + (("urllib3.util.ssl_", "_BRACELESS_IPV6_ADDRZ_RE"),
                                      ("botocore.utils", "IPV6_ADDRZ_RE"), ("botocore.httpsession", "IPV6_ADDRZ_RE"))
    modules = [importlib.import_module(module) for module, _ in attributes]  # boto3's imports
    barrier, seen = threading.Barrier(16), []

    def first_use():
        barrier.wait()
        seen.append([id(getattr(module, attribute, None)) for module, (_, attribute) in zip(modules, attributes)])

    threads = [threading.Thread(target=first_use) for _ in range(16)]
    re_module.compile = slow_uncached_compile
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        re_module.compile = original
    final = [id(getattr(module, attribute)) for module, (_, attribute) in zip(modules, attributes)]
    return [[module, attribute, len({row[index] for row in seen} | {final[index]})]
            for index, (module, attribute) in enumerate(attributes)]


def after_replacements():
    """What each lazy name is (and what its user answers) once a replacement ended, in a fresh
    interpreter: (1) its source replaced (mock.patch) at its first read, then restored: stock took the
    original at import, so a replacement must not be kept; (2) the name set by code, then its module
    reloaded (importlib.reload): stock binds the name anew."""
    import importlib
    from unittest import mock

    import boto3.compat
    import boto3.docs
    import boto3.docs.docstring
    import botocore.credentials
    import botocore.docs
    import botocore.docs.docstring
    import botocore.utils

    class Replacement:  # a class without s3transfer's UNSET_DEFAULT
        pass

    def what(value):
        return repr(value) if isinstance(value, (bool, str)) else what_it_is(value)

    # (module, lazy name, what a test would replace: its source); dateutil's parse by an autospec mock
    # (a function whose __module__ is None), the others by a class of this module.
    names = [(boto3.compat, "TransferConfig", "s3transfer.manager.TransferConfig"),
             (boto3.compat, "TRANSFER_CONFIG_SUPPORTS_CRT", "s3transfer.manager.TransferConfig"),
             (botocore.credentials, "parse", "dateutil.parser.parse"),
             (botocore.docs, "ServiceDocumenter", "botocore.docs.service.ServiceDocumenter"),
             (boto3.docs, "ServiceDocumenter", "boto3.docs.service.ServiceDocumenter"),
             (botocore.docs.docstring, "DocumentStructure", "botocore.docs.bcdoc.restdoc.DocumentStructure"),
             (boto3.docs.docstring, "document_action", "boto3.docs.action.document_action")]
    result = []
    # botocore.utils.Path too (a reload of botocore.utils still keeps a Path set by code: not compared).
    for module, name, source in names + [(botocore.utils, "Path", "pathlib.Path")]:
        with mock.patch(source, **({"autospec": True} if name == "parse" else {"new": Replacement})):
            getattr(module, name)  # the first read, under the replacement
        result.append([module.__name__, name, "source replaced at the first read", what(getattr(module, name))])
    result.append(["botocore.credentials", "_parse_if_needed", "after dateutil.parser.parse was replaced",
                   outcome(botocore.credentials._parse_if_needed, "2026-11-28T08:00:00Z")])
    for module, name, _ in names:
        setattr(module, name, "set by code")
        importlib.reload(module)
        result.append([module.__name__, name, "set, then reloaded", what(getattr(module, name))])
    return result


def with_old_dateutil():
    """The dateutil attribute of botocore.utils, credentials and tokens right after import, with a
    python-dateutil that imports no submodule on attribute access (< 2.9, which a function may bundle
    first on sys.path: 2.8.2 checked by hand, 2026-11-28); here the pinned 2.9 without its module
    __getattr__, before botocore is imported."""
    from unittest import mock

    import dateutil

    vars(dateutil).pop("__getattr__", None)
    import botocore.credentials
    import botocore.tokens
    import botocore.utils

    found = [outcome(operator.attrgetter(path), botocore) for path in (
        "utils.dateutil.parser.__name__", "credentials.dateutil.parser.__name__", "tokens.dateutil.parser.__name__")]
    found.append(outcome(mock.patch("botocore.utils.dateutil.parser.parse", lambda *args, **kwargs: "replaced")(
        botocore.utils.parse_timestamp), "Sat, 28 Nov 2026 08:00:00 GMT"))
    return found


def replaced_attributes():
    """What the functions that use a lazy module attribute answer while code (mock.patch) replaced it,
    before its first use: stock's functions use the attribute they imported, so the replacement."""
    import tempfile
    from unittest import mock

    import boto3
    import boto3.docs
    import botocore.docs
    import botocore.session
    import urllib3.http2
    from botocore import configloader, credentials, httpsession, utils
    from urllib3.util import ssl_, url

    everything = re.compile("^(.*)()$", re.DOTALL)

    class FakeModule:
        Error = Exception

        def RawConfigParser(*args):  # noqa: N802 (configparser's name)
            raise RuntimeError("the replacement was used")

    def fake(*args, **kwargs):
        raise RuntimeError("the replacement was used")

    def delete_cached():
        with tempfile.TemporaryDirectory() as folder:
            cache = utils.JSONFileCache(folder)
            cache["k"] = {}
            del cache["k"]
            return "deleted"

    def config():
        with tempfile.NamedTemporaryFile("w", suffix=".ini") as handle:
            handle.write("[default]\nregion = eu-west-1\n")
            handle.flush()
            return configloader.raw_config_parse(handle.name)

    class Raised(Exception):
        pass

    class FakeDateutil:
        class parser:  # noqa: N801 (dateutil's module name)
            parse = fake

    def generate_docs(generate, session):
        # One service (a real documenter writes it in a second; every service would take minutes).
        session.get_available_services = lambda: ["sqs"]
        with tempfile.TemporaryDirectory() as folder:
            return generate(folder, session)

    gmt = "Sat, 28 Nov 2026 08:00:00 GMT"

    cases = [("urllib3.util.ssl_._BRACELESS_IPV6_ADDRZ_RE", everything, ssl_.is_ipaddress, "example.com"),
             ("urllib3.util.url._IPV6_ADDRZ_RE", everything, url._normalize_host, "bücher.example", "http"),
             ("urllib3.util.url._HOST_PORT_RE", everything, url.parse_url, "http://example.com:1/"),
             ("urllib3.util.url._HOST_PORT_RE", everything, url.parse_url, "http://[::1]:1/"),
             ("urllib3.http2.version", lambda name: "3.9.9", urllib3.http2.inject_into_urllib3),
             ("botocore.utils.IPV6_ADDRZ_RE", everything, utils.is_valid_ipv6_endpoint_url, "https://example.com/"),
             ("botocore.httpsession.IPV6_ADDRZ_RE", everything, httpsession._is_ipaddress, "example.com"),
             ("botocore.compat.IPV6_ADDRZ_RE", everything, utils.is_valid_ipv6_endpoint_url, "https://[::1]/"),
             ("botocore.configloader.configparser", FakeModule, config),
             ("botocore.utils.Path", fake, delete_cached),
             ("botocore.httpsession.CancelledError", Raised, send_raising, Raised("r")),
             ("botocore.utils.dateutil.parser.parse", fake, utils.parse_timestamp, gmt),
             ("botocore.utils.dateutil", FakeDateutil, utils.parse_timestamp, gmt),
             ("botocore.credentials.parse", fake, credentials._parse_if_needed, gmt),
             ("botocore.docs.ServiceDocumenter", fake, generate_docs, botocore.docs.generate_docs,
              botocore.session.get_session()),
             ("boto3.docs.ServiceDocumenter", fake, generate_docs, boto3.docs.generate_docs,
              boto3.Session(region_name="us-east-1"))]
    answers = []
    for target, replacement, function, *args in cases:
        answers.append([target, outcome(mock.patch(target, replacement)(function), *args)])
    return answers


def host_parsing():
    """urllib3's and botocore's host and URL checks over HOSTS and a seeded sample of IPv6-like strings."""
    import random

    from botocore import auth, endpoint_provider, httpsession, utils
    from urllib3.util import ssl_, url

    rng = random.Random(36)
    hosts = list(HOSTS)
    for _ in range(300):
        hosts.append("".join(rng.choice("[]:%.09afAF x/") for _ in range(rng.randint(1, 12))))
        hosts.append("[%s%s]%s" % (":".join("%x" % rng.randint(0, 65535) for _ in range(rng.randint(1, 9))),
                                   rng.choice(["", "%25e0", "%e", "%"]), rng.choice(["", ":1", ":"])))
    library = endpoint_provider.RuleSetStandardLibrary({"partitions": []})
    lines = []
    for host in hosts:
        for scheme in ("http", "https", None):
            lines.append(outcome(url.parse_url, "%s://%s/p" % (scheme, host) if scheme else host))
            lines.append(outcome(url._normalize_host, host, scheme))
        lines.append(outcome(ssl_.is_ipaddress, host))
        lines.append(outcome(httpsession._is_ipaddress, host))
        for endpoint_url in ("https://%s/" % host, "http://%s:443" % host):
            lines += [outcome(check, endpoint_url) for check in (utils.is_valid_ipv6_endpoint_url, utils.is_valid_uri,
                                                                  auth._host_from_url, library.parse_url)]
    for value in (b"[::1]", b"::1", b"127.0.0.1", b"example.com", bytearray(b"::1"), None, 1, ["::1"]):
        lines += [outcome(check, value) for check in (ssl_.is_ipaddress, httpsession._is_ipaddress)]
        lines += [outcome(url._normalize_host, value, "http"), outcome(url.parse_url, value)]
    return [len(lines), sum(line.startswith("True") for line in lines), digest("\n".join(lines))]


def config_file():
    """botocore's config loader on a config file and on a malformed one."""
    from botocore import configloader

    with tempfile.TemporaryDirectory() as folder:
        good, bad = os.path.join(folder, "config"), os.path.join(folder, "bad")
        with open(good, "w") as out:
            out.write("[default]\nregion = eu-west-1\n[profile p]\ns3 =\n  addressing_style = path\n")
        with open(bad, "w") as out:
            out.write("region = x\n")
        return [outcome(configloader.load_config, good),
                outcome(configloader.raw_config_parse, bad).replace(folder, "")]


def file_cache():
    """botocore's JSONFileCache: set, read, delete, delete again."""
    from botocore.utils import JSONFileCache

    with tempfile.TemporaryDirectory() as folder:
        cache = JSONFileCache(folder)
        cache["k"] = {"a": 1}
        read = cache["k"]
        del cache["k"]
        return [read, "k" in cache, outcome(cache.__delitem__, "k")]


def send_raising(error):
    """What URLLib3Session.send raises (or returns) when urllib3's urlopen raises ``error``."""
    from botocore.awsrequest import AWSRequest
    from botocore.httpsession import URLLib3Session
    from urllib3.connectionpool import HTTPConnectionPool

    def urlopen(self, *args, **kwargs):
        raise error

    original = HTTPConnectionPool.urlopen
    HTTPConnectionPool.urlopen = urlopen
    try:
        return outcome(URLLib3Session().send, AWSRequest(method="GET", url="http://127.0.0.1:9/").prepare())
    except BaseException as escaped:  # noqa: BLE001 (what escapes send is the outcome)
        return "escaped %s" % type(escaped).__name__
    finally:
        HTTPConnectionPool.urlopen = original


def send_errors():
    """What URLLib3Session.send raises when urllib3 raises concurrent.futures' CancelledError (let
    through), another exception (wrapped) and, first, before concurrent.futures is imported (and
    with a stand-in for it in sys.modules); last, the CancelledError again once concurrent.futures
    is out of sys.modules (as module-isolating test runners leave it): stock's except clause still
    names the class it imported."""
    answers = [send_raising(ValueError("v"))]
    # sys.modules' concurrent.futures._base replaced (mock.patch.dict, as tests do) before any
    # CancelledError was seen: stock's except clause still names the class it imported.
    from unittest import mock

    with mock.patch.dict(sys.modules, {"concurrent.futures._base": mock.MagicMock()}):
        answers.append(send_raising(ValueError("v")))
    from concurrent.futures import CancelledError

    answers += [send_raising(error) for error in (CancelledError("c"), ValueError("v"), KeyboardInterrupt())]
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] == "concurrent"}
    for name in saved:
        del sys.modules[name]
    try:
        answers.append(send_raising(CancelledError("c")))
    finally:
        sys.modules.update(saved)
    return answers


def upload(s3, config):
    """A 12 MiB multipart upload and download with ``config`` (threads): what S3 stored and what came back."""
    bucket = "sdk-probe"
    s3.create_bucket(Bucket=bucket)
    data = bytes(range(256)) * (12 * 4096)
    with tempfile.TemporaryDirectory() as folder:
        source, copy = os.path.join(folder, "source"), os.path.join(folder, "copy")
        with open(source, "wb") as out:
            out.write(data)
        s3.upload_file(source, bucket, "object", Config=config)
        s3.download_file(bucket, "object", copy, Config=config)
        with open(copy, "rb") as handle:
            back = handle.read()
    head = s3.head_object(Bucket=bucket, Key="object")
    s3.delete_object(Bucket=bucket, Key="object")
    s3.delete_bucket(Bucket=bucket)
    return {"etag": head["ETag"], "length": head["ContentLength"], "round trip": back == data}


if __name__ == "__main__":
    if sys.argv[1:] == [THREADS]:
        print(json.dumps(first_use_from_threads()))
    elif sys.argv[1:] == [AFTER]:
        print(json.dumps(after_replacements()))
    elif sys.argv[1:] == [OLD_DATEUTIL]:
        print(json.dumps(with_old_dateutil()))
    else:
        print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else ""), sort_keys=True))
