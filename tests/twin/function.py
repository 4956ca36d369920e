"""The function's side of the stock twin: scenarios a Lambda function's code may play, run in the
stand-in runtime after the layer's activation (copied into the task root as ``twin_function``).

Each scenario takes its parameters (``urls``: one endpoint per check; ``bundle``: the CA file
that verifies the endpoints; ``dir``: the run's own folder; the case's extras) and returns, per
check, a dict of what stock and the layer must agree on: each call's outcome (``ok`` or the
exception's type), and counts of calls into other code (an override, a wrapper).  Keys starting
with ``_`` are details for a failure message, not compared.

Nothing here knows whether the layer is on: the same code runs in both twins.  Each check makes
its own client(s) with a new boto3 session, so checks in one interpreter stay independent (the
layer's per-client state: contexts, sessions, bundles).  Module-level imports are stdlib only:
some scenarios act before boto3 is imported.
"""

import hashlib
import json
import os
import shutil
import ssl
import time

SCENARIOS = {}


def scenario(function):
    SCENARIOS[function.__name__] = function
    return function


def run(name, params):
    return SCENARIOS[name](params)


# --- helpers ----------------------------------------------------------------------------------


def client(url, verify=None, config=None, session=None, service="dynamodb"):
    """A client of ``service`` at ``url``: few retries and short timeouts (the twins run side by
    side; a hang costs both the same)."""
    import boto3
    from botocore.config import Config

    base = Config(retries={"max_attempts": 2, "mode": "standard"}, connect_timeout=3, read_timeout=10)
    kwargs = dict(region_name="us-east-1", endpoint_url=url, config=base.merge(config) if config else base)
    if verify is not None:
        kwargs["verify"] = verify
    return (session or boto3.session.Session()).client(service, **kwargs)


def attempt(function):
    """(outcome, detail): ``ok``, or the exception's type and its text."""
    try:
        function()
        return "ok", None
    except Exception as error:
        return type(error).__name__, str(error)[:300]


def calls(make_client, count, between=None):
    """``count`` list_tables calls on the client ``make_client()`` makes (client creation counted
    as the first outcome when it fails); ``between(i)`` runs before call i."""
    started = time.monotonic()
    outcomes, details = [], []
    made = {}
    outcome, detail = attempt(lambda: made.setdefault("client", make_client()))
    if outcome != "ok":
        return {"calls": ["create: " + outcome], "_details": [detail], "_elapsed_s": time.monotonic() - started}
    for index in range(count):
        if between is not None:
            between(index)
        outcome, detail = attempt(made["client"].list_tables)
        outcomes.append(outcome)
        details.append(detail)
    return {"calls": outcomes, "_details": details, "_elapsed_s": time.monotonic() - started,
            "_peak_rss_kb": status_kb("VmHWM")}


def counter(counts, name, function):
    """``function``, counting its calls under ``name`` in ``counts``."""
    def counted(*args, **kwargs):
        counts[name] = counts.get(name, 0) + 1
        return function(*args, **kwargs)

    return counted


# --- SSLContext axis --------------------------------------------------------------------------


@scenario
def context_stdlib(params):
    """The standard library's context, as botocore makes it."""
    return {"calls": calls(lambda: client(params["urls"]["calls"], verify=params["bundle"]), 4)}


@scenario
def context_pinning_subclass(params):
    """Certificate pinning by a subclass overriding wrap_socket (and wrap_bio), put where botocore
    makes its contexts: a wrong pin refuses every call, the right one lets them through."""
    import botocore.httpsession

    state = {"pin": None, "wrap_socket": 0}

    class Pinning(ssl.SSLContext):
        def wrap_socket(self, *args, **kwargs):
            state["wrap_socket"] += 1
            wrapped = super().wrap_socket(*args, **kwargs)
            der = wrapped.getpeercert(binary_form=True)
            if hashlib.sha256(der).hexdigest() != state["pin"]:
                wrapped.close()
                raise ssl.SSLError("certificate pin mismatch")
            return wrapped

        def wrap_bio(self, *args, **kwargs):
            state["wrap_bio"] = state.get("wrap_bio", 0) + 1
            return super().wrap_bio(*args, **kwargs)

    botocore.httpsession.SSLContext = Pinning
    results = {}
    for label, pin in (("wrong_pin", "0" * 64), ("right_pin", params["leaf_sha256"])):
        state.update(pin=pin, wrap_socket=0)
        results[label] = calls(lambda label=label: client(params["urls"][label], verify=params["bundle"]), 3)
        results[label]["wrap_socket"] = state["wrap_socket"]
    return results


