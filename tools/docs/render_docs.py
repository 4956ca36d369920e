"""Render the measured numbers in README.md and docs/ from the JSON the benchmarks wrote (make docs).

Numbers copied by hand drift: the wheel's size was 18 KB stale until a review caught it. So every
table of measured numbers lives between two marker comments,

    <!-- rendered from docs/data/startup.json by make docs (view startup) -->
    ...
    <!-- end -->

and is written by this script, never by hand. Two steps:

1. **take**: each benchmark writes its rows as JSON under build/ (bench/rows.py, which records the
   machine, its load, the interpreter and the date). build/ is not committed, so the file is copied
   to ``docs/data/<name>.json``, which is: when build/ holds a file measured *later* than the
   committed copy (``measured_on.finished``), it replaces it. An older build/ file never overwrites
   newer committed data (a stale checkout's build/ after a pull).
2. **render**: every marked block in README.md and docs/*.md is replaced by its view of docs/data/.
   A view is a function of the data files it names (VIEWS below); each table ends with the line
   saying where, when and on what its rows were measured.

``--check`` renders in memory and fails if a file would change (tests/build/test_docs_numbers.py does
the same): a number edited by hand inside a block, or data changed without ``make docs``.

A table that no command here re-measured stays outside any block, as text that names its source and
date; never type numbers into docs/data/.
"""

import argparse
import importlib
import json
import os
import re
import shutil
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(REPO, "docs", "data")

# docs/data/<name>.json <- build/<file>, and the command that writes it.
SOURCES = {
    "demo": ("demo.json", "make demo"),  # its plot, build/demo.png, goes to docs/ with it (PLOTS)
    "startup": ("startup.json", "make bench"),
    "bench-connect": ("bench-connect.json", "make bench-connect"),
    "bench-tls-resume": ("bench-tls-resume.json", "make bench-tls-resume"),
    "bench-reuse": ("bench-reuse.json", "make bench-reuse"),
    "coldstart": ("coldstart.json", "make coldstart"),
    "coldstart-unknown": ("coldstart-unknown.json", "make coldstart-unknown"),
    "coldstart-parts": ("coldstart-parts.json", "make coldstart-parts"),
    "coldstart-gc": ("coldstart-gc.json", "make coldstart-gc"),
    "soak-memory": ("soak_memory.json", "make soak-memory"),
    "bench-client": ("bench-client.json", "make bench-client"),
    "layer": ("layer.json", "make layer"),
    "layer-hook": ("layer-hook.json", "make layer FLAVOR=hook"),
    "wheel": ("wheel.json", "make wheel"),
    "demo-lmi": ("demo-lmi.json", "make demo-lmi"),
    "measure-learn": ("measure-learn.json", "make measure-learn"),
    "bench-aio": ("bench-aio-patch.json", "make bench-aio"),
    "bench-children": ("bench-children.json", "make bench-children"),
    "soak": ("soak.json", "make soak"),
    "bench-throughput": ("bench-throughput.json", "make bench-throughput"),
    "demo-durable": ("demo-durable.json", "make demo-durable"),
    "longcall": ("longcall.json", "make demo-longcall"),
    "sdk-patches": ("sdk-patches.json", "make bench-patches"),
    "longcall-350": ("longcall-350.json", "make demo-longcall LONGCALL_NAT=350"),
}

# Plots a run draws beside its JSON: taken with it, so that docs/ shows the run its table shows.
PLOTS = {"demo": ("demo.png",), "demo-lmi": ("demo-lmi.png",), "soak": ("soak.png",),
         "demo-durable": ("demo-durable.png",)}

# At the start of a line (an indented example, as in docs/numbers.md, is not a block).
MARKER = re.compile(r"^<!-- rendered from (?P<sources>[^>]*?) by make docs \(view (?P<view>[\w-]+)\) -->\n"
                    r"(?P<body>.*?)^<!-- end -->", re.S | re.M)


# --- data ---------------------------------------------------------------------------------------

def load(name, data_dir=DATA):
    with open(os.path.join(data_dir, name + ".json")) as handle:
        return json.load(handle)


# Runs that write the same build/ file as the one docs/ shows but are another experiment: not taken.
def _trimmed(data):
    return "a trimmed build (SERVICES=...)" if data["rows"][0].get("services") else None


def _aio_soak(data):
    return "the aiobotocore variant (AIO=1)" if any("aio" in row["configuration"] for row in data["rows"]) else None


def _full_cpu_throughput(data):
    return "a full-CPU run (MEMORY_MB=0)" if not data.get("memory_mb") else None


def _runtime_release(data):
    return next(row["botocore"] for row in data["rows"] if row["variant"] == "runtime_copy")


# make coldstart measures a runtime release the hook flavor knows, make coldstart-unknown one it does
# not (hook_prepared: the releases the measured hook zip prepares; older files do not say).
def _unknown_release(data):
    known = data.get("hook_prepared")
    return ("a run whose runtime copy is a release the hook flavor does not know (make coldstart-unknown)"
            if known is not None and _runtime_release(data) not in known else None)


def _known_release(data):
    return ("a run whose runtime copy is a release the hook flavor knows (make coldstart)"
            if _runtime_release(data) in data.get("hook_prepared", [_runtime_release(data)]) else None)


NOT_TAKEN = {"layer": _trimmed, "soak": _aio_soak, "bench-throughput": _full_cpu_throughput,
             "coldstart": _unknown_release, "coldstart-unknown": _known_release}


