"""tools/interpreters/install_python.py: a CPython minor this machine lacks, installed into the Makefile's folder
from Maven Central's real build (org.bytedeco:cpython, fetched with mvn into $HOME/.m2 once), with uv
tried first; its ssl pointed at the system's certificates; idempotent and locked.

uv python install cannot run here (its builds come from GitHub), so the uv route is played by a
small script standing in for uv that does what uv does: a cpython-<version>-<platform> folder in
UV_PYTHON_INSTALL_DIR (holding links to the real installed interpreter)."""

import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile

from tools.interpreters import install_python
import pytest

MINOR = "3.14"
NO_UV = "/nonexistent/uv"


@pytest.fixture(scope="module")
def maven_root(tmp_path_factory):
    """CPython 3.14 installed once from Maven Central into a fresh root (uv given: none)."""
    root = str(tmp_path_factory.mktemp("python"))
    path, origin = install_python.ensure(MINOR, root=root, uv=NO_UV)
    return root, path, origin


def run_python(python, code):
    result = subprocess.run([python, "-I", "-c", code], capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_maven_build_installs_and_runs(maven_root):
    """No uv: the Maven Central build is unpacked into <root>/3.14 and runs as CPython 3.14 with
    ctypes (libffi found), venv and a pip whose shebang names the new prefix."""
    root, path, origin = maven_root
    assert path == os.path.join(root, MINOR, "bin", "python" + MINOR)
    assert origin == "Maven Central org.bytedeco:cpython:%s:jar:linux-x86_64" % install_python.MAVEN_BUILDS[MINOR]
    seen = json.loads(run_python(path, "import ctypes, json, sys, venv; ctypes.CDLL(None); "
                                       "print(json.dumps(['%d.%d' % sys.version_info[:2], sys.prefix]))"))
    assert seen == [MINOR, os.path.join(root, MINOR)]
    assert os.readlink(os.path.join(root, MINOR, "bin", "python3")) == "python" + MINOR
    pip = os.path.join(root, MINOR, "bin", "pip3")
    with open(pip) as script:
        assert script.readline().strip() == "#!" + path
    assert subprocess.run([pip, "--version"], capture_output=True, timeout=60).returncode == 0


def test_maven_build_ssl_uses_the_system_certificates(maven_root):
    """The build's compiled-in OPENSSLDIR (the builder's /home/runner/... folder) is rewritten to
    the system's: default verify paths name it, a default context loads its CA certificates, and
    no shared object names the builder's folder any more -- with no SSL_CERT_FILE set."""
    root, path, _ = maven_root
    system = install_python.system_openssl_dir()
    assert system, "this machine has a CA bundle (ca-certificates)"
    seen = json.loads(run_python(path, "import json, os, ssl; p = ssl.get_default_verify_paths(); "
                                       "c = ssl.create_default_context(); print(json.dumps([p.openssl_cafile, "
                                       "c.cert_store_stats()['x509_ca'], 'SSL_CERT_FILE' in os.environ]))"))
    assert seen[0] == os.path.join(system, "cert.pem")
    assert seen[1] > 0 and seen[2] is False
    for folder, _, files in os.walk(os.path.join(root, MINOR, "lib")):
        for name in files:
            if ".so" in name and not os.path.islink(os.path.join(folder, name)):
                with open(os.path.join(folder, name), "rb") as handle:
                    assert not re.search(rb"/home/runner/[^\0]*/ssl[/\"\0]", handle.read()), name


def test_openssl_dir_rewrite_keeps_offsets_and_tails(tmp_path):
    """Each string starting with the builder's folder becomes the system's folder + the same tail,
    NUL-padded to the same length; other bytes and the file's size stay as they were."""
    builder = b"/home/runner/work/build/ssl"
    blob = (b"\x7fELF" + b"A" * 10 + b"\0" + builder + b"/cert.pem\0" + b"xyz\0" + builder + b"\0" +
            b"OPENSSLDIR: \"" + builder + b"\"\0" + builder + b"/certs\0" + b"B" * 5)
    lib = tmp_path / "lib" / "python3.99" / "lib-dynload"
    lib.mkdir(parents=True)
    (lib / "_ssl.cpython-399.so").write_bytes(blob)
    assert install_python.point_openssl_at_system(str(tmp_path), "/etc/pki/tls") == "/etc/pki/tls"
    patched = (lib / "_ssl.cpython-399.so").read_bytes()
    assert len(patched) == len(blob)
    strings = [part for part in patched.split(b"\0") if part]
    assert b"/etc/pki/tls/cert.pem" in strings and b"/etc/pki/tls/certs" in strings
    assert b"/etc/pki/tls" in strings and b"xyz" in strings and b"OPENSSLDIR: \"/etc/pki/tls\"" in strings
    assert patched.index(b"xyz") == blob.index(b"xyz")
    # A system folder longer than the builder's cannot fit: nothing is written.
    assert install_python.point_openssl_at_system(str(tmp_path), "/x" * 40) is None


def test_second_call_reuses_a_stamped_prefix_and_redoes_a_half_made_one(maven_root):
    """A stamped prefix is returned as is (nothing unpacked again); without its stamp (an
    interrupted install) it is made again from scratch."""
    root, path, origin = maven_root
    marker = os.path.join(root, MINOR, "marker")
    open(marker, "w").close()
    assert install_python.ensure(MINOR, root=root, uv=NO_UV) == (path, origin)
    assert os.path.exists(marker)
    os.unlink(install_python.stamp_path(MINOR, root))
    assert install_python.ensure(MINOR, root=root, uv=NO_UV) == (path, origin)
    assert not os.path.exists(marker)
    assert install_python.installed_origin(MINOR, root) == origin


def test_parallel_installs_unpack_once(tmp_path):
    """Two processes asking for the same missing minor at once: one unpacks, the other waits on the
    lock and gets the same interpreter."""
    code = textwrap.dedent("""
        import sys; sys.path.insert(0, %r)
        from tools.interpreters import install_python
        print(install_python.ensure(%r, root=%r, uv=%r)[0])
    """ % (os.path.dirname(install_python.__file__), MINOR, str(tmp_path), NO_UV))
    runs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    try:
        outputs = [run.communicate(timeout=300) for run in runs]
    finally:
        for run in runs:  # stopped on a timeout too: they hold the lock and write into tmp_path
            if run.poll() is None:
                run.kill()
                run.wait()
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert outputs[0][0] == outputs[1][0] == os.path.join(str(tmp_path), MINOR, "bin", "python" + MINOR) + "\n"
    assert sum(err.count("unpacking") for _, err in outputs) == 1


def test_maven_jar_found_where_mvn_put_it_when_home_is_not_the_accounts(tmp_path, monkeypatch):
    """HOME a fresh folder (a container, sudo -E, a CI runner), not the passwd entry's home that is
    Java's user.home: the jar mvn fetches is found, in $HOME/.m2/repository, where mvn put it (mvn
    is told the repository; by default it writes under user.home and the jar was never found)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("MAVEN_REPOSITORY", raising=False)
    account_home = pwd.getpwuid(os.getuid()).pw_dir
    assert os.path.realpath(account_home) != os.path.realpath(home)
    # mvn's own plugins from the account's repository (copied: no download; none on a fresh
    # machine), the CPython jar itself left out: mvn fetches it into the repository it is told.
    account_repository = os.path.join(account_home, ".m2", "repository")
    repository = home / ".m2" / "repository"
    if os.path.isdir(account_repository):
        shutil.copytree(account_repository, repository,
                        ignore=lambda folder, names: ["cpython"] if folder.endswith("bytedeco") else [])
    jar = install_python.maven_jar(MINOR)
    version = install_python.MAVEN_BUILDS[MINOR]
    assert jar == str(repository / "org" / "bytedeco" / "cpython" / version / ("cpython-%s-linux-x86_64.jar" % version))
    assert zipfile.is_zipfile(jar)
    assert install_python.maven_repository({"HOME": "/h", "MAVEN_REPOSITORY": "/m2"}) == "/m2"


def fake_uv(tmp_path, real_prefix, works=True):
    """A script standing in for uv: `python install 3.14` makes cpython-3.14.9-linux-x86_64-gnu in
    UV_PYTHON_INSTALL_DIR with links to a real prefix's bin and lib (or fails like uv offline)."""
    script = tmp_path / "uv"
    body = textwrap.dedent("""\
        #!/bin/sh
        [ "$1 $2 $3" = "python install %s" ] || exit 2
        %s
        d="$UV_PYTHON_INSTALL_DIR/cpython-%s.9-linux-x86_64-gnu"; mkdir -p "$d"
        ln -s %s/bin "$d/bin"; ln -s %s/lib "$d/lib"
    """) % (MINOR, "" if works else "echo 'error: failed to lookup address information' >&2; exit 1",
            MINOR, real_prefix, real_prefix)
    script.write_text(body)
    script.chmod(0o755)
    return str(script)


def test_uv_first_then_maven(maven_root, tmp_path):
    """uv python install is tried first: when it works the minor comes from it (root/3.14 a link to
    uv's folder, Maven not asked); when it fails, Maven's build is installed."""
    real_prefix = os.path.join(maven_root[0], MINOR)
    root = str(tmp_path / "root")
    path, origin = install_python.ensure(MINOR, root=root, uv=fake_uv(tmp_path, real_prefix), mvn="/nonexistent/mvn")
    assert origin == "uv python install 3.14 (cpython-3.14.9-linux-x86_64-gnu)"
    assert os.readlink(os.path.join(root, MINOR)) == os.path.join("uv", "cpython-3.14.9-linux-x86_64-gnu")
    assert run_python(path, "import sys; print('%d.%d' % sys.version_info[:2])").strip() == MINOR
    failing = tmp_path / "failing"
    failing.mkdir()
    root = str(tmp_path / "root2")
    path, origin = install_python.ensure(MINOR, root=root, uv=fake_uv(failing, real_prefix, works=False))
    assert origin.startswith("Maven Central ") and not os.path.islink(os.path.join(root, MINOR))


def test_report_one_line_per_minor(maven_root, capsys, monkeypatch):
    """--report: one line per minor naming where it came from (a place, or installed earlier/now);
    a minor nothing can provide is one line on stderr and exit 1."""
    root, path, origin = maven_root
    monkeypatch.setenv("PYENV_ROOT", "/nonexistent")
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", "/nonexistent")
    here = "%d.%d" % sys.version_info[:2]
    assert install_python.install_main([here, MINOR], True, NO_UV, None, root) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("CPython %s" % here) and lines[0].endswith("(python%s on PATH)" % here)
    assert path in lines[1] and lines[1].endswith("(installed earlier: %s)" % origin)
    assert install_python.install_main(["3.8"], True, NO_UV, "test", root) == 1
    last = capsys.readouterr().err.splitlines()[-1]  # after the installer's own progress lines
    assert last.startswith("make test needs CPython 3.8") and "Maven Central has no CPython 3.8 build" in last


def test_every_maven_build_is_pinned():
    """Each build in MAVEN_BUILDS has a sha256 line in tools/interpreters/cpython-maven.sha256 (and no stale one)."""
    pins = install_python.maven_pins()
    assert set(pins) == {install_python.maven_coordinates(minor) for minor in install_python.MAVEN_BUILDS}
    assert all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in pins.values())