@scenario
def context_truststore(params):
    """truststore (PyPI) injected before boto3 is imported (botocore takes its SSLContext class
    then), a client made, truststore extracted, another client made: both clients call."""
    import truststore

    truststore.inject_into_ssl()
    import boto3  # noqa: F401

    injected = client(params["urls"]["injected"], verify=params["bundle"])
    truststore.extract_from_ssl()
    return {"injected": calls(lambda: injected, 3),
            "extracted": calls(lambda: client(params["urls"]["extracted"], verify=params["bundle"]), 3)}


@scenario
def context_instance_attributes(params):
    """Other code sets attributes on each context botocore makes (a tracer's wrap_socket on the
    instance; a plain attribute): the instance's wrap_socket runs for every connection."""
    import botocore.httpsession

    original = botocore.httpsession.create_urllib3_context
    state = {"wrap": False}
    counts = {}

    def create_urllib3_context(*args, **kwargs):
        context = original(*args, **kwargs)
        context.tracing_tag = "traced"
        if state["wrap"]:
            context.wrap_socket = counter(counts, "wrap_socket", context.wrap_socket)
        return context

    botocore.httpsession.create_urllib3_context = create_urllib3_context
    results = {}
    for label, wrap in (("instance_wrap_socket", True), ("plain_attribute", False)):
        state["wrap"] = wrap
        counts.clear()
        results[label] = calls(lambda label=label: client(params["urls"][label], verify=params["bundle"]), 3)
        results[label]["wrap_socket"] = counts.get("wrap_socket", 0)
    return results


# --- verify axis ------------------------------------------------------------------------------


@scenario
def verify(params):
    """Every way a function says what to trust."""
    urls, bundle = params["urls"], params["bundle"]
    # The full flavor's default bundle holds the twin's CA (sites.py); the runtime's (hook flavor)
    # does not: each flavor's twins agree on ok, or on SSLError.
    results = {"default_bundle": calls(lambda: client(urls["default_bundle"]), 3)}
    os.environ["AWS_CA_BUNDLE"] = bundle
    try:
        results["aws_ca_bundle"] = calls(lambda: client(urls["aws_ca_bundle"]), 3)
    finally:
        del os.environ["AWS_CA_BUNDLE"]
    # A bundle rewritten in place while its client lives: first the wrong CA, then the right one
    # (a refresh), then the wrong one again.
    rewritten = os.path.join(params["dir"], "rewritten.pem")
    shutil.copyfile(params["other_bundle"], rewritten)

    def rewrite(index):
        if index in (1, 3):
            with open(rewritten, "wb") as target, open(bundle if index == 1 else params["other_bundle"],
                                                        "rb") as source:
                target.write(source.read())

    results["rewritten"] = calls(lambda: client(urls["rewritten"], verify=rewritten), 5, between=rewrite)
    results["verify_false"] = calls(lambda: client(urls["verify_false"], verify=False), 3)
    custom = os.path.join(params["dir"], "custom.pem")
    shutil.copyfile(bundle, custom)
    results["custom_path"] = calls(lambda: client(urls["custom_path"], verify=custom), 3)
    return results


# --- Loader axis ------------------------------------------------------------------------------

# Not load_data or _potential_locations: with either replaced, prepared.py steps aside for every
# method (its _CHECKED_METHODS), and the case would no longer exercise the prepared data.
LOADER_METHODS = ("list_available_services", "list_api_versions", "load_data_with_path",
                  "load_service_model", "determine_latest_version")