def take(build_dir, data_dir=DATA):
    """Copy each build/ JSON measured later than its docs/data copy; returns the names taken.

    Not taken: a file without ``measured_on`` (written before bench/rows.py recorded it), and the
    variants NOT_TAKEN names (``make layer SERVICES=...`` writes the same build/layer.json as the
    layer users attach; ``make soak AIO=1`` the same build/soak.json as the botocore soak).
    """
    taken = []
    for name, (filename, _) in SOURCES.items():
        source = os.path.join(build_dir, filename)
        if not os.path.exists(source):
            continue
        with open(source) as handle:
            fresh = json.load(handle)
        if "measured_on" not in fresh:
            print("render_docs: %s predates bench/rows.py's measured_on: not taken" % source)
            continue
        variant = NOT_TAKEN[name](fresh) if name in NOT_TAKEN else None
        if variant:
            print("render_docs: %s is %s: not taken" % (source, variant))
            continue
        target = os.path.join(data_dir, name + ".json")
        if os.path.exists(target):
            with open(target) as handle:
                committed = json.load(handle)
            if fresh["measured_on"]["finished"] <= committed["measured_on"]["finished"]:
                continue
        os.makedirs(data_dir, exist_ok=True)
        shutil.copyfile(source, target)
        for plot in PLOTS.get(name, ()):
            if os.path.exists(os.path.join(build_dir, plot)):
                shutil.copyfile(os.path.join(build_dir, plot), os.path.join(os.path.dirname(data_dir), plot))
        taken.append(name)
        print("render_docs: took %s -> %s" % (source, os.path.relpath(target, REPO)))
    return taken


# --- formatting helpers ---------------------------------------------------------------------------

def span(values, fmt="%.0f"):
    """``lo–hi`` of values formatted with fmt (one value when they format alike)."""
    low, high = fmt % min(values), fmt % max(values)
    return low if low == high else "%s–%s" % (low, high)


def provenance(name, data, link_prefix="data/"):
    """One line: when, on what machine at what load, by which interpreter and command."""
    run = data["measured_on"]
    day, start = run["started"][:10], run["started"][11:16]
    end = run["finished"][11:16]
    interpreters = sorted({row["python_version"] for row in data["rows"] if "python_version" in row})
    python = "CPython " + (", ".join(interpreters) if interpreters else run["python"])
    return ("%s %s–%s UTC on `%s` (%d × %s), load %.1f → %.1f, %s: `%s` "
            "([%s.json](%s%s.json))" % (
                day, start, end, run["host"], run["nproc"], run["cpu_model"], run["load_avg_start"][0],
                run["load_avg_end"][0], python, SOURCES[name][1], name, link_prefix, name))


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def megabytes(size):
    return "%.2f MB" % (size / 1e6) if size < 1e6 else "%.1f MB" % (size / 1e6)


# --- views: one per kind of block -----------------------------------------------------------------

def view_startup(data):
    """docs/coldstart.md, "The hook switched off": µs over the comment-only .pth, per CPython."""
    startup = data["startup"]
    rows = [(row["python"], "%.0f µs" % row["pth_cost_us"], "%.0f µs" % row["floor_us"],
             "**%.0f µs**" % row["hook_off_us"], "%.0f µs" % row["hook_on_us"], "%.0f µs" % row["patch_us"])
            for row in startup["rows"]]
    return table(("CPython", "any `.pth` (site's own cost)", "floor: `import os` `.pth`", "hook, switch off",
                  "hook, switch on", "patch at botocore import"), rows)


def view_connect(data):
    """docs/trust.md: one new HTTPS connection per memory size, and where a first call goes."""
    connect = data["bench-connect"]
    by = {(row["memory_mb"], row["config"]): row for row in connect["rows"]}
    sizes = sorted({row["memory_mb"] for row in connect["rows"]})
    first = table(("memory MB", "one-cert floor", "stock", "layer", "stock / floor", "layer / floor"), [
        (mb, "%.1f ms" % by[mb, "floor"]["connection_ms"], "%.1f ms" % by[mb, "stock"]["connection_ms"],
         "%.1f ms" % by[mb, "layer"]["connection_ms"], "%.1f" % by[mb, "stock"]["x_floor"],
         "%.2f" % by[mb, "layer"]["x_floor"]) for mb in sizes])
    second = table(("memory MB", "import", "client", "first call (stock / layer)", "of it: bundle",
                    "two more clients (stock / layer)"), [
        (mb, "%.0f ms" % by[mb, "stock"]["import_ms"], "%.0f ms" % by[mb, "stock"]["client_ms"],
         "%.0f / %.0f ms" % (by[mb, "stock"]["call_ms"], by[mb, "layer"]["call_ms"]),
         "%.0f ms" % by[mb, "stock"]["bundle_ms"],
         "%.0f / %.0f ms" % (by[mb, "stock"]["more_clients_ms"], by[mb, "layer"]["more_clients_ms"]))
        for mb in sizes])
    runs = {len(by[mb, "floor"]["first_connection_all_ms"]) for mb in sizes}
    third = table(("memory MB", "one-cert floor", "stock", "layer, bundle it does not know",
                   "layer, known bundle (hashed directory)", "stock / floor", "layer / floor", "known / floor"), [
        (mb, *("%.1f ms" % by[mb, config]["first_connection_ms"]
               for config in ("floor", "stock", "layer", "layer-dir")),
         *("%.2f" % by[mb, config]["first_x_floor"] for config in ("stock", "layer", "layer-dir")))
        for mb in sizes])
    return ("Median new connection of %d certificates' bundle:\n\n" % connect["certificates"] + first +
            "\n\nWhere a process's first call goes (one process per row, stock's import and client):\n\n" +
            second + "\n\nThe first HTTPS connection of a fresh process (from the send's certificate setup to "
            "the TLS verdict; median of %s processes per cell):\n\n" % "/".join(str(n) for n in sorted(runs)) +
            third)


