"""The make and aws commands README.md and docs/*.md show (```sh blocks): each one runs as written
in zsh, macOS's shell, and gives make or aws the same arguments there as in bash (issue 35: the docs'
``ZIP=~/Downloads/...`` reached make as a literal ``~`` under zsh). make and aws are stand-in shell
functions that print their arguments: nothing is built or published."""

import glob
import os
import re
import shutil
import subprocess

import pytest
from conftest import REPO

# A command line a reader copies: optional VAR=value words, then make or aws.
COMMAND = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:make|aws)\s")
STUBS = "make() { printf '%s\\0' \"$@\"; }; aws() { printf '%s\\0' \"$@\"; }; "
HOME = "/home/reader"


def documented_commands():
    """[(file, command line)] of every make/aws line in a sh block, continuation lines joined; not
    those that take a value from a command substitution (``$(out CallerStock)``: a function the
    block defines, which a line alone does not have)."""
    found = []
    for path in ["README.md"] + sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs", "*.md"))):
        with open(os.path.join(REPO, path)) as handle:
            text = handle.read()
        for block in re.findall(r"^ *```(?:sh|bash|shell)\n(.*?)^ *```", text, re.S | re.M):
            for line in re.sub(r"\\\n\s*", " ", block).splitlines():
                if COMMAND.match(line.strip()) and "$(" not in line:
                    found.append((path, line.strip()))
    return found


def arguments_of(shell, lines, cwd):
    """For each of ``lines``: the arguments it hands make/aws in ``shell`` (bash or zsh -f), or the
    shell's error as a string.  One shell process runs them all, each in its own subshell."""
    argv = ["zsh", "-f", "-c"] if shell == "zsh" else ["bash", "--norc", "--noprofile", "-c"]
    script = STUBS + "".join("printf '\\036'; (\n%s\n) 2>&1; printf '\\037%%d' $?\n" % line for line in lines)
    completed = subprocess.run(argv + [script], capture_output=True, cwd=cwd, timeout=60,
                               env={"PATH": "/usr/bin:/bin", "HOME": HOME})
    results = []
    for chunk in completed.stdout.decode().split("\036")[1:]:
        output, _, code = chunk.rpartition("\037")
        results.append(output.split("\0")[:-1] if code == "0" else "exit %s: %s" % (code, output.strip()))
    if len(results) != len(lines):  # a line the shell cannot parse stops the script: each alone then
        if len(lines) == 1:
            return ["parse error: %s" % completed.stderr.decode().strip()]
        return [arguments(shell, line, cwd) for line in lines]
    return results


def arguments(shell, line, cwd):
    results = arguments_of(shell, [line], cwd)
    return results[0] if results else "parse error"


@pytest.fixture(scope="module")
def zsh():
    """zsh (Debian's package: make test-build installs it when missing)."""
    if shutil.which("zsh") is None:
        pytest.fail("no zsh on PATH: run these tests through `make test-build`, which installs it")


def test_the_docs_show_the_commands_issue_35_names(zsh):
    """The extraction finds the commands these tests are for: README's macOS route (make publish
    ZIP="$HOME/...") and its GovCloud one (PARTITION=aws-us-gov), and the plain aws command."""
    lines = [line for _, line in documented_commands()]
    assert any(line.startswith('make publish ZIP="$HOME/') for line in lines)
    assert any("PARTITION=aws-us-gov" in line for line in lines)
    assert any(line.startswith("aws lambda publish-layer-version") for line in lines)
    assert len(lines) > 30


def test_every_documented_command_means_the_same_in_zsh_and_bash(zsh, tmp_path):
    """Each documented make/aws line runs in zsh (no "no matches found" glob, no redirection from a
    <placeholder>), hands the same arguments as bash does, and none carries an unexpanded ~ or $."""
    commands = documented_commands()
    lines = [line for _, line in commands]
    wrong = []
    for (path, line), in_zsh, in_bash in zip(commands, arguments_of("zsh", lines, tmp_path),
                                             arguments_of("bash", lines, tmp_path)):
        if isinstance(in_zsh, str) or in_zsh != in_bash or any("~" in a or "$" in a for a in in_zsh):
            wrong.append((path, line, in_zsh, in_bash))
    assert wrong == []


def test_a_tilde_after_an_equals_sign_is_caught(zsh, tmp_path):
    """The check above sees issue 35's defect: ``ZIP=~/Downloads/x.zip`` is expanded by bash but reaches
    make as a literal ~ in zsh, while "$HOME/Downloads/x.zip" is the same path in both."""
    expanded = ["publish", "ZIP=%s/Downloads/x.zip" % HOME]
    assert arguments("bash", "make publish ZIP=~/Downloads/x.zip", tmp_path) == expanded
    assert arguments("zsh", "make publish ZIP=~/Downloads/x.zip", tmp_path) == ["publish", "ZIP=~/Downloads/x.zip"]
    for shell in ("bash", "zsh"):
        assert arguments(shell, 'make publish ZIP="$HOME/Downloads/x.zip"', tmp_path) == expanded
