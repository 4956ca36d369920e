"""Docs: render_docs writes the measured numbers into README.md and docs/ from the benchmarks' JSON
(docs/numbers.md lists each rendered block). Imports no other room."""