def view_tls_resume(data):
    """docs/trust.md, README: the replacement handshake, full vs TLS session resumed (resume.py)."""
    bench = data["bench-tls-resume"]
    rows = [(row["tls"].replace("TLSv", "TLS "), row["memory_mb"],
             "%.2f / %.2f ms" % (row["full_cpu_ms"], row["resumed_cpu_ms"]), "**%.2f**" % row["cpu_x"],
             "%.2f ms / %.2f" % (row["session_read_cpu_ms"], row["single_use_cpu_x"])
             if "session_read_cpu_ms" in row and row["resumed_resumed"] else "-",
             "%.1f / %.1f ms" % (row["full_wall_ms"], row["resumed_wall_ms"]), "%.2f" % row["wall_x"],
             "%d / %d" % (row["resumed_resumed"], bench["connections"])) for row in bench["rows"]]
    return ("Median new connection (`connect()`: TCP + TLS to the verdict) of a client whose server "
            "presents a %d-certificate RSA-2048 chain, full and resumed alternating in one process "
            "(%s); single-use tickets would add each resumed connection's own session read "
            "(its CPU, then (resumed + read) / full):\n\n" % (bench["chain_certificates"], bench["openssl"]) +
            table(("server", "memory MB", "client CPU full / resumed", "CPU resumed / full",
                   "single-use: read / CPU vs full", "wall full / resumed", "wall resumed / full",
                   "handshakes resumed"), rows))


def view_reuse(data):
    """docs/diagnostics.md: what stale-reuse detection adds to a request on a reused connection."""
    reuse = data["bench-reuse"]
    rows = [(row["measure"], "%.2f µs" % row["stock_us"], "%.2f µs" % row["layer_us"],
             "%+.2f µs" % row["diff_us"]) for row in reuse["rows"]]
    return table(("measure", "stock", "layer", "difference"), rows) + "\n\nbotocore %s." % reuse["botocore"]


COLDSTART_LABELS = {"runtime_copy": "runtime copy", "runtime_copy_again": "runtime copy, again",
                    "layer": "full layer, on", "hook_layer": "hook flavor, on"}


def coldstart_rows(data, name="coldstart", python=None):
    """{(memory MB, column): row} of one CPython in coldstart.json (``python``, or the first: 3.12 by
    default), or in ``name``'s file."""
    rows = data[name]["rows"]
    python = python or rows[0]["python"]
    return {(row["memory_mb"], row["variant"]): row for row in rows if row["python"] == python}


def coldstart_label(data, variant, name="coldstart"):
    return data[name].get("labels", {}).get(variant) or COLDSTART_LABELS[variant]


def coldstart_ratio(row, metric="total"):
    """A column's ratio over the runtime copy as the tables print it: "no difference" when it is within
    the run's noise (the equal columns' distance: bench/coldstart.py), else the median ratio with the
    per-round interquartile range."""
    over = row["total_over_runtime" if metric == "total" else "cpu_over_runtime"]
    if row.get(metric + "_difference") is False:
        return "no difference"
    spread = row.get(metric + "_ratio_iqr")
    if spread is None or row["variant"] == "runtime_copy":
        return "%.2f" % over
    return "%.2f (%.2f–%.2f)" % (over, spread[0], spread[1])


def view_coldstart(data):
    """docs/coldstart.md: the cold start to the first HTTPS response, by CPython, memory size and column."""
    coldstart = data["coldstart"]
    rows = []
    for row in coldstart["rows"]:
        rows.append((row["python"], row["memory_mb"], coldstart_label(data, row["variant"]), row["botocore"],
                     "%.0f" % row.get("startup_ms", 0), "%.0f" % row["import_ms"], "%.0f" % row["client_ms"],
                     "%.0f" % row["call_ms"], "**%.0f** [%.0f]" % (row["total_ms"], row["total_min_ms"]),
                     "**%s**" % coldstart_ratio(row), "%.0f" % row["cpu_ms"], coldstart_ratio(row, "cpu"),
                     "%.0f" % row["process_ms"], row.get("verified_with", "—")))
    header = ("CPython", "MB", "column", "botocore", "startup", "import", "client", "first call", "total [min]",
              "× runtime copy (wall)", "CPU", "× runtime copy (CPU)", "process", "verified with")
    noise = sorted({(row["python"], row["memory_mb"], row["noise"], row["noise_cpu"]) for row in coldstart["rows"]
                    if "noise" in row})
    depths = sorted({(row["python"], depth, words) for row in coldstart["rows"]
                     for depth in row.get("depth", ()) for words in row.get("stack_words", ())})
    return table(header, rows) + (
        "\n\nms, median of %d rounds (after %d warm-up) per cell; total = startup + import + client + first "
        "call (wall); CPU = the process's CPU time over the same span; × runtime copy: the ratio of the "
        "medians, in brackets the interquartile range of the per-round ratios (each round measures every "
        "column once, in a rotating order); **no difference**: within the noise of the run, the larger of "
        "the equal columns' (runtime copy, again) distance from 1.00 and half their per-round spread (wall / "
        "CPU: %s); process = fork to the answer, interpreter start and awslambdaric's import included; "
        "verified with: how the first call's pool checked the server (`file`: the bundle parsed per "
        "connection, stock; `directory`: the layer's hashed CA directory). Handler imported by awslambdaric "
        "at: %s. Page cache %s; trees %s; trust store %d certificates. CA directories: %s." % (
            coldstart["runs"], coldstart["warmup"],
            "; ".join("%s at %d MB ±%.2f / ±%.2f" % item for item in noise) or "not measured",
            "; ".join("CPython %s: frame depth %d, %d data-stack words" % item for item in depths) or "not recorded",
            coldstart["page_cache"], coldstart["read_only"], coldstart["trust_store_certificates"],
            "; ".join(coldstart["layer_ca"]) or "none"))


def lever_saved(before, after, noise):
    """What a lever changed, ms; "no difference" within the run's noise (bench/coldstart.py's rule)."""
    if abs(after / before - 1) <= noise:
        return "no difference (%+.0f ms)" % (after - before)
    return "%+.0f ms" % (after - before)