def test_fetched_jar_matches_its_pin(maven_root):
    """The jar mvn fetched for the module's install is the pinned one (verify_jar returns its sha256)."""
    jar = install_python.maven_jar(MINOR)
    assert install_python.verify_jar(jar, MINOR) == install_python.maven_pins()[install_python.maven_coordinates(MINOR)]


def test_a_jar_that_is_not_the_pinned_one_is_refused(tmp_path, monkeypatch):
    """A jar whose sha256 differs from its pin is refused before anything is unpacked, with a message
    naming the file, both digests and the pins file; make interpreters then fails on that minor."""
    jar = tmp_path / "cpython.jar"
    jar.write_bytes(b"not the pinned build")
    monkeypatch.setattr(install_python, "maven_jar", lambda minor, mvn="mvn": str(jar))
    root = tmp_path / "root"
    with pytest.raises(RuntimeError) as error:
        install_python.install_from_maven(MINOR, str(root))
    message = str(error.value)
    assert str(jar) in message and "refusing" in message and "cpython-maven.sha256" in message
    assert install_python.maven_pins()[install_python.maven_coordinates(MINOR)] in message
    assert not (root / MINOR).exists()
    with pytest.raises(RuntimeError) as error:
        install_python.ensure_pinned(MINOR, str(root))
    assert "refusing" in str(error.value)


