"""hook.py: the post-import hook that patches botocore (and aiobotocore) when, and only when, imported."""

import pytest

from conftest import LAYER, python_with_layer


def _python(script, env=None):
    completed = python_with_layer(script, env)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


def test_callback_runs_after_botocore_session_import():
    """The callback runs once botocore.session has executed, with the module, then not again."""
    out = _python(
        "import sys\n"
        "from aws_keepalive import hook\n"
        "seen = []\n"
        "hook.install(lambda module: seen.append((module.__name__, hasattr(module, 'Session'))))\n"
        "print(seen)\n"
        "import botocore.session, importlib\n"
        "importlib.reload(botocore.session)\n"
        "print(seen)\n"
    )
    assert out.splitlines() == ["[]", "[('botocore.session', True)]"]


def test_finder_removed_and_loader_restored():
    """After the import the finder is gone and botocore.session keeps botocore's own loader."""
    out = _python(
        "import sys\n"
        "from aws_keepalive import hook\n"
        "hook.install(lambda module: None)\n"
        "print(hook.installed())\n"
        "import botocore.session\n"
        "print(hook.installed())\n"
        "print(type(botocore.session.__loader__).__name__, type(botocore.session.__spec__.loader).__name__)\n"
    )
    assert out.splitlines() == ["True", "False", "SourceFileLoader SourceFileLoader"]


# Another post-import hook that delegates as ddtrace's ModuleWatchdog does: it asks every finder on
# sys.meta_path but itself for the spec (guarded against being asked again for the same name),
# wraps the loader, and after executing the module puts the loader it wrapped back on it.
DELEGATING_HOOK = """
import sys

class ChainedLoader:
    def __init__(self, loader, seen):
        self.loader, self.seen = loader, seen

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        module.__loader__ = module.__spec__.loader = self.loader
        self.seen.append(module.__name__)

class DelegatingFinder:
    def __init__(self):
        self.finding, self.seen = set(), []

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "botocore.session" or fullname in self.finding:
            return None
        self.finding.add(fullname)
        try:
            for finder in sys.meta_path:
                if finder is not self and hasattr(finder, "find_spec"):
                    spec = finder.find_spec(fullname, path, target)
                    if spec is not None:
                        spec.loader = ChainedLoader(spec.loader, self.seen)
                        return spec
        finally:
            self.finding.remove(fullname)

other = DelegatingFinder()
"""


@pytest.mark.parametrize("first", ["other hook", "layer"])
def test_behind_a_delegating_hook_one_callback_and_own_loader(first):
    """Beside another hook that asks every finder for the spec (as ddtrace's does), in either order:
    each callback runs once and botocore.session ends with botocore's own loader."""
    install_other = "sys.meta_path.insert(0, other)\n"
    install_layer = "hook.install(lambda module: seen.append(module.__name__))\n"
    out = _python(
        DELEGATING_HOOK
        + "from aws_keepalive import hook\n"
        + "seen = []\n"
        + (install_other + install_layer if first == "other hook" else install_layer + install_other)
        + "import botocore.session\n"
        + "print(seen, other.seen, hook.installed())\n"
        + "print(type(botocore.session.__loader__).__name__, type(botocore.session.__spec__.loader).__name__)\n"
    )
    assert out.splitlines() == [
        "['botocore.session'] ['botocore.session'] False",
        "SourceFileLoader SourceFileLoader",
    ]


# A hook that wraps the exec_module of every loader any finder returns, on the loader instance (as
# datadog-lambda's cold-start tracing does to every finder on sys.meta_path, ours included).
LOADER_WRAPPING_HOOK = """
import sys

executed, wrapped = [], set()

def wrap_exec_module(original):
    def exec_module(module):
        executed.append(module.__name__)
        return original(module)
    return exec_module

def wrap_find_spec(original):
    def find_spec(*args, **kwargs):
        spec = original(*args, **kwargs)
        loader = getattr(spec, "loader", None)
        if loader is not None and hasattr(loader, "exec_module") and id(loader) not in wrapped:
            loader.exec_module = wrap_exec_module(loader.exec_module)
            wrapped.add(id(loader))
        return spec
    return find_spec
"""


