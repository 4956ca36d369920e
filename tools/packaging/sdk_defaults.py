"""The defaults the full layer changes by shipping a newer SDK than the runtimes bundle (make sdk-defaults).

    python tools/packaging/sdk_defaults.py [--uv .venv/uv/bin/uv] [--work build/sdk-defaults]
                                       [--doc docs/build.md] [--check]

The full layer brings its own boto3/botocore (the pin in layer/requirements.txt); a function on the
managed runtime without it runs the runtime's bundled release (the hash-pinned locks
lab/runtime-sdk/*.txt).  Attaching the full layer therefore changes every default that differs
between the two: botocore 1.44's ``retry_mode`` is ``standard`` where 1.42 and older say ``legacy``
(DynamoDB: 10 attempts under legacy, 3 under standard, plus a retry quota).  This script installs
each SDK from its lock (uv, hardlinked from its cache, --require-hashes) and reads the defaults
from the SDK's own files, in a fresh interpreter per SDK:

* ``botocore/configprovider.py``: every session variable (``BOTOCORE_DEFAUT_SESSION_VARIABLES``:
  its environment variable and default), the S3 and proxy variables;
* ``botocore/config.py`` / ``endpoint.py``: the client Config defaults (``OPTION_DEFAULTS``, the
  60 s timeouts, 10 pool connections);
* ``botocore/retries/standard.py`` / ``quota.py``: standard mode's attempts and retry quota;
* ``botocore/data/_retry.json``: legacy mode's attempts, the general one and each service's;
* ``botocore/data/sdk-default-configuration.json``: the values each ``defaults_mode`` applies.

It writes, between the markers in docs/build.md, a table of every setting whose default differs
between any two of these SDKs (retry mode and DynamoDB's attempts always shown), one column per
SDK.  The opening marker names the versions the table was made from; tests/build/test_sdk_defaults.py
fails when a pin changed and the table was not made again (``make sdk-defaults``; ``make bump-sdk``
runs it).  ``--check`` writes nothing and exits 1 when the table in the doc is not the one the pins give.
"""

import argparse
import json
import os
import re
import subprocess
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.packaging.build_layer import install_dependencies  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYER_LOCK = os.path.join("layer", "requirements.txt")
RUNTIME_LOCKS = os.path.join("lab", "runtime-sdk")
DOC = os.path.join("docs", "build.md")
# The block in DOC: the opening line names the versions it was made from.
BEGIN = "<!-- sdk-defaults from botocore %s (layer/requirements.txt) vs %s (lab/runtime-sdk) by make sdk-defaults -->"
BLOCK = re.compile(r"^<!-- sdk-defaults from botocore (?P<layer>\S+) \(layer/requirements.txt\) vs "
                   r"(?P<runtimes>[^(]*?) \(lab/runtime-sdk\) by make sdk-defaults -->\n.*?^<!-- end -->", re.S | re.M)
# Always in the table, differing or not: what a reader must see about retries.
ALWAYS = ("session retry_mode", "legacy max_attempts dynamodb", "standard max_attempts")
_PIN = re.compile(r"^botocore==(\S+)", re.M)

# Run in a fresh interpreter with the SDK's site folder first on sys.path: prints {setting: [where
# it is set, default]} as JSON (defaults that JSON cannot hold as their repr).
READ = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import botocore
from botocore import config, configprovider, endpoint
from botocore.retries import quota, standard
data = os.path.join(os.path.dirname(botocore.__file__), "data")
assert botocore.__file__.startswith(sys.argv[1]), botocore.__file__
found = {}
def listed(value):
    return value if isinstance(value, list) else [value] if value else []
def env_of(spec):
    keys = [".".join(key) if isinstance(key, tuple) else key for key in listed(spec[0])]
    return ", ".join(listed(spec[1]) + ["config " + key for key in keys])
for kind, table in (("session", configprovider.BOTOCORE_DEFAUT_SESSION_VARIABLES),
                    ("s3", getattr(configprovider, "DEFAULT_S3_CONFIG_VARS", {})),
                    ("proxies", getattr(configprovider, "DEFAULT_PROXIES_CONFIG_VARS", {}))):
    for name, spec in table.items():
        found["%s %s" % (kind, name)] = [env_of(spec), spec[2]]
for name, value in config.Config.OPTION_DEFAULTS.items():
    found["Config " + name] = ["Config(%s=...)" % name, value]
found["Config connect_timeout/read_timeout"] = ["Config(connect_timeout=, read_timeout=)", endpoint.DEFAULT_TIMEOUT]
found["Config max_pool_connections"] = ["Config(max_pool_connections=...)", endpoint.MAX_POOL_CONNECTIONS]
found["standard max_attempts"] = ["AWS_MAX_ATTEMPTS, Config(retries=...)", standard.DEFAULT_MAX_ATTEMPTS]
found["standard retry quota"] = ["(retry_mode standard)", quota.RetryQuota.INITIAL_CAPACITY]
with open(os.path.join(data, "_retry.json")) as handle:
    retry = json.load(handle)["retry"]
for service, policies in sorted(retry.items()):
    attempts = policies.get("__default__", {}).get("max_attempts")
    if attempts is not None:
        label = "general" if service == "__default__" else service
        found["legacy max_attempts " + label] = ["_retry.json (retry_mode legacy)", attempts]