def test_a_pinned_prefix_edited_after_install_is_installed_again(maven_root):
    """ensure_pinned checks every file of a pinned prefix against the manifest (sha256 per file) written
    at install, not the stamp: an edited py_compile.py (which would compile every release from then
    on) and an added sitecustomize.py are named, and the prefix is installed again from its verified
    jar; a prefix without a manifest is not trusted either.  (The module's Maven install, reused: it
    is the pinned build; this test runs last in the module, as it makes the prefix again.)"""
    root = maven_root[0]
    installed = install_python.ensure_pinned(MINOR, root)
    prefix = install_python.prefix_for(MINOR, root)
    assert install_python.manifest_differences(prefix) == []
    edited = os.path.join(prefix, "lib", "python" + MINOR, "py_compile.py")
    with open(edited, "rb") as handle:
        original = handle.read()
    with open(edited, "ab") as handle:
        handle.write(b"\n# edited after install\n")
    added = os.path.join(prefix, "lib", "python" + MINOR, "sitecustomize.py")
    with open(added, "w") as handle:
        handle.write("import sys\n")
    assert install_python.manifest_differences(prefix) == [
        "changed: lib/python%s/py_compile.py" % MINOR, "added: lib/python%s/sitecustomize.py" % MINOR]
    assert install_python.ensure_pinned(MINOR, root) == installed
    with open(edited, "rb") as handle:
        assert handle.read() == original
    assert not os.path.exists(added)
    assert install_python.manifest_differences(prefix) == []
    os.unlink(os.path.join(prefix, install_python.MANIFEST))
    assert install_python.manifest_differences(prefix) == ["no manifest"]
