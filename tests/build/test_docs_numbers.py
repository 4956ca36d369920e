"""tools/docs/render_docs.py: the measured numbers in README.md and docs/ are the ones docs/data/ holds."""

import json
import os
import re
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)
from tools.docs import render_docs  # noqa: E402

# Numbers README may state outside a rendered block: facts of AWS, Linux and the layer's defaults,
# not measurements. A measured number added by hand to README fails test_readme_numbers_are_rendered.
# (50 s: the Durable Execution SDK's read timeout.)
# Known facts, not measurements: AWS's limits and timeouts, Linux's keep-alive default, the layer's
# own defaults. "20 s": SQS ReceiveMessage's longest wait (WaitTimeSeconds 0-20), README "Long calls".
README_FACTS = {"350 s", "60 s", "7200 s", "10 s", "90 s", "300 s", "250 MB", "128 MB", "100 s", "50 s", "20 s"}
# A number with a unit of time, size or ratio (ranges and thousands separators included).
MEASURED = re.compile(r"(?<![\w.])~?\d[\d.,  ]*(?:[–-]\d[\d.,]*)?\s?(?:ms|µs|us|MB|KB|bytes|×|%|s)(?![\w])")


def rendered_spans(text):
    return [match.span() for match in render_docs.MARKER.finditer(text)]


def test_docs_match_their_data():
    """Every rendered block in README.md and docs/*.md is exactly what docs/data/ renders to: a
    number edited by hand, or data committed without `make docs`, fails here."""
    changed = render_docs.render_all()
    assert not changed, "run `make docs`: %s differ from their rendering" % ", ".join(
        os.path.relpath(path, REPO) for path in changed)


def test_every_view_is_used_and_every_block_known():
    """Each view renders somewhere, and each marker names a known view and existing data files."""
    used = set()
    for path in render_docs.documents():
        with open(path) as handle:
            for match in render_docs.MARKER.finditer(handle.read()):
                assert match.group("view") in render_docs.VIEWS, (path, match.group("view"))
                used.add(match.group("view"))
    assert used == set(render_docs.VIEWS)
    for _, names in render_docs.VIEWS.values():
        for name in names:
            assert os.path.exists(os.path.join(render_docs.DATA, name + ".json")), name


def test_readme_numbers_are_rendered():
    """README states measured numbers only inside rendered blocks; outside them only known facts."""
    with open(os.path.join(REPO, "README.md")) as handle:
        text = handle.read()
    assert rendered_spans(text), "README renders its headline numbers from docs/data/"
    outside = text
    for start, end in reversed(rendered_spans(text)):
        outside = outside[:start] + outside[end:]
    stray = [match.group(0).strip() for match in MEASURED.finditer(outside)
             if match.group(0).strip().lstrip("~") not in README_FACTS]
    assert not stray, "measured numbers typed into README (render them from docs/data/): %s" % stray


@pytest.mark.parametrize("name", sorted(render_docs.SOURCES))
def test_data_records_where_and_when(name):
    """Each committed data file says on what machine, at what load, by which interpreter and when
    its rows were measured (bench/rows.py)."""
    path = os.path.join(render_docs.DATA, name + ".json")
    if not os.path.exists(path):
        pytest.skip("no docs/data/%s.json committed" % name)
    with open(path) as handle:
        run = json.load(handle)["measured_on"]
    assert run["nproc"] >= 1 and run["cpu_model"] and run["host"]
    assert len(run["load_avg_start"]) == 3 and len(run["load_avg_end"]) == 3
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", run["python"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", run["started"])
    assert run["started"] <= run["finished"]


def test_a_number_edited_by_hand_is_caught(tmp_path):
    """Changing a digit inside a rendered block of a copy of README makes it differ from its rendering."""
    with open(os.path.join(REPO, "README.md")) as handle:
        text = handle.read()
    start, end = rendered_spans(text)[0]
    block = text[start:end]
    digit = re.search(r"\d", block.split("\n", 1)[1])  # past the marker line
    position = start + len(block.split("\n", 1)[0]) + 1 + digit.start()
    edited = text[:position] + str((int(text[position]) + 1) % 10) + text[position + 1:]
    assert render_docs.render_text(edited, link_prefix="docs/data/") == text


def test_take_keeps_newer_committed_data(tmp_path):
    """make docs copies a build/ file only when it was measured later than docs/data's copy."""
    build, data = tmp_path / "build", tmp_path / "data"
    build.mkdir()
    data.mkdir()

    def write(folder, finished, value):
        (folder / "wheel.json").write_text(json.dumps(
            {"measured_on": {"finished": finished}, "rows": [{"size": value}]}))

    write(data, "2026-11-25T10:00:00Z", 1)
    write(build, "2026-11-24T10:00:00Z", 2)
    assert render_docs.take(str(build), str(data)) == []
    assert json.loads((data / "wheel.json").read_text())["rows"] == [{"size": 1}]
    write(build, "2026-11-26T10:00:00Z", 3)
    assert render_docs.take(str(build), str(data)) == ["wheel"]
    assert json.loads((data / "wheel.json").read_text())["rows"] == [{"size": 3}]