@scenario
def loader(params):
    """Loader methods wrapped on the class before boto3 is imported (logging, tracing), a Loader
    subclass registered as a session's data loader, a service added through AWS_DATA_PATH (set
    in the environment): how often each wrapper runs, and the calls."""
    import botocore.loaders

    counts = {}
    for name in LOADER_METHODS:
        setattr(botocore.loaders.Loader, name, counter(counts, name, getattr(botocore.loaders.Loader, name)))
    import boto3
    import botocore.session

    results = {}
    results["wrapped"] = calls(lambda: client(params["urls"]["wrapped"], verify=params["bundle"]), 2)
    client(params["urls"]["wrapped"], verify=params["bundle"], service="s3")
    results["wrapped"]["counts"] = dict(counts)

    subclass_counts = {}

    class Logging(botocore.loaders.Loader):
        def load_data_with_path(self, name):
            subclass_counts["load_data_with_path"] = subclass_counts.get("load_data_with_path", 0) + 1
            return super().load_data_with_path(name)

        def list_available_services(self, type_name):
            subclass_counts["list_available_services"] = subclass_counts.get("list_available_services", 0) + 1
            return super().list_available_services(type_name)

    core = botocore.session.get_session()
    core.register_component("data_loader", Logging())
    results["subclass"] = calls(lambda: client(params["urls"]["subclass"], verify=params["bundle"],
                                               session=boto3.session.Session(botocore_session=core)), 2)
    results["subclass"]["counts"] = subclass_counts
    results["data_path"] = calls(lambda: client(params["urls"]["data_path"], verify=params["bundle"],
                                                service="mydynamodb"), 2)
    results["data_path"]["listed"] = "mydynamodb" in boto3.session.Session().get_available_services()
    return results


def write_service_copy(botocore_data, root, service, version, new_name):
    """``root/new_name/version/service-2.json``: ``service``'s model (the test venv's botocore) as a
    new service (what a function adds through AWS_DATA_PATH)."""
    import gzip

    source = os.path.join(botocore_data, service, version, "service-2.json.gz")
    target = os.path.join(root, new_name, version)
    os.makedirs(target)
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        model = json.load(handle)
    with open(os.path.join(target, "service-2.json"), "w") as handle:
        json.dump(model, handle)


# --- proxies axis -----------------------------------------------------------------------------


@scenario
def proxies(params):
    """An HTTP CONNECT proxy, an https:// proxy (its CA from the verify bundle, or from
    proxy_ca_bundle), and NO_PROXY naming the endpoint (the proxy in HTTPS_PROXY never used)."""
    from botocore.config import Config

    urls, proxy_urls, bundle = params["urls"], params["proxies"], params["bundle"]
    results = {}
    for label, proxies_config in (("connect_proxy", None), ("https_proxy", None),
                                  ("https_proxy_ca", {"proxy_ca_bundle": bundle})):
        config = Config(proxies={"https": proxy_urls[label]}, proxies_config=proxies_config)
        results[label] = calls(lambda label=label, config=config: client(urls[label], verify=bundle, config=config), 3)
    os.environ.update(HTTPS_PROXY=proxy_urls["no_proxy"], NO_PROXY="localhost")
    try:
        results["no_proxy"] = calls(lambda: client(urls["no_proxy"], verify=bundle), 3)
    finally:
        del os.environ["HTTPS_PROXY"], os.environ["NO_PROXY"]
    return results


# --- client certificates axis -----------------------------------------------------------------


@scenario
def client_certs(params):
    """Config(client_cert=(cert, key)) files rotated in place while the client lives (both files),
    and the certificate rotated before its key (a key that does not match it)."""
    from botocore.config import Config

    results = {}
    for label, rotate in (("rotation", ("crt", "key")), ("key_mismatch", ("crt",))):
        files = {part: os.path.join(params["dir"], "%s.%s" % (label, part)) for part in ("crt", "key")}
        for part in files:
            shutil.copyfile(params["clients"]["client_a"][part], files[part])

        def between(index, files=files, rotate=rotate):
            if index == 1:
                for part in rotate:
                    shutil.copyfile(params["clients"]["client_b"][part], files[part])

        config = Config(client_cert=(files["crt"], files["key"]))
        results[label] = calls(lambda label=label, config=config: client(params["urls"][label], verify=params["bundle"],
                                                                          config=config), 4, between=between)
    return results


# --- middleboxes axis -------------------------------------------------------------------------