def view_coldstart_gc(data):
    """docs/coldstart.md, "The cyclic GC during init": each layer column with and without
    AWS_PYTHON_KEEPALIVE_GC_INIT=1 (make coldstart-gc), and what the switch saved."""
    gc_run = data["coldstart-gc"]
    columns = gc_run.get("columns", {})  # extra column -> the column it is measured like
    by = {(row["python"], row["memory_mb"], row["variant"]): row for row in gc_run["rows"]}
    rows = []
    for (python, mb, variant), row in sorted(by.items()):
        base = columns.get(variant)
        if base is None or (python, mb, base) not in by:
            continue
        plain = by[python, mb, base]
        noise = by.get((python, mb, "runtime_copy_again"), {})
        rows.append((python, mb, COLDSTART_LABELS[base], "%.0f → %.0f" % (plain["total_ms"], row["total_ms"]),
                     lever_saved(plain["total_ms"], row["total_ms"], noise.get("noise", 0)),
                     "%.0f → %.0f" % (plain["cpu_ms"], row["cpu_ms"]),
                     lever_saved(plain["cpu_ms"], row["cpu_ms"], noise.get("noise_cpu", 0)),
                     "%s → %s" % (coldstart_ratio(plain), coldstart_ratio(row)),
                     "%s → %s" % (coldstart_ratio(plain, "cpu"), coldstart_ratio(row, "cpu")),
                     "±%.2f / ±%.2f" % (noise.get("noise", 0), noise.get("noise_cpu", 0))))
    return table(("CPython", "MB", "column", "total ms", "GC_INIT saved (wall)", "CPU ms", "GC_INIT saved (CPU)",
                  "× runtime copy (wall)", "× runtime copy (CPU)", "noise (wall / CPU)"), rows) + (
        "\n\nMedians of %d rounds (after %d warm-up), every column in every round (`make coldstart-gc`: "
        "`make coldstart`'s columns plus each layer column with `AWS_PYTHON_KEEPALIVE_GC_INIT=1`); page cache "
        "%s." % (gc_run["runs"], gc_run["warmup"], gc_run["page_cache"]))


def view_soak_gc(data):
    """docs/coldstart.md, "The cyclic GC during init": make soak-memory's RSS per side."""
    rows = [(row["side"], row["clients"], "%.1f" % (row["rss_first_kb"] / 1024.0),
             "%.1f" % (row["rss_last_kb"] / 1024.0), "%+.1f %%" % row["rss_growth_pct"],
             "%d → %d" % (row["fds_first"], row["fds_last"]))
            for row in data["soak-memory"]["rows"]]
    return table(("side", "clients", "RSS first MiB", "RSS last MiB", "growth", "fds"), rows) + (
        "\n\nOne process per side, run at the same time; RSS after a full collection at each checkpoint "
        "(bench/soak_memory.py; `layer_gc_init`: the layer with `AWS_PYTHON_KEEPALIVE_GC_INIT=1`).")


def view_coldstart_saved(data):
    """docs/coldstart.md: per part, what each layer column saves (-) or adds (+) over the runtime copy."""
    rows = data["coldstart"]["rows"]
    runtime = {(r["python"], r["memory_mb"]): r for r in rows if r["variant"] == "runtime_copy"}
    cells = []
    for row in rows:
        if row["variant"] == "runtime_copy":
            continue
        base = runtime[row["python"], row["memory_mb"]]
        cells.append((row["python"], row["memory_mb"], coldstart_label(data, row["variant"]),
                      *("%+.0f ms" % (row.get(part + "_ms", 0) - base.get(part + "_ms", 0))
                        for part in ("startup", "import", "client", "call", "total", "cpu"))))
    return table(("CPython", "MB", "column", "startup", "import", "client", "first call", "total", "CPU"), cells) + (
        "\n\nMedians of the column minus the runtime copy's, per part (a minus is a saving); the runtime "
        "copy's second column shows what the same configuration moves by in this run.")


IMPORT_LABELS = {"runtime_copy": "runtime copy", "layer_off": "full layer, off", "layer_on": "full layer, on",
                 "hook_layer_on": "hook flavor, on", "layer_zipped_on": "full layer, zipped deps, on"}


def view_coldstart_imports(data):
    """docs/coldstart.md: the imports of a cold start per column, by package, and what the hook adds."""
    parts = data["coldstart-parts"]
    rows = parts["rows"]
    def added(row):
        if "modules_added" not in row:
            return "—"
        base = IMPORT_LABELS[row["modules_compared_with"]]
        if not row["modules_added"]:
            return "none more than %s" % base
        return "%d more than %s (%.1f ms): %s" % (len(row["modules_added"]), base, row["modules_added_self_ms"],
                                                 ", ".join("`%s`" % m for m in row["modules_added"]))

    first = table(("column", "botocore", "import", "`-X importtime` self, all modules",
                   "file system calls (failed)", "modules after the first call"), [
        (IMPORT_LABELS[row["column"]], row["botocore"], "%.0f ms" % row["import_ms"],
         "%.0f ms" % row["importtime_self_ms"], "%d (%d)" % (row["file_syscalls"], row["file_syscalls_failed"]),
         "%d; %s" % (row["modules_imported"], added(row)))
        for row in rows])
    heaviest = {}
    for row in rows:
        for package, ms in row["importtime_package_ms"].items():
            heaviest[package] = max(heaviest.get(package, 0.0), ms)
    top = sorted(heaviest, key=lambda package: -heaviest[package])[:12]
    second = table(("package", *(IMPORT_LABELS[row["column"]] for row in rows)), [
        ("`%s`" % package, *("%.0f" % row["importtime_package_ms"].get(package, 0.0) for row in rows))
        for package in top])
    return (first + "\n\n`-X importtime` self time per top-level package, ms (the 12 heaviest):\n\n" + second +
            "\n\nAt %d MB's CPU share, page cache %s, %d rounds: import and `-X importtime` totals are "
            "medians, the packages means; file system calls: one run per column under `strace -f -c` (warm "
            "cache, no quota)." % (rows[0]["memory_mb"], parts["page_cache"],
                                                                   parts["runs"]))


