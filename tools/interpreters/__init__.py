"""Interpreters: find a CPython minor on this machine (find_python, the find-python glue) or install
it (install_python: uv, else the pinned Maven Central builds of cpython-maven.sha256), and uv's
own bootstrap lock. Standard library only (these run before any venv exists); imports no other room."""