@scenario
def middleboxes(params):
    """A path that silently drops, or resets, every ClientHello carrying a PSK; a server that
    refuses every ticket; a leaf and an intermediate that expire while their clients live."""
    from botocore.config import Config

    urls, bundle = params["urls"], params["bundle"]
    results = {}
    # An expiring endpoint's chain is made at its first connection, valid for at most expiry_s from
    # then: from before the end of that first call.
    expiring = {label: client(urls[label], verify=bundle) for label in ("expiring_leaf", "expiring_intermediate")}
    before = {label: attempt(made.list_tables) for label, made in expiring.items()}
    made_by = time.time()
    quick = Config(connect_timeout=1, read_timeout=2, retries={"max_attempts": 3, "mode": "standard"})
    for label, count in (("psk_dropped", 8), ("psk_reset", 8), ("tickets_refused", 8)):
        results[label] = calls(lambda label=label: client(urls[label], verify=bundle, config=quick), count)
    time.sleep(max(0.0, made_by + params["expiry_s"] + 1.0 - time.time()))
    for label, made in expiring.items():
        after = attempt(made.list_tables)
        results[label] = {"calls": [before[label][0], after[0]], "_details": [before[label][1], after[1]]}
    return results


# --- gc axis ----------------------------------------------------------------------------------


def status_kb(field):
    """A memory field of /proc/self/status (VmRSS, VmHWM: the peak), in kB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


@scenario
def gc_churn(params):
    """Clients made, used on two connections (the second may resume) and dropped, with the cycle
    collector disabled (a cold-start tuning) or the heap frozen after init: the contexts still
    alive after, and the RSS growth, as stock's."""
    import gc

    import boto3

    shared = boto3.session.Session()  # models loaded once: what each client adds is its own
    client(params["urls"]["churn"], verify=params["bundle"], session=shared).list_tables()  # warm
    if params["gc"] == "disabled":
        gc.disable()
    else:
        gc.freeze()
    before = status_kb("VmRSS")
    outcomes, contexts = churn_clients(params, shared)
    if params["gc"] != "disabled":
        gc.collect()  # frozen: whatever the collector can free is freed, in both twins
    growth = status_kb("VmRSS") - before
    return {"churn": churn_result(outcomes, contexts, growth)}


def churn_clients(params, shared):
    """``params["clients"]`` clients of the churn endpoint made in ``shared``, each called twice and
    dropped: the calls' outcomes counted ({outcome: count}), and a weak reference to each dropped
    client's SSLContext, split by whether both its calls succeeded at botocore's first attempt
    (``first_try``) or not (``retried``: a retry, or a failure).

    Why the split.  botocore's retry keeps the failed attempt's exception in a reference cycle
    (the exception's traceback holds ``Endpoint._do_get_response``'s frame, whose ``f_back``,
    ``_get_response``'s, holds the exception in a local), and the frames in it hold the client
    (``self``, the bound method being called): with the collector disabled, a client one of whose
    calls was retried stays alive, its context too, in stock as in the layer, until the next
    collection.  The churn endpoint closes each connection after its response (the second call
    opens a new one, which may resume); until the twin's front passed that close on with the
    response (wire._relay), a second call that reused the connection before the close reached
    the client met it (RemoteDisconnected, or SSLEOFError on the send) and was retried: 0 to 9
    clients of 30 a run in either twin, and a count of every live SSLContext varied by that much
    (stock 2 to 6, the layer 2 to 5, 2026-11-28).  Since, none in 50 runs; a retry under load (a
    timeout) would still keep its client.  A first-try client's context is held by nothing of
    botocore's once the client is dropped: whether it is still alive is exactly what the check
    is about (issue 34 item 3: a cycle through the context kept all 30)."""
    import weakref

    outcomes, contexts = {}, {"first_try": [], "retried": []}
    for _ in range(params["clients"]):
        made = client(params["urls"]["churn"], verify=params["bundle"], session=shared)
        first_try = True
        for _ in range(2):
            answers = []
            outcome = attempt(lambda made=made, answers=answers: answers.append(made.list_tables()))[0]
            first_try = first_try and outcome == "ok" and answers[0]["ResponseMetadata"]["RetryAttempts"] == 0
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        # botocore's own context for this client (one per client; tests/hook's churn reads it so).
        context = made._endpoint.http_session._manager.connection_pool_kw["ssl_context"]
        contexts["first_try" if first_try else "retried"].append(weakref.ref(context))
        del made, context  # nothing of this frame holds the client once it is dropped
    return outcomes, contexts


