"""Every benchmark's JSON output: ``{"rows": [...]}`` (plus run-wide fields) under build/.

One writer so that every benchmark's file has the same shape and is announced the same way; run as
scripts (``python bench/x.py``), the benchmarks find this module next to them on sys.path.
"""

import json
import os


def write_rows(path, rows, **fields):
    """Write ``{**fields, "rows": rows}`` to ``path`` (folders made as needed) and say so."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as out:
        json.dump(dict(fields, rows=rows), out, indent=1)
        out.write("\n")
    print("wrote %s" % path)
