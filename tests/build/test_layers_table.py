"""tools/release/layers_table.py: the ARN table of the release notes, from layers.json."""

from tools.release import layers_table


def test_one_row_per_region_one_column_per_layer():
    """Regions sorted, layers sorted; a region a layer is missing from says so."""
    table = {"aws-python-keepalive-hook": {"us-east-1": "arn:h1"},
             "aws-python-keepalive": {"us-east-1": "arn:f1", "eu-west-1": "arn:f2"}}
    assert layers_table.render(table).splitlines() == [
        "| region | `aws-python-keepalive` | `aws-python-keepalive-hook` |",
        "|---|---|---|",
        "| eu-west-1 | `arn:f2` | not published |",
        "| us-east-1 | `arn:f1` | `arn:h1` |",
    ]


def test_nothing_published_says_so():
    """An empty layers.json renders a sentence, not an empty table."""
    assert layers_table.render({}) == "No layer has been published yet: layers.json is empty.\n"
