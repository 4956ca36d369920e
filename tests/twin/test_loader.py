"""The twin's Loader axis (the prepared-data optimization, prepared.py): code that wraps botocore's
Loader methods, subclasses the Loader, or adds models through AWS_DATA_PATH sees what stock shows
it, as often (issue 34 item 4)."""

import os

import pytest
from function import write_service_copy
from harness import Case, Check, assert_same_as_stock


def added_service(run):
    """AWS_DATA_PATH's folder in the run's own folder, holding a copy of DynamoDB's model."""
    import botocore

    models = os.path.join(run.dir, "models")
    write_service_copy(os.path.join(os.path.dirname(botocore.__file__), "data"), models, "dynamodb",
                       "2012-08-10", "mydynamodb")
    return {"models": models}


CASES = {
    "loader": Case("loader", {"wrapped": Check(), "subclass": Check(), "data_path": Check()},
                   env={"AWS_DATA_PATH": "{models}"}, params=added_service,
                   layer_says=("as built; listing it from the index",)),
}
# Wrappers put after the layer patched botocore (on a Loader instance, on the class with
# functools.wraps) and AWS_DATA_PATH overriding a model the index holds (set by the scenario).
CASES["loader_after_import"] = Case("loader_after_import", {"instance": Check(), "override": Check(), "after": Check()},
                                    layer_says=("as built; listing it from the index",))


@pytest.mark.parametrize("case", sorted(CASES))
def test_loader_as_stock(twin, case):
    """Wrappers of Loader methods made before boto3's import or after it (instance, class), a Loader
    subclass, a service added and one overridden through AWS_DATA_PATH: each wrapper and override is
    called as often as in stock, same calls, same model."""
    assert_same_as_stock(CASES[case], twin)