# Issue 36: the hook flavor's cold start at 128 MB at most this many times the runtime copy's, without
# changing a module of the runtime's SDK.
HOOK_FLAVOR_GOAL = 0.70


# Issue 22's goals: (what, data file, how to get the measured ratio, at most).
def coldstart_goals(data):
    by = coldstart_rows(data)
    connect = {(row["memory_mb"], row["config"]): row for row in data["bench-connect"]["rows"]}
    # The first connection of a process verifying against a bundle the layer knows (bench/connect.py's
    # layer-dir configuration, first_x_floor); data from before that configuration: its median new
    # connection with the layer.
    config = "layer-dir" if any(key[1] == "layer-dir" for key in connect) else "layer"
    goals = []
    for mb in (128, 512, 1769):
        row = connect.get((mb, config))
        if row is not None:
            first = "first_x_floor" in row
            goals.append(("%s HTTPS connection with the layer, × the one-certificate floor, %d MB" % (
                "a process's first" if first else "a new", mb), row["first_x_floor" if first else "x_floor"],
                1.2, "`make bench-connect`"))
    # Issue 36's goals, per CPython the run measured (3.12 and 3.14).
    for python in sorted({row["python"] for row in data["coldstart"]["rows"]}):
        by = coldstart_rows(data, python=python)
        for mb, variant, limit in ((128, "layer", 0.65), (512, "layer", 0.60), (1769, "layer", 0.60),
                                   (128, "hook_layer", HOOK_FLAVOR_GOAL)):
            if (mb, variant) in by:
                row = by[mb, variant]
                goals.append(("cold start to the first HTTPS response, %s × the runtime copy, %d MB, CPython %s "
                              "(wall, the run's noise ±%.2f; CPU %.2f×, noise ±%.2f)" % (
                                  "full layer" if variant == "layer" else "hook flavor", mb, python,
                                  row.get("noise", 0), row["cpu_over_runtime"], row.get("noise_cpu", 0)),
                              by[mb, variant]["total_over_runtime"], limit, "`make coldstart`"))
    return goals


def view_coldstart_goals(data):
    """docs/coldstart.md: issue 22's goals, each with the measured number and whether it is met."""
    rows = [(what, "≤ %.2f×" % limit, "%.2f×" % measured, "met" if measured <= limit else "**not met**", by)
            for what, measured, limit, by in coldstart_goals(data)]
    # The switch off: what the layer adds to CPython's own cost of a one-line `.pth` that imports
    # (the floor: `import os`, which no `.pth` hook can avoid, ~100 µs on 3.12 by itself). When the
    # issue was filed the total was 38-108 µs (3.12: 82 µs floor + 26 µs); the goal keeps the
    # layer's part where it was, and the row shows the total beside it.
    off = data["startup"]["rows"]
    worst = max(off, key=lambda row: row["hook_off_us"] - row["floor_us"])
    total = max(off, key=lambda row: row["hook_off_us"])
    rows.append(("startup with the switch off (the `.pth` line), the layer's part above CPython's "
                 "one-line `.pth` floor, worst CPython", "< 100 µs",
                 "%.0f µs (%s); total %.0f µs on %s, of it %.0f µs the floor" % (
                     worst["hook_off_us"] - worst["floor_us"], worst["python"], total["hook_off_us"],
                     total["python"], total["floor_us"]),
                 "met" if worst["hook_off_us"] - worst["floor_us"] < 100 else "**not met**", "`make bench`"))
    return table(("goal", "target", "measured", "", "by"), rows)


def view_coldstart_hook_budget(data):
    """docs/coldstart.md: what the hook flavor's goal leaves it at 128 MB once the runtime's own
    ``import boto3`` (which the hook flavor may not change) is paid, in CPU, beside what each flavor
    spends on everything else (startup, client, first call)."""
    rows = []
    for python in sorted({row["python"] for row in data["coldstart"]["rows"]}):
        by = coldstart_rows(data, python=python)
        runtime, hook, full = by.get((128, "runtime_copy")), by.get((128, "hook_layer")), by.get((128, "layer"))
        if runtime is None or hook is None or "import_cpu_ms" not in runtime:
            continue  # a run from before the CPU was taken by part
        allowed = HOOK_FLAVOR_GOAL * runtime["cpu_ms"]
        left = allowed - runtime["import_cpu_ms"]
        # The run's CPU noise (the spread between two equal columns, bench/coldstart.py's noise_cpu)
        # in ms of the runtime copy's CPU: a difference smaller than that is not one (issue 36).
        noise = hook.get("noise_cpu", 0) * runtime["cpu_ms"]
        rest = hook["besides_import_cpu_ms"]
        verdict = ("fits" if rest <= left - noise else "**does not fit**" if rest > left + noise
                   else "within the noise")
        rows.append((python, "%.0f" % runtime["cpu_ms"], "%.0f" % allowed,
                     "%.0f (hook flavor: %.0f)" % (runtime["import_cpu_ms"], hook["import_cpu_ms"]),
                     "**%.0f** ± %.0f" % (left, noise), "**%.0f**" % rest,
                     "%.0f" % full["besides_import_cpu_ms"] if full else "—",
                     "%.0f" % runtime["besides_import_cpu_ms"], verdict))
    if not rows:
        return "Not measured: the run in docs/data/coldstart.json predates the CPU taken by part."
    return table(("CPython", "runtime copy, CPU", "× %.2f: the goal" % HOOK_FLAVOR_GOAL,
                  "the runtime's `import boto3`", "left for the rest", "hook flavor's rest",
                  "full layer's rest", "runtime copy's rest", ""), rows) + (
        "\n\nms of CPU at 128 MB, medians of the same run as \"The latest run\" (`make coldstart`); the rest = "
        "startup + client + first call, the median of each run's sum; the runtime's `import boto3` is the "
        "runtime copy's (the hook flavor imports the same modules; its own median beside it: any excess "
        "over the runtime's is the hook flavor's too, and not in its rest). What is left is a difference "
        "of the runtime copy's medians, ± the run's CPU noise (the spread between two equal columns, in "
        "ms of the runtime copy's CPU): a rest within it neither fits nor misses.")


