"""The published ARNs as a Markdown table, from build/release/layers.json (release notes, docs).

    python tools/release/layers_table.py build/release/layers.json

One row per region, one column per layer (the full layer and the hook-only one), each cell the
layer version's ARN; regions sorted, partitions apart (their ARNs differ).  An empty or missing
file says that nothing has been published, rather than printing an empty table.
"""

import argparse
import json


def render(table):
    """Markdown for ``table`` (layer -> region -> ARN)."""
    layers = sorted(table)
    regions = sorted({region for arns in table.values() for region in arns})
    if not regions:
        return "No layer has been published yet: layers.json is empty.\n"
    lines = ["| region | %s |" % " | ".join("`%s`" % name for name in layers),
             "|---|" + "---|" * len(layers)]
    for region in regions:
        cells = ["`%s`" % table[name][region] if region in table[name] else "not published" for name in layers]
        lines.append("| %s | %s |" % (region, " | ".join(cells)))
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("layers_json")
    args = parser.parse_args(argv)
    try:
        with open(args.layers_json) as handle:
            table = json.load(handle)
    except FileNotFoundError:
        table = {}
    print(render(table), end="")


if __name__ == "__main__":
    main()
