"""The soak's plot: every put's latency over time, one panel per configuration, faults marked.

x: seconds since the soak started; y: the UpdateItem's latency (log scale).  Drop-mode stretches of
the NAT are shaded, restarts are vertical lines (TLS front / DynamoDB Local), failed puts are red
crosses at the top.  Needs matplotlib (the demo's venv, lab/demo-requirements.txt).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESTART_COLORS = {"tls": "tab:purple", "dynamodb": "tab:orange"}


def plot(raw: dict, png: Path) -> None:
    names = [inv["configuration"] for inv in raw["warm_up"]]
    t0 = raw["started"]
    end = raw["ended"] - t0
    fig, axes = plt.subplots(len(names), 1, figsize=(11, 2.4 * len(names)), sharex=True, sharey=True)
    drops = _drop_spans(raw, t0, end)
    for ax, name in zip(axes, names):
        ok_t, ok_ms, failed_t = [], [], []
        for inv in raw["invocations"]:
            if inv["configuration"] != name or not inv["ok"]:
                continue
            for put in inv["result"]["puts"]:
                (failed_t if put["error"] else ok_t).append(put["t"] - t0)
                if not put["error"]:
                    ok_ms.append(max(put["ms"], 0.5))
        for start, stop in drops:
            ax.axvspan(start, stop, color="0.9", lw=0)
        for restart in raw["restarts"]:
            ax.axvline(restart["t"] - t0, color=RESTART_COLORS[restart["kind"]], lw=1.2)
        ax.scatter(ok_t, ok_ms, s=4, color="tab:blue")
        if failed_t:
            ax.scatter(failed_t, [5000] * len(failed_t), marker="x", color="red", s=20)
        ax.axhline(1000, color="0.5", lw=0.6, ls=":")
        ax.set_yscale("log")
        ax.set_ylabel("put ms")
        ax.set_title(name, loc="left", fontsize=10)
    axes[-1].set_xlabel("seconds since start (grey: NAT in silent-drop mode; lines: restarts, "
                        "purple TLS front, orange DynamoDB Local; red x: failed put; dotted: 1 s)")
    axes[-1].set_xlim(0, end)
    memory = "%d MB (its CPU share)" % raw["memory_mb"] if raw.get("memory_mb") else "full CPU"
    fig.suptitle("Soak, seed %s, %s: NAT timeout %s s, gaps 0.1-3 T, 1-64 puts over 1-32 threads"
                 % (raw["seed"], memory, raw["nat_timeout_s"]), fontsize=11)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(str(png), dpi=90)
    plt.close(fig)


def _drop_spans(raw: dict, t0: float, end: float) -> list:
    spans, since = [], None
    for change in raw["modes"]:
        t = change["t"] - t0
        if change["mode"] == "drop" and since is None:
            since = t
        elif change["mode"] != "drop" and since is not None:
            spans.append((since, t))
            since = None
    if since is not None:
        spans.append((since, end))
    return spans


if __name__ == "__main__":
    import json
    import sys

    plot(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]))
