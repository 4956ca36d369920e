"""Lint: ruff's hash-pinned lock (installed into .venv/tools by mk/python.mk). actionlint is a Go
module installed by mk/release.mk. Imports nothing."""