with open(os.path.join(data, "sdk-default-configuration.json")) as handle:
    modes = json.load(handle)
for key, value in modes.get("base", {}).items():
    found["defaults_mode base " + key] = ["sdk-default-configuration.json", value]
for mode, changes in sorted(modes.get("modes", {}).items()):
    for key, change in sorted(changes.items()):
        found["defaults_mode %s %s" % (mode, key)] = ["sdk-default-configuration.json", change]
print(json.dumps({"version": botocore.__version__, "defaults": found}, default=repr, sort_keys=True))
"""


def pinned_version(lock):
    """The botocore version a hash-pinned lock installs."""
    with open(lock, encoding="utf-8") as handle:
        match = _PIN.search(handle.read())
    if match is None:
        raise SystemExit("sdk_defaults: no botocore== pin in %s" % lock)
    return match.group(1)


def _version_key(version):
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"[.]", version))


def locks(repo=REPO):
    """(layer lock, runtime locks sorted by version): the SDKs the table compares."""
    folder = os.path.join(repo, RUNTIME_LOCKS)
    runtime = [os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".txt")]
    return os.path.join(repo, LAYER_LOCK), sorted(runtime, key=lambda lock: _version_key(pinned_version(lock)))


def read_defaults(uv, lock, work, python=sys.executable):
    """{setting: [where set, default]} of the SDK ``lock`` installs (into ``work/<version>``, kept:
    installed once, read again by later runs)."""
    site = os.path.join(work, pinned_version(lock))
    if not os.path.isfile(os.path.join(site, "botocore", "__init__.py")):
        install_dependencies(uv, lock, site, python, link_mode="hardlink")
    completed = subprocess.run([python, "-I", "-c", READ, os.path.abspath(site)], capture_output=True,
                               text=True, check=False, timeout=300)
    if completed.returncode != 0:
        raise SystemExit("sdk_defaults: reading %s failed:\n%s" % (site, completed.stderr[-2000:]))
    result = json.loads(completed.stdout)
    if result["version"] != pinned_version(lock):
        raise SystemExit("sdk_defaults: %s holds botocore %s, not %s" % (site, result["version"], pinned_version(lock)))
    return result["defaults"]


def _cell(entry):
    if entry is None:
        return "(none)"
    value = entry[1]
    return "`%s`" % (json.dumps(value) if not isinstance(value, str) else value)


def table(columns):
    """The markdown table of every setting whose default differs between ``columns`` (a list of
    (heading, defaults)), and the ALWAYS rows."""
    names = sorted(set().union(*(defaults for _, defaults in columns)))
    rows = []
    for name in names:
        cells = [_cell(defaults.get(name)) for _, defaults in columns]
        if len(set(cells)) > 1 or name in ALWAYS:
            where = next(defaults[name][0] for _, defaults in reversed(columns) if name in defaults)
            rows.append("| %s | %s | %s |" % (name, where.replace("|", "\\|") or "—", " | ".join(cells)))
    header = "| setting | set by | %s |" % " | ".join(heading for heading, _ in columns)
    rule = "|---|---|" + "---|" * len(columns)
    return "\n".join([header, rule] + rows)


def block(uv, work, repo=REPO):
    """The whole marked block for DOC, made from the pins in ``repo``."""
    layer_lock, runtime_locks = locks(repo)
    columns = [("runtime-bundled %s" % pinned_version(lock), read_defaults(uv, lock, work)) for lock in runtime_locks]
    columns.append(("full layer %s" % pinned_version(layer_lock), read_defaults(uv, layer_lock, work)))
    begin = BEGIN % (pinned_version(layer_lock), ", ".join(pinned_version(lock) for lock in runtime_locks))
    return "%s\n%s\n<!-- end -->" % (begin, table(columns))


def pins_in_doc(text):
    """(layer version, [runtime versions]) the doc's block names, or None without a block."""
    match = BLOCK.search(text)
    if match is None:
        return None
    return match.group("layer"), [version.strip() for version in match.group("runtimes").split(",")]


def current_pins(repo=REPO):
    layer_lock, runtime_locks = locks(repo)
    return pinned_version(layer_lock), [pinned_version(lock) for lock in runtime_locks]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uv", default=os.path.join(REPO, ".venv", "uv", "bin", "uv"))
    parser.add_argument("--work", default=os.path.join(REPO, "build", "sdk-defaults"))
    parser.add_argument("--doc", default=os.path.join(REPO, DOC))
    parser.add_argument("--check", action="store_true", help="exit 1 if the doc's table is not the pins' table")
    args = parser.parse_args(argv)
    with open(args.doc, encoding="utf-8") as handle:
        text = handle.read()
    if BLOCK.search(text) is None:
        raise SystemExit("sdk_defaults: no sdk-defaults block in %s (its opening marker: %s)" % (args.doc, BEGIN))
    new = block(args.uv, args.work)
    updated = BLOCK.sub(lambda _: new, text, count=1)
    if args.check:
        if updated != text:
            print("sdk_defaults: the table in %s is stale; run make sdk-defaults" % args.doc)
            return 1
        print("sdk_defaults: the table in %s matches the pins" % args.doc)
        return 0
    if updated != text:
        with open(args.doc, "w", encoding="utf-8") as handle:
            handle.write(updated)
    print(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