def churn_result(outcomes, contexts, growth_kb):
    """The churn check's result: the calls' outcomes, ``contexts_alive`` (the dropped first-try
    clients' contexts still alive: churn_clients says why only theirs) and its details for a
    failure message: how many clients were first-try, the retried ones' contexts still alive, and
    every SSLContext in ``gc.get_objects()`` (what the check counted until 2026-11-28)."""
    import gc

    alive = {kind: sum(1 for ref in refs if ref() is not None) for kind, refs in contexts.items()}
    detail = {"first_try_clients": len(contexts["first_try"]), "retried_alive": alive["retried"],
              "every_context_alive": sum(1 for thing in gc.get_objects() if isinstance(thing, ssl.SSLContext))}
    return {"calls": outcomes, "contexts_alive": alive["first_try"], "_contexts_alive_detail": detail,
            "_rss_growth_kb": growth_kb}


@scenario
def gc_init(params):
    """The cyclic GC's settings at init (AWS_PYTHON_KEEPALIVE_GC_INIT, gcinit.py): the function's own
    settings made before boto3's import (``params["user"]``: ``thresholds``, ``disabled`` or none),
    then a first client and its calls, then 30 clients made, used and dropped with the collector as
    the function left it: the thresholds and the collector's state after the first client, the
    SSLContexts alive and the RSS growth after, as stock's."""
    import gc

    if params["user"] == "thresholds":
        gc.set_threshold(1234, 11, 12)
    elif params["user"] == "disabled":
        gc.disable()
    import boto3

    shared = boto3.session.Session()
    first = calls(lambda: client(params["urls"]["first"], verify=params["bundle"], session=shared), 2)
    first["threshold"] = list(gc.get_threshold())
    first["enabled"] = gc.isenabled()
    before = status_kb("VmRSS")
    outcomes, contexts = churn_clients(params, shared)
    if gc.isenabled():
        gc.collect()
    growth = status_kb("VmRSS") - before
    # What introspection sees of the init (checked by a case of its own, test_gc.py): the session
    # made before the first client, among gc.get_objects() (what objgraph, pympler and leak hunts
    # walk) -- gc.freeze() moves it out of every generation that call lists.  (The churn's count
    # is of its own clients' contexts, made after the first client: the freeze does not affect it.)
    seen = any(thing is shared for thing in gc.get_objects())
    return {"first": first,
            "churn": churn_result(outcomes, contexts, growth),
            "introspection": {"init_session_in_gc_get_objects": seen}}


# --- models axis ------------------------------------------------------------------------------


def _fingerprint(tree):
    """sha256 of a loaded model as JSON, keys in their order: equal trees in equal order only."""
    return hashlib.sha256(json.dumps(tree).encode()).hexdigest()[:16]


@scenario
def models(params):
    """Clients of the services whose latest model and endpoint rule set the build pre-parses
    (prepare_data.SERVICES: DynamoDB, S3, Lambda): each model and rule set as loaded (fingerprint
    of the tree, in order), a call that the model refuses before sending (a missing required
    parameter), calls the endpoint answers (the DynamoDB-shaped server: S3's and Lambda's get its
    errors), and an S3 upload through a TransferConfig (multipart: 6 MB, 5 MB parts)."""
    import io

    import boto3
    from boto3.s3.transfer import TransferConfig

    results = {}
    for service, send, refused in (
            ("dynamodb", lambda made: made.put_item(TableName="twin", Item={"k": {"S": "v"}}),
             lambda made: made.put_item(Item={"k": {"S": "v"}})),
            ("s3", lambda made: made.put_object(Bucket="twin", Key="k", Body=b"x"),
             lambda made: made.put_object(Bucket="twin")),
            ("lambda", lambda made: made.invoke(FunctionName="twin", Payload=b"{}"),
             lambda made: made.invoke(Payload=b"{}"))):
        session = boto3.session.Session()
        made = client(params["urls"][service], verify=params["bundle"], session=session, service=service)
        loader = session._session.get_component("data_loader")
        outcome = {"model": _fingerprint(made.meta.service_model._service_description),
                   "rules": _fingerprint(loader.load_service_model(service, "endpoint-rule-set-1")),
                   "refused": attempt(lambda made=made, refused=refused: refused(made)),
                   "sent": None}
        # The sent call's error text, for a failure message (seen: an SSLError on S3's, stock's or the layer's,
        # at load ~30, while the endpoint closed under PutObject's body: wire.py's do_PUT now reads it).
        outcome["sent"], outcome["_sent_detail"] = attempt(lambda made=made, send=send: send(made))
        if service == "s3":
            transfer = TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024,
                                      max_concurrency=2)
            body = io.BytesIO(b"x" * (6 * 1024 * 1024))
            outcome["upload"] = attempt(lambda made=made, body=body, transfer=transfer: made.upload_fileobj(
                body, "twin", "big", Config=transfer))[0]
        results[service] = outcome
    return results


