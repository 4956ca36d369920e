"""Upload the built wheel to a package index with twine (`make publish-wheel`).

Where to and as whom, from the environment (never from the command line, which other users of the
machine can read in the process list):

- ``INDEX_URL``: the index's upload URL (PyPI: https://upload.pypi.org/legacy/; a private index
  such as pypiserver, devpi, CodeArtifact or Artifactory gives its own);
- ``TOKEN``: an API token (sent as user ``__token__``, PyPI's convention), or
- ``INDEX_USER`` and ``INDEX_PASSWORD``.

``twine check`` runs first, so that metadata an index would reject is reported before any upload.
twine gets the credentials through TWINE_USERNAME / TWINE_PASSWORD in its environment.
"""

import argparse
import os
import subprocess
import sys


def credentials(environ):
    """(user, password) from TOKEN or INDEX_USER/INDEX_PASSWORD; SystemExit naming what is missing."""
    token = environ.get("TOKEN", "").strip()
    if token:
        return "__token__", token
    user = environ.get("INDEX_USER", "").strip()
    password = environ.get("INDEX_PASSWORD", "")
    if user and password:
        return user, password
    raise SystemExit("publish_wheel: set TOKEN (an API token), or INDEX_USER and INDEX_PASSWORD")


def index_url(environ):
    url = environ.get("INDEX_URL", "").strip()
    if not url.startswith(("https://", "http://")):
        raise SystemExit("publish_wheel: set INDEX_URL to the index's upload URL, e.g. "
                         "https://upload.pypi.org/legacy/ (got %r)" % url)
    return url


def twine(arguments, environ):
    return subprocess.run([sys.executable, "-m", "twine"] + arguments, env=environ).returncode


def publish(wheel, environ):
    """Check, then upload ``wheel``; returns twine's exit code (0 on success)."""
    if not os.path.isfile(wheel):
        raise SystemExit("publish_wheel: no wheel at %s (run `make wheel`)" % wheel)
    url = index_url(environ)
    user, password = credentials(environ)
    child = dict(environ, TWINE_USERNAME=user, TWINE_PASSWORD=password, TWINE_NON_INTERACTIVE="1")
    code = twine(["check", "--strict", wheel], child)
    if code:
        return code
    return twine(["upload", "--non-interactive", "--disable-progress-bar", "--repository-url", url, wheel], child)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", required=True, help="the wheel to upload")
    args = parser.parse_args(argv)
    code = publish(args.wheel, os.environ)
    if code == 0:
        print("published: %s to %s" % (os.path.basename(args.wheel), os.environ["INDEX_URL"].strip()))
    sys.exit(code)


if __name__ == "__main__":
    main()