def view_client(data):
    """docs/coldstart.md, "Prepared data": the first client of a process, stock loading vs the
    build's prepared data, per memory size and page cache."""
    client = data["bench-client"]
    rows = [("%d MB" % row["memory_mb"], row["cache"], row["service"],
             "%.0f (%.0f)" % (row["stock_client_ms"], row["stock_client_cpu_ms"]),
             "%.0f (%.0f)" % (row["prepared_client_ms"], row["prepared_client_cpu_ms"]),
             "**%.2f** (%.2f)" % (row["client_ratio"], row["client_cpu_ratio"]),
             "%.0f" % row["client_saved_ms"]) for row in client["rows"]]
    return (table(("memory", "page cache", "first client", "stock ms (CPU)", "prepared ms (CPU)",
                   "prepared / stock (CPU)", "saved ms"), rows) +
            "\n\nMedians of %d interleaved rounds; full layer on, `AWS_PYTHON_KEEPALIVE_PREPARED=0` vs `1`."
            % client["runs"])


def view_client_formats(data):
    """docs/coldstart.md, "Prepared data": load time of each form of the data a client reads."""
    rows = [("`%s`" % row["file"], "%.0f kB" % (row["disk_bytes"] / 1000), "%.2f" % row["stock_ms"],
             "%.2f" % row["json_plain_ms"], "%.2f" % row["marshal_ms"], "%.2f" % row["marshal_ordered_ms"],
             "**%.2f**" % row["pickle_ms"]) for row in data["bench-client"]["formats"]]
    return table(("file", "on disk", "stock: json + OrderedDict hook", "json, plain dicts", "marshal, plain dicts",
                  "marshal, then OrderedDict", "pickle of the OrderedDict tree"), rows) + (
        "\n\nms, median of 21 loads at full CPU in the benchmark's own process.")


def view_sizes(data):
    """docs/build.md: what each build weighs."""
    full, hook, wheel = data["layer"]["rows"][0], data["layer-hook"]["rows"][0], data["wheel"]["rows"][0]
    rows = [("full layer (`make layer`), bytecode for CPython %s" % ", ".join(full["bytecode"]),
             megabytes(full["zipped"]), megabytes(full["unzipped"]), full["files"]),
            ("hook-only layer (`make layer FLAVOR=hook`), bytecode for CPython %s" % ", ".join(hook["bytecode"]),
             megabytes(hook["zipped"]), megabytes(hook["unzipped"]), hook["files"]),
            ("wheel (`make wheel`)", "%d bytes" % wheel["size"], "—", "—")]
    return table(("build", "zipped", "unzipped", "files"), rows)


def effect(row):
    ratio = row["total_over_runtime"]
    if round(ratio, 2) == 1.0:
        return "1.00× (the same)"
    return "%.2f× (%s %.0f %%)" % (ratio, "saves" if ratio < 1 else "costs", abs(1 - ratio) * 100)


def hook_coverage(data):
    """'0.74× ... on the runtime releases it knows (botocore a, b), 0.98× ... on any other (c measured)':
    the hook flavor's effect with the runtime copy at a release it prepares (make coldstart) and at one
    it does not (make coldstart-unknown, whose hook zip's list names the known ones)."""
    known = coldstart_rows(data)[128, "hook_layer"]
    unknown_rows = coldstart_rows(data, "coldstart-unknown")
    unknown = unknown_rows[128, "hook_layer"]
    return ("%s on the runtime releases it knows (botocore %s), %s on any other (measured with %s)" % (
        effect(known), ", ".join(data["coldstart-unknown"]["hook_prepared"]), effect(unknown),
        unknown_rows[128, "runtime_copy"]["botocore"]))


def coldstart_line(data):
    """The headline's cold-start row: what attaching the layer saves (or costs) at 128 MB."""
    by = coldstart_rows(data)
    runtime, full = by[128, "runtime_copy"], by[128, "layer"]
    return ("cold start to the first HTTPS response at 128 MB's CPU share, page cache cold (median, "
            "CPython %s)" % runtime["python"], "%.0f ms" % runtime["total_ms"],
            "full layer %s; hook flavor %s" % (effect(full), hook_coverage(data)),
            "`make coldstart`, `make coldstart-unknown`")


def view_coldstart_unknown(data):
    """docs/coldstart.md: the same cold start with the runtime copy at a release the hook flavor has no
    prepared data for, beside the known release's run."""
    unknown = coldstart_rows(data, "coldstart-unknown")
    known = coldstart_rows(data)
    rows = []
    for label, by in (("known", known), ("unknown", unknown)):
        runtime = by[128, "runtime_copy"]
        for variant in ("runtime_copy", "hook_layer", "layer"):
            row = by[128, variant]
            rows.append((label, runtime["botocore"], COLDSTART_LABELS[variant], row["botocore"],
                         "%.0f" % row["client_ms"], "**%.0f** [%.0f]" % (row["total_ms"], row["total_min_ms"]),
                         "**%.2f** / %.2f" % (row["total_over_runtime"], row["cpu_over_runtime"])))
    return table(("runtime release", "runtime botocore", "column", "botocore", "client ms", "total ms [min]",
                  "x rt: median / CPU"), rows) + (
        "\n\nThe hook flavor prepares botocore %s (`lab/runtime-sdk/*.txt`); at 128 MB, CPython %s." % (
            ", ".join(data["coldstart-unknown"]["hook_prepared"]), unknown[128, "runtime_copy"]["python"]))
