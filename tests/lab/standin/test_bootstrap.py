"""lab/standin/runtime/bootstrap.py: the managed runtime's startup order (sys.path, .pth, PYTHONPATH)."""

import pytest

from standin import PYTHONS, write_task
from lab.standin.lambda_env import RUNTIME_DIR, LambdaFunction

PROBE = """
    import os, sys
    seen_at_import = os.environ.get("LAB_PTH_RAN")

    def handler(event, context):
        return {"path": sys.path, "pth_before_import": seen_at_import,
                "pythonpath": os.environ.get("PYTHONPATH"), "cwd": os.getcwd()}
"""


def _layer(root):
    """A layer with a .pth in each of the two folders the runtime processes."""
    write_task(root / "python", labpth_a="import os\nos.environ['LAB_PTH_RAN'] = 'python'\n")
    (root / "python" / "lab_a.pth").write_text("import labpth_a\n")
    return root


@pytest.mark.parametrize("python", PYTHONS)
def test_sys_path_order_and_pth_before_handler_import(tmp_path, python):
    """Task root, then <opt>/python/lib/pythonX.Y/site-packages, then <opt>/python, all before the
    runtime's own site-packages; .pth import lines ran before the handler module was imported."""
    task = write_task(tmp_path / "task", probe=PROBE)
    opt = _layer(tmp_path / "opt")
    with LambdaFunction(task, "probe.handler", python=python, opt=opt) as fn:
        result = fn.invoke({}).result
    path = result["path"]
    site_packages = str(opt / "python" / "lib" / ("python" + python) / "site-packages")
    assert path[:3] == [str(task), site_packages, str(opt / "python")]
    runtime_site = [i for i, p in enumerate(path) if "lambda-" + python in p and p.endswith("site-packages")]
    assert runtime_site and runtime_site[0] > 2
    assert path[3] == str(RUNTIME_DIR)  # the script's folder, like /var/runtime
    assert result["pth_before_import"] == "python"
    assert result["pythonpath"] == str(RUNTIME_DIR) and result["cwd"] == str(task)


def test_pythonpath_set_at_start_skips_the_layer_folders(tmp_path):
    """With PYTHONPATH set (an exec wrapper's case), layer folders are not added and .pth do not run."""
    task = write_task(tmp_path / "task", probe=PROBE)
    opt = _layer(tmp_path / "opt")
    with LambdaFunction(task, "probe.handler", opt=opt, env={"PYTHONPATH": str(tmp_path / "elsewhere")}) as fn:
        result = fn.invoke({}).result
    assert str(opt / "python") not in result["path"] and result["pth_before_import"] is None
    assert result["pythonpath"] == str(tmp_path / "elsewhere")
