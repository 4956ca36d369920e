"""The twin's models axis (issue 36: DynamoDB's, S3's and Lambda's latest model and endpoint rule set
answered from the build's pickles, prepared.py): the same models and rule sets, the same calls refused
by the model, the same requests and errors, an S3 upload through a TransferConfig as stock's; with
each flavor (the hook flavor's pickles are those of the runtime's bundled botocore)."""

import pytest
from harness import Case, Check, assert_same_as_stock

CASES = {
    flavor: Case("models", {"dynamodb": Check(), "s3": Check(), "lambda": Check()}, flavor=flavor)
    for flavor in ("full", "hook")
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_models_as_stock(twin, case):
    """Each service's model and rule set (fingerprints of the loaded trees), the refused call, the
    answered calls and the S3 multipart upload: outcomes and requests equal to stock's."""
    assert_same_as_stock(CASES[case], twin)