# --- processes axis ---------------------------------------------------------------------------


def spawned_calls(url, bundle, queue):
    """In a spawned child: two calls on a new client; their outcomes back through ``queue``."""
    import sys

    made = client(url, verify=bundle)
    queue.put(([attempt(made.list_tables)[0] for _ in range(2)], "aws_keepalive" in sys.modules))


@scenario
def processes(params):
    """fork: a client used by the parent (two connections), then by a forked child (two), then by
    the parent again; spawn: a multiprocessing spawn child's own client; the parent's calls around."""
    import multiprocessing

    url, bundle = params["urls"]["fork"], params["bundle"]
    made = client(url, verify=bundle)
    outcomes = [attempt(made.list_tables)[0] for _ in range(2)]
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(reader)
            os.write(writer, json.dumps([attempt(made.list_tables)[0] for _ in range(2)]).encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        outcomes += json.loads(pipe.read() or "[]")
    os.waitpid(pid, 0)
    outcomes.append(attempt(made.list_tables)[0])
    spawn = multiprocessing.get_context("spawn")
    queue = spawn.Queue()
    child = spawn.Process(target=spawned_calls, args=(params["urls"]["spawn"], bundle, queue))
    child.start()
    spawned, layer_in_child = queue.get(timeout=60)
    child.join(timeout=30)
    return {"fork": {"calls": outcomes},
            "spawn": {"calls": spawned, "exit": child.exitcode, "_layer_in_child": layer_in_child}}


@scenario
def snapstart(params):
    """SnapStart (AWS_LAMBDA_INITIALIZATION_TYPE=snap-start): two calls during init, then the
    runtime's hooks as awslambdaric runs them (before-snapshot in reverse, after-restore in order),
    then two calls in the restored environment."""
    from snapshot_restore_py import get_after_restore, get_before_snapshot

    made = client(params["urls"]["restore"], verify=params["bundle"])
    outcomes = [attempt(made.list_tables)[0] for _ in range(2)]
    before_snapshot = get_before_snapshot()
    while before_snapshot:
        function, args, kwargs = before_snapshot.pop()
        function(*args, **kwargs)
    for function, args, kwargs in get_after_restore():
        function(*args, **kwargs)
    outcomes += [attempt(made.list_tables)[0] for _ in range(2)]
    return {"restore": {"calls": outcomes}}


# --- aiobotocore ------------------------------------------------------------------------------


@scenario
def aio(params):
    """aiobotocore (the function's own copy, with the botocore it pins): the standard library's
    context, and a subclass overriding wrap_bio (asyncio's TLS goes through wrap_bio)."""
    import asyncio

    import botocore.httpsession
    from aiobotocore.config import AioConfig
    from aiobotocore.session import get_session

    stdlib = botocore.httpsession.SSLContext
    counts = {}

    class Counting(stdlib):
        def wrap_bio(self, *args, **kwargs):
            counts["wrap_bio"] = counts.get("wrap_bio", 0) + 1
            return super().wrap_bio(*args, **kwargs)

    async def three_calls(url):
        config = AioConfig(retries={"max_attempts": 2, "mode": "standard"}, connect_timeout=3, read_timeout=10)
        async with get_session().create_client("dynamodb", region_name="us-east-1", endpoint_url=url,
                                               verify=params["bundle"], config=config) as made:
            outcomes = []
            for _ in range(3):
                try:
                    await made.list_tables()
                    outcomes.append("ok")
                except Exception as error:
                    outcomes.append(type(error).__name__)
            return outcomes

    results = {"stdlib": {"calls": asyncio.run(three_calls(params["urls"]["stdlib"]))}}
    botocore.httpsession.SSLContext = Counting
    try:
        results["wrap_bio_subclass"] = {"calls": asyncio.run(three_calls(params["urls"]["wrap_bio_subclass"])),
                                        "wrap_bio": counts.get("wrap_bio", 0)}
    finally:
        botocore.httpsession.SSLContext = stdlib
    return results


@scenario
def sdk_patches(params):
    """What the full layer's SDK patches (layer/patches/) made lazy, used: tests/build/sdk_probe.py's
    checks (docstrings, both ServiceDocumenters, boto3.compat's names, TransferConfig, the S3 transfer
    methods, timestamp parsing) and a threaded multipart S3 upload and download with a TransferConfig,
    against a moto server this process starts on loopback (and stops, by its pid) for itself."""
    import importlib.util
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([params["moto"], "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        spec = importlib.util.spec_from_file_location("sdk_probe", params["probe"])
        sdk_probe = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sdk_probe)
        found = sdk_probe.main("http://127.0.0.1:%d" % port)
    finally:
        server.terminate()
        server.wait(timeout=20)
    # Which tree it was and what `import boto3` imported differ by design: details, not compared.
    # (module attributes: the patched tree's modules also list what the patches add; test_patched_sdk
    # compares stock's names.)
    return {"sdk": {("_" + key if key in ("patched", "imported_at_first_client", "compiled_at_first_client",
                                          "module attributes")
                     else key): value
                    for key, value in found.items()}}


@scenario
def loader_after_import(params):
    """Loader methods wrapped after botocore was imported (the layer already patched it): on one
    session's Loader instance, then on the class with functools.wraps; and AWS_DATA_PATH naming a
    copy of DynamoDB's own model with one operation added (a service override, not a new
    service): how often each wrapper runs, the calls, and whether the client has the operation."""
    import functools
    import gzip

    import boto3
    import botocore
    import botocore.loaders
    import botocore.session

    data = os.path.join(os.path.dirname(botocore.__file__), "data")
    models = os.path.join(params["dir"], "override")
    with gzip.open(os.path.join(data, "dynamodb", "2012-08-10", "service-2.json.gz"), "rt") as handle:
        model = json.load(handle)
    model["operations"]["TwinOnly"] = dict(model["operations"]["ListTables"], name="TwinOnly")
    os.makedirs(os.path.join(models, "dynamodb", "2012-08-10"))
    with open(os.path.join(models, "dynamodb", "2012-08-10", "service-2.json"), "w") as handle:
        json.dump(model, handle)
    results = {}
    counts = {}
    core = botocore.session.get_session()
    loader = core.get_component("data_loader")
    for name in LOADER_METHODS:
        setattr(loader, name, counter(counts, name, getattr(loader, name)))
    shared = boto3.session.Session(botocore_session=core)
    results["instance"] = calls(lambda: client(params["urls"]["instance"], verify=params["bundle"],
                                               session=shared), 2)
    client(params["urls"]["instance"], verify=params["bundle"], service="s3", session=shared)
    results["instance"]["counts"] = dict(counts)
    os.environ["AWS_DATA_PATH"] = models
    made = {}
    results["override"] = calls(lambda: made.setdefault("c", client(params["urls"]["override"],
                                                                     verify=params["bundle"])), 1)
    results["override"]["ops"] = "c" in made and "TwinOnly" in made["c"].meta.service_model.operation_names
    del os.environ["AWS_DATA_PATH"]
    counts2 = {}
    for name in LOADER_METHODS:
        original = getattr(botocore.loaders.Loader, name)
        setattr(botocore.loaders.Loader, name, functools.wraps(original)(counter(counts2, name, original)))
    results["after"] = calls(lambda: client(params["urls"]["after"], verify=params["bundle"]), 2)
    client(params["urls"]["after"], verify=params["bundle"], service="s3")
    client(params["urls"]["after"], verify=params["bundle"], service="lambda")
    results["after"]["counts"] = dict(counts2)
    return results


# --- the harness itself -----------------------------------------------------------------------


@scenario
def hang(params):
    """Never returns in time: a forked child (holding this interpreter's stdout and stderr) and this
    interpreter sleep past the case's timeout; the child's pid goes to ``params["pid_file"]``.
    The harness's own test (test_harness.py): a timed-out twin is stopped with its children."""
    pid = os.fork()
    if pid == 0:
        time.sleep(params["sleep_s"])
        os._exit(0)
    with open(params["pid_file"], "w") as pid_file:
        pid_file.write(str(pid))
    time.sleep(params["sleep_s"])
    return {}