def test_beside_a_hook_that_wraps_exec_module_on_the_loader():
    """A hook that sets its own exec_module on every loader (datadog-lambda's cold-start tracing)
    around every finder, ours too: botocore is still patched once and both hooks see the import."""
    out = _python(
        LOADER_WRAPPING_HOOK
        + "from aws_keepalive import hook\n"
        + "seen = []\n"
        + "hook.install(lambda module: seen.append(module.__name__))\n"
        + "for finder in sys.meta_path:\n"
        + "    finder.find_spec = wrap_find_spec(finder.find_spec)\n"
        + "import botocore.session\n"
        + "print(seen, 'botocore.session' in executed, hook.installed())\n"
        + "print(type(botocore.session.__loader__).__name__)\n"
    )
    assert out.splitlines() == ["['botocore.session'] True False", "SourceFileLoader"]


def test_already_imported_runs_at_once():
    """If botocore.session is already imported, the callback runs at install, no finder stays."""
    out = _python(
        "import botocore.session\n"
        "from aws_keepalive import hook\n"
        "seen = []\n"
        "print(hook.install(seen.append) is None, len(seen), hook.installed())\n"
    )
    assert out == "True 1 False"


def test_other_imports_pass_through():
    """Modules other than botocore.session import normally while the hook waits."""
    out = _python(
        "from aws_keepalive import hook\n"
        "hook.install(lambda module: None)\n"
        "import json, botocore, botocore.exceptions\n"
        "print(hook.installed(), json.dumps([1]))\n"
    )
    assert out == "True [1]"


def test_activate_after_botocore_import_patches_existing(server):
    """activate() called when botocore is already imported patches it immediately."""
    out = _python(
        "import sys\n"
        "import botocore.session\n"
        "import aws_keepalive\n"
        "aws_keepalive.activate('late')\n"
        "sys.path.insert(0, %r)\n"
        "import keepalive_probe\n"
        "client = botocore.session.get_session().create_client('dynamodb', endpoint_url=%r)\n"
        "client.put_item(TableName='table', Item={'pk': {'S': '1'}})\n"
        "print(keepalive_probe.client_socket_options(client)[0]['TCP_KEEPIDLE'])\n"
        % (LAYER.replace("layer", "tests/hook/task"), server.url),
        env={"AWS_PYTHON_KEEPALIVE": "1"},
    )
    assert out == "60"


def test_each_watched_module_has_its_own_finder():
    """Two targets: each callback runs after its own module only; each finder leaves on its own."""
    out = _python(
        "from aws_keepalive import hook\n"
        "seen = []\n"
        "hook.install(lambda module: seen.append(module.__name__))\n"
        "hook.install(lambda module: seen.append(module.__name__), 'json.decoder')\n"
        "import json\n"
        "print(seen, hook.installed(), hook.installed('json.decoder'))\n"
        "import botocore.session\n"
        "print(seen, hook.installed())\n"
    )
    assert out.splitlines() == ["['json.decoder'] True False",
                                "['json.decoder', 'botocore.session'] False"]


def test_botocore_function_never_imports_aiohttp(server):
    """Switch on, a botocore-only function: aiobotocore's hook waits, aiohttp is never imported."""
    out = _python(
        "import sys\n"
        "import aws_keepalive\n"
        "aws_keepalive.activate('test')\n"
        "import botocore.session\n"
        "client = botocore.session.get_session().create_client('dynamodb', endpoint_url=%r)\n"
        "client.put_item(TableName='table', Item={'pk': {'S': '1'}})\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] in ('aiohttp', 'aiobotocore')),"
        " aws_keepalive.hook.installed('aiobotocore.session'))\n" % server.url,
        env={"AWS_PYTHON_KEEPALIVE": "1"},
    )
    assert out == "[] True"