def view_aio(data):
    """docs/async.md: what patching aiobotocore costs once, and per request."""
    rows = data["bench-aio"]["rows"]
    once = table(("version", "p50 µs", "max µs"), [(r["version"], "%.1f" % r["p50_us"], "%.1f" % r["max_us"])
                                                    for r in rows if "p50_us" in r])
    per_request = [r for r in rows if "request_p50_us" in r]
    each = table(("switch", "p50 µs per PutItem (%s, 3 processes)" % per_request[0]["version"]),
                 [(r["switch"], ", ".join("%.1f" % v for v in r["request_p50_us"])) for r in per_request])
    return "`aio.apply`, once per process:\n\n%s\n\nPer request:\n\n%s" % (once, each)


def view_children(data):
    """docs/shapes-lmi.md: what the layer costs a child process, per start method."""
    children = data["bench-children"]
    starts = table(("CPython", "start method", "no layer", "layer, switch off", "layer on", "on - off",
                    "child activated"),
                   [(r["python"], r["method"], "%.1f ms" % r["no layer"], "%.1f ms" % r["layer, switch off"],
                     "%.1f ms" % r["layer on"], "%+.1f ms" % r["on - off"],
                     "yes" if r["child activated (layer on)"] else "NO") for r in children["rows"]])
    work = "; ".join("CPython %s: %.0f µs" % (w["python"], w["child_work_us"]) for w in children["child_work"])
    return ("The layer's own work in a new forkserver/spawn child (unpickle, import, activate; median of "
            "%d fresh interpreters): %s. Child start to first result, `ProcessPoolExecutor(1)`, median of %d:"
            "\n\n%s" % (children["rounds"], work, children["rounds"], starts))


def view_throughput(data):
    """docs/throughput.md: PutItem throughput per client configuration."""
    run = data["bench-throughput"]
    sequential = next(r["items_per_s"] for r in run["rows"] if r["configuration"] == "sequential")
    rows = [(r["configuration"], "%.1f" % r["items_per_s"], "%.1f" % r["p50_ms"], "%.1f" % r["p99_ms"],
             "–" if r["new_connections"] is None else r["new_connections"], r["pool_discards"],
             "%.1f" % (r["items_per_s"] / sequential)) for r in run["rows"]]
    return ("N=%d, RTT %s ms, concurrency %d, clients at %d MB's CPU share (raw rows: full CPU):\n\n%s" % (
        run["items"], run["rtt_ms"], run["concurrency"], run["memory_mb"],
        table(("configuration", "items/s", "p50 ms", "p99 ms", "new conn", "pool discards",
               "ratio to sequential"), rows)) + "".join("\n\nNote: " + note for note in run["notes"]))


def view_wheel(data):
    """docs/shapes-bundled.md: what `make wheel` printed."""
    wheel = data["wheel"]["rows"][0]
    return "```\n$ make wheel\nwheel:    build/%s\nsha256:   %s\nsize:     %d bytes\n```" % (
        wheel["wheel"], wheel["sha256"], wheel["size"])


def resumed_or_not(demo):
    """", TLS session resumed (full handshake: X ms)" when the demo ran the no-packet gap phase with
    TLS session resumption on and off (lab/experiments/demo/run.py NO_PACKETS_FULL); else ""."""
    full = demo.get(("layer on, no packet leaves the frozen env, TLS resume off", "gaps"))
    if full is None or full["p50_ms"] is None:
        return ""
    return " (TLS session resumed; %.1f ms with resumption off)" % full["p50_ms"]


def view_headline(data):
    """README.md, "What it costs and saves": the few numbers a user weighs."""
    startup = data["startup"]["rows"]
    connect = {(row["memory_mb"], row["config"]): row for row in data["bench-connect"]["rows"]}
    full, hook, wheel = data["layer"]["rows"][0], data["layer-hook"]["rows"][0], data["wheel"]["rows"][0]
    demo = {(row["configuration"], row["phase"]): row for row in data["demo"]["rows"] if row["handler"] == "handler"}
    share = "at %d MB" % data["demo"]["memory_mb"] if data["demo"]["memory_mb"] else "at full CPU"
    soak = {row["configuration"]: row for row in data["soak"]["rows"]}

    def put(configuration, phase):
        row = demo[configuration, phase]
        return "%.1f ms, %d resets, %d retries" % (row["p50_ms"], row["resets"], row["retries"])

    rows = [
        ("one DynamoDB put after a frozen gap past the NAT timeout, p50 %s" % share, put("no layer", "gaps"),
         put("layer on", "gaps"), "`make demo`"),
        ("the same when no packet leaves the frozen environment", "(as above)",
         put("layer on, no packet leaves the frozen env", "gaps") + ": one clean handshake"
         + resumed_or_not(demo), "`make demo`"),
        ("one DynamoDB put, steady traffic (1/s), p50 %s" % share, "%.1f ms" % demo["no layer", "steady"]["p50_ms"],
         "%.1f ms" % demo["layer on", "steady"]["p50_ms"], "`make demo`"),
        ("retries in the fault soak (%d s of random gaps, resets, silent drops, restarts; %d puts)"
         % (data["soak"]["run"]["duration_s"], soak["layer-on"]["puts"]),
         "%d; %d lost" % (soak["no-layer"]["retries"], soak["no-layer"]["lost_items"]),
         "%d; %d lost" % (soak["layer-on"]["retries"], soak["layer-on"]["lost_items"]), "`make soak`"),
        ("one new HTTPS connection at 128 MB's CPU share (median)",
         "%.0f ms: the CA bundle re-read" % connect[128, "stock"]["connection_ms"],
         "%.1f ms" % connect[128, "layer"]["connection_ms"], "`make bench-connect`"),
        coldstart_line(data),
        ("startup with the switch off (the `.pth` line)", "—",
         "%s µs" % span([r["hook_off_us"] for r in startup]), "`make bench`"),
        ("size, zipped / unzipped", "—",
         "full %s / %s, hook-only %s / %s, wheel %d bytes" % (
             megabytes(full["zipped"]), megabytes(full["unzipped"]), megabytes(hook["zipped"]),
             megabytes(hook["unzipped"]), wheel["size"]), "`make layer`, `make wheel`"),
    ]
    return table(("", "without the layer", "with the layer on", "measured by"), rows)


