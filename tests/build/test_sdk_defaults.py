"""tools/packaging/sdk_defaults.py: the table in docs/build.md of the defaults the full layer's SDK changes
against the runtimes' bundled SDKs, read from each SDK (installed from its lock) and kept current."""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)
from tools.packaging import sdk_defaults  # noqa: E402

UV = os.path.join(REPO, ".venv", "uv", "bin", "uv")


def doc_text():
    with open(os.path.join(REPO, sdk_defaults.DOC), encoding="utf-8") as handle:
        return handle.read()


def test_table_names_the_pins_of_today():
    """The table in docs/build.md was made from the botocore versions the locks pin now (a new pin
    in layer/requirements.txt or lab/runtime-sdk/ without make sdk-defaults fails here)."""
    assert sdk_defaults.pins_in_doc(doc_text()) == sdk_defaults.current_pins()


@pytest.fixture(scope="module")
def made_block(tmp_path_factory):
    """The block the pins give, each SDK installed from its lock."""
    if not os.path.exists(UV):
        pytest.fail("no uv at %s: make .venv/uv/bin/uv (make test-build installs it)" % UV)
    return sdk_defaults.block(UV, str(tmp_path_factory.mktemp("sdk-defaults")))


def test_table_is_what_the_pins_give(made_block):
    """Reading every SDK's own config files again gives exactly the table docs/build.md holds: a
    default a new pin changes cannot be missing from it."""
    assert made_block in doc_text()


def test_retry_mode_row_shows_each_sdks_default(made_block):
    """The retry-mode row holds each SDK's configprovider default: legacy for the runtimes' 1.42
    and older, standard for botocore 1.44+ (the full layer's change a user must read)."""
    row = next(line for line in made_block.splitlines() if line.startswith("| session retry_mode |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")][2:]
    versions = sdk_defaults.current_pins()[1] + [sdk_defaults.current_pins()[0]]
    expected = ["`standard`" if sdk_defaults._version_key(v) >= (1, 44) else "`legacy`" for v in versions]
    assert cells == expected


def test_a_default_that_differs_is_listed_and_an_equal_one_is_not():
    """table(): a setting whose default differs between two SDKs gets a row (absent in one: "(none)"),
    an equal one none unless it is one of the always-shown rows."""
    old = {"session retry_mode": ["AWS_RETRY_MODE", "legacy"], "session region": ["AWS_DEFAULT_REGION", None],
           "standard max_attempts": ["AWS_MAX_ATTEMPTS", 3]}
    new = dict(old, **{"session retry_mode": ["AWS_RETRY_MODE", "standard"], "session new": ["AWS_NEW", True]})
    rows = sdk_defaults.table([("old", old), ("new", new)]).splitlines()[2:]
    assert rows == ["| session new | AWS_NEW | (none) | `true` |",
                    "| session retry_mode | AWS_RETRY_MODE | `legacy` | `standard` |",
                    "| standard max_attempts | AWS_MAX_ATTEMPTS | `3` | `3` |"]
