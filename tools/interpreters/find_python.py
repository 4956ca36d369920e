"""Find a CPython interpreter of a given minor (3.12) wherever this machine keeps it.

    tools/interpreters/find-python 3.12                 prints the interpreter's path (exit 1 + a message if none)
    tools/interpreters/find-python --make 3.10 3.11 ... prints "3.10=/path 3.11=/path" for those found (for make)
    tools/interpreters/find-python --missing 3.12 --goal demo   prints the one-line "how to get it" message

Only looks: installing a minor no place has is tools/interpreters/install_python.py's
(``tools/interpreters/install-python``), which imports this module, never the other way round.

Why a lookup of its own: the Makefile and the lab used to look only under pyenv, so on a machine
with a distribution Python (Debian's /usr/bin/python3.11) every target failed with an obscure
"command not found".  Three places, in this order, the first that has the minor wins:

1. pyenv: ``$PYENV_ROOT/versions/3.12.*/bin/python3`` (default root ~/.pyenv), the newest patch
   release.  First, so that a machine set up with pyenv (this repo's) keeps the interpreters it had.
2. ``python3.12`` on PATH, skipping pyenv's shims: a shim answers for every minor pyenv knows of but
   fails at run time when that minor is not the selected one, so it is not evidence of anything.
3. uv-managed interpreters: ``uv python find --python-preference only-managed 3.12`` with the uv
   passed in (the repo's .venv/uv), else a look in uv's install folder
   (``$UV_PYTHON_INSTALL_DIR`` or ~/.local/share/uv/python/cpython-3.12.*/bin/python3).
4. The folder the Makefile owns, ``.venv/python/3.12/bin/python3.12``: what ``make interpreters``
   (tools/interpreters/install_python.py) installed when none of the above had the minor.

Stdlib only, no interpreter started for the first two (a name ``python3.12`` or a pyenv folder
``3.12.x`` already says the minor); runs on whatever python3 the caller has (3.6+).
"""

import argparse
import glob
import os
import re
import subprocess
import sys

# "-venv": a distribution's python3.X often lacks ensurepip, which the Makefile's first `-m venv`
# (the one that installs uv) needs; the package depends on python3.X itself.
HOW_TO_GET = "pyenv install {minor}, apt install python{minor}-venv or uv python install {minor}"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALL_ROOT = os.path.join(REPO, ".venv", "python")


def _patch_key(path, minor):
    """Sort key: the patch number in a folder name such as 3.12.7 or cpython-3.12.7-linux-x86_64-gnu."""
    match = re.search(re.escape(minor) + r"\.(\d+)", path)
    return int(match.group(1)) if match else -1


def _newest(paths, minor):
    paths = [p for p in paths if os.access(p, os.X_OK)]
    return max(paths, key=lambda p: (_patch_key(p, minor), p)) if paths else None


def _home(environ):
    return environ.get("HOME") or os.path.expanduser("~")


def from_pyenv(minor, environ):
    root = environ.get("PYENV_ROOT") or os.path.join(_home(environ), ".pyenv")
    # 3.12.* matches 3.12.1 but also 3.12.1t (free-threaded) or 3.12-dev: keep plain releases only.
    candidates = [p for p in glob.glob(os.path.join(root, "versions", minor + ".*", "bin", "python3"))
                  if re.fullmatch(re.escape(minor) + r"\.\d+", os.path.basename(os.path.dirname(os.path.dirname(p))))]
    return _newest(candidates, minor)


def from_path(minor, environ):
    for folder in environ.get("PATH", "").split(os.pathsep):
        if not folder or os.path.basename(os.path.normpath(folder)) == "shims":
            continue
        candidate = os.path.join(folder, "python" + minor)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def from_uv(minor, environ, uv=None):
    if uv and os.access(uv, os.X_OK):
        # From / and without VIRTUAL_ENV: uv also looks at an active or nearby virtual environment,
        # and this repo's .venv/ folder (which is not one) makes it fail.
        child_env = {k: v for k, v in environ.items() if k != "VIRTUAL_ENV"}
        result = subprocess.run([os.path.abspath(uv), "python", "find", "--python-preference", "only-managed", minor],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
                                env=dict(child_env, UV_NO_PROGRESS="1"), cwd="/")
        if result.returncode == 0 and result.stdout.strip():
            return result.stdout.strip()
    data_home = environ.get("XDG_DATA_HOME") or os.path.join(_home(environ), ".local", "share")
    install_dir = environ.get("UV_PYTHON_INSTALL_DIR") or os.path.join(data_home, "uv", "python")
    return _newest(glob.glob(os.path.join(install_dir, "cpython-" + minor + ".*", "bin", "python3")), minor)


def from_install_root(minor, root=INSTALL_ROOT):
    candidate = os.path.join(root, minor, "bin", "python" + minor)
    return candidate if os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None


def where(minor, environ=None, uv=None, root=INSTALL_ROOT):
    """(path, place) for a minor such as '3.12' -- place is pyenv, PATH, uv or installed -- or (None, None)."""
    environ = os.environ if environ is None else environ
    places = (("pyenv", lambda: from_pyenv(minor, environ)), ("PATH", lambda: from_path(minor, environ)),
              ("uv", lambda: from_uv(minor, environ, uv)), ("installed", lambda: from_install_root(minor, root)))
    for place, look in places:
        path = look()
        if path:
            return path, place
    return None, None


def find(minor, environ=None, uv=None, root=INSTALL_ROOT):
    """The interpreter path for a minor such as '3.12', or None."""
    return where(minor, environ, uv, root)[0]


def missing_message(minor, goal=None, who=None):
    """One line: which target (or who) needs which version, and the three ways to get it."""
    who = who or ("make %s" % goal if goal else "this")
    return ("%s needs CPython %s, found neither under pyenv, nor python%s on PATH, nor uv-managed: get it with "
            % (who, minor, minor)) + HOW_TO_GET.format(minor=minor)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("minors", nargs="+", help="CPython minors such as 3.12")
    parser.add_argument("--make", action="store_true", help="print minor=path for every minor found")
    parser.add_argument("--missing", action="store_true", help="print the message for a missing minor")
    parser.add_argument("--goal", default="", help="the make goal that needs it (for --missing)")
    parser.add_argument("--uv", default=None, help="a uv executable to ask for uv-managed interpreters")
    args = parser.parse_args(argv)
    if args.missing:
        print(missing_message(args.minors[0], args.goal.strip() or None))
        return 0
    if args.make:
        found = ((minor, find(minor, uv=args.uv)) for minor in args.minors)
        print(" ".join("%s=%s" % (minor, path) for minor, path in found if path))
        return 0
    path = find(args.minors[0], uv=args.uv)
    if path is None:
        print(missing_message(args.minors[0]), file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