# view name -> (function, or "module:function" imported when used, the docs/data files it reads).
# A lab experiment's view lives beside its report.
VIEWS = {
    "demo": ("lab.experiments.demo.report:view", ["demo"]),
    "demo-ten": ("lab.experiments.demo.report:view_ten", ["demo"]),
    "demo-lmi": ("lab.experiments.demo.lmi:view", ["demo-lmi"]),
    "measure-learn": ("lab.experiments.measure_learn.run:view", ["measure-learn"]),
    "soak": ("lab.experiments.soak.report:view", ["soak"]),
    "aio": (view_aio, ["bench-aio"]),
    "children": (view_children, ["bench-children"]),
    "throughput": (view_throughput, ["bench-throughput"]),
    "startup": (view_startup, ["startup"]),
    "connect": (view_connect, ["bench-connect"]),
    "reuse": (view_reuse, ["bench-reuse"]),
    "tls-resume": (view_tls_resume, ["bench-tls-resume"]),
    "coldstart": (view_coldstart, ["coldstart"]),
    "coldstart-imports": (view_coldstart_imports, ["coldstart-parts"]),
    "coldstart-saved": (view_coldstart_saved, ["coldstart"]),
    "coldstart-gc": (view_coldstart_gc, ["coldstart-gc"]),
    "soak-gc": (view_soak_gc, ["soak-memory"]),
    "coldstart-goals": (view_coldstart_goals, ["coldstart", "bench-connect", "startup"]),
    "coldstart-hook-budget": (view_coldstart_hook_budget, ["coldstart"]),
    "client": (view_client, ["bench-client"]),
    "client-formats": (view_client_formats, ["bench-client"]),
    "sizes": (view_sizes, ["layer", "layer-hook", "wheel"]),
    "wheel": (view_wheel, ["wheel"]),
    "durable": ("lab.experiments.durable.report:view", ["demo-durable"]),
    "longcall": ("lab.experiments.longcall.run:view", ["longcall"]),
    "sdk-patches": ("bench.sdk_patches:view", ["sdk-patches"]),
    "longcall-350": ("lab.experiments.longcall.run:view", ["longcall-350"]),
    "longcall-summary": ("lab.experiments.longcall.run:summary", ["longcall-350"]),
    "headline": (view_headline, ["demo", "soak", "startup", "coldstart", "coldstart-unknown", "bench-connect",
                                 "layer", "layer-hook", "wheel"]),
    "coldstart-unknown": (view_coldstart_unknown, ["coldstart", "coldstart-unknown"]),
}


# --- render ---------------------------------------------------------------------------------------

def documents(repo=REPO):
    """README.md and every docs/*.md: the files blocks may live in."""
    docs = os.path.join(repo, "docs")
    return [os.path.join(repo, "README.md")] + sorted(
        os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))


def view_function(view):
    if view not in VIEWS:
        raise SystemExit("render_docs: unknown view %r (known: %s)" % (view, ", ".join(VIEWS)))
    function = VIEWS[view][0]
    if isinstance(function, str):
        module, _, name = function.partition(":")
        if REPO not in sys.path:
            sys.path.insert(0, REPO)
        function = getattr(importlib.import_module(module), name)
    return function


def render_text(text, data_dir=DATA, link_prefix="data/"):
    """``text`` with every marked block rendered again from data_dir; each block ends with where,
    when and on what its data were measured (links to the JSON relative to the document)."""
    def block(match):
        view = match.group("view")
        function, names = view_function(view), VIEWS[view][1]
        data = {name: load(name, data_dir) for name in names}
        sources = ", ".join("docs/data/%s.json" % name for name in names)
        measured = [provenance(name, data[name], link_prefix) for name in names]
        footer = "Measured " + "; ".join(measured) + "."
        return "<!-- rendered from %s by make docs (view %s) -->\n%s\n\n%s\n<!-- end -->" % (
            sources, view, function(data).rstrip("\n"), footer)
    return MARKER.sub(block, text)


def render_all(repo=REPO, data_dir=DATA):
    """{path: rendered text} for every document whose text would change."""
    changed = {}
    for path in documents(repo):
        with open(path) as handle:
            text = handle.read()
        prefix = "data/" if os.path.dirname(path) == os.path.join(repo, "docs") else "docs/data/"
        rendered = render_text(text, data_dir, prefix)
        if rendered != text:
            changed[path] = rendered
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"), help="where the benchmarks wrote")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    args = parser.parse_args(argv)
    if args.check:
        changed = render_all()
        for path in changed:
            print("render_docs: %s differs from its rendering (make docs)" % os.path.relpath(path, REPO))
        return 1 if changed else 0
    take(args.build_dir)
    for path, text in render_all().items():
        with open(path, "w") as handle:
            handle.write(text)
        print("render_docs: rendered %s" % os.path.relpath(path, REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