def test_take_leaves_other_experiments_variants(tmp_path):
    """A trimmed layer build or the aiobotocore soak, written to the same build/ file, is not taken."""
    build, data = tmp_path / "build", tmp_path / "data"
    build.mkdir()
    run = {"finished": "2026-11-26T10:00:00Z"}
    (build / "layer.json").write_text(json.dumps({"measured_on": run, "rows": [{"services": ["s3"]}]}))
    (build / "soak.json").write_text(json.dumps({"measured_on": run, "rows": [{"configuration": "layer-on-aio"}]}))
    assert render_docs.take(str(build), str(data)) == []
    (build / "layer.json").write_text(json.dumps({"measured_on": run, "rows": [{"services": None}]}))
    assert render_docs.take(str(build), str(data)) == ["layer"]


def test_rendered_sizes_are_near_this_checkouts_builds(layer, hook_layer, tmp_path):
    """The sizes README and docs/build.md render are within 10 % of what this checkout builds: the
    builds are reproducible, but an exact match would make every change to the hook re-render docs;
    10 % catches a stale size (the wheel's was 24 304 bytes against 42 520 built) and is fixed by
    `make layer; make layer FLAVOR=hook; make wheel; make docs`."""
    sys.path.insert(0, REPO)
    from tools.packaging import build_wheel

    wheel = build_wheel.build(os.path.join(REPO, "layer"), str(tmp_path))
    built = {"layer": os.path.getsize(layer[0]), "layer-hook": os.path.getsize(hook_layer[0]),
             "wheel": os.path.getsize(wheel)}
    recorded = {"layer": render_docs.load("layer")["rows"][0]["zipped"],
                "layer-hook": render_docs.load("layer-hook")["rows"][0]["zipped"],
                "wheel": render_docs.load("wheel")["rows"][0]["size"]}
    stale = {name: (recorded[name], built[name]) for name in built
             if abs(built[name] - recorded[name]) > 0.10 * recorded[name]}
    assert not stale, "docs/data's sizes (recorded, built) are stale: %s" % stale


def test_take_files_a_coldstart_run_by_the_runtime_release_it_measured(tmp_path):
    """make coldstart's file is taken only when its runtime copy is a release the measured hook zip
    prepares, make coldstart-unknown's only when it is not: README's row says which is which."""
    build, data = tmp_path / "build", tmp_path / "data"
    build.mkdir()
    run = {"finished": "2026-11-26T10:00:00Z"}

    def write(name, release):
        rows = [{"variant": "runtime_copy", "botocore": release}, {"variant": "hook_layer", "botocore": release}]
        (build / name).write_text(json.dumps({"measured_on": run, "hook_prepared": ["1.40.4", "1.42.97"],
                                              "rows": rows}))

    write("coldstart.json", "1.41.5")
    write("coldstart-unknown.json", "1.42.97")
    assert render_docs.take(str(build), str(data)) == []
    write("coldstart.json", "1.42.97")
    write("coldstart-unknown.json", "1.41.5")
    assert render_docs.take(str(build), str(data)) == ["coldstart", "coldstart-unknown"]


def test_hook_budget_says_whether_the_hook_flavors_rest_fits():
    """docs/coldstart.md's hook-flavor budget: 0.70x the runtime copy's CPU minus the runtime's own
    import is what is left; the hook flavor's other parts above it by more than the run's CPU noise
    do not fit, at or below it by as much fit, and nearer are within the noise (no verdict)."""
    def rows(hook_rest, noise_cpu=0.0):
        made = []
        for variant, cpu, imported, rest in (("runtime_copy", 300.0, 180.0, 120.0), ("layer", 190.0, 140.0, 50.0),
                                             ("hook_layer", 180.0 + hook_rest, 180.0, hook_rest)):
            made.append({"python": "3.12", "memory_mb": 128, "variant": variant, "cpu_ms": cpu,
                         "import_cpu_ms": imported, "besides_import_cpu_ms": rest, "noise_cpu": noise_cpu})
        return {"coldstart": {"rows": made}}

    # left: 0.70 * 300 - 180 = 30 ms; noise 0.02 * 300 = 6 ms
    assert "| **30** ± 0 | **30** | 50 | 120 | fits |" in render_docs.view_coldstart_hook_budget(rows(30.0))
    assert "| **30** ± 0 | **31** | 50 | 120 | **does not fit** |" in render_docs.view_coldstart_hook_budget(rows(31.0))
    assert "| **30** ± 6 | **31** | 50 | 120 | within the noise |" in render_docs.view_coldstart_hook_budget(
        rows(31.0, 0.02))
    assert "| **30** ± 6 | **24** | 50 | 120 | fits |" in render_docs.view_coldstart_hook_budget(rows(24.0, 0.02))
    assert "| **30** ± 6 | **37** | 50 | 120 | **does not fit** |" in render_docs.view_coldstart_hook_budget(
        rows(37.0, 0.02))
    old_run = rows(30.0)
    for row in old_run["coldstart"]["rows"]:
        del row["import_cpu_ms"]
    assert render_docs.view_coldstart_hook_budget(old_run).startswith("Not measured")
