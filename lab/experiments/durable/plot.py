"""The PNG of ``make demo-durable``: one panel per NAT mode, per configuration the first checkpoint of
every resume after a wait (dots) beside the steady checkpoints of the same invocations (a bar at their
median); log scale, since a hang costs ~10 000x a reuse. A resume that met a reset or a hang is a red
cross."""

from __future__ import annotations

from pathlib import Path


def plot(table_rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = list(dict.fromkeys(r["nat_mode"] for r in table_rows))
    def label(row):
        return "%s\n%s" % (row["config"], row["python"])

    labels = list(dict.fromkeys(label(r) for r in table_rows))
    names = dict((r["config"], r["configuration"]) for r in table_rows)
    fig, axes = plt.subplots(len(modes), 1, figsize=(max(6.0, 0.85 * len(labels) + 2), 3.2 * len(modes) + 0.8),
                             squeeze=False, sharey=True)
    for m, mode in enumerate(modes):
        ax = axes[m][0]
        for row in (r for r in table_rows if r["nat_mode"] == mode):
            x = labels.index(label(row))
            for i, resume in enumerate(row["per_resume"]):
                if resume["first_ms"] is None:
                    continue
                bad = resume["resets"] or resume["hangs"] or resume["retries"]
                ax.scatter([x + 0.08 * (i - 1)], [resume["first_ms"]], marker="x" if bad else "o",
                           color="#d62728" if bad else "#1f77b4", zorder=3, s=28)
            if row["steady_checkpoint_p50_ms"]:
                ax.hlines(row["steady_checkpoint_p50_ms"], x - 0.3, x + 0.3, color="#2ca02c", lw=2)
        ax.set_yscale("log")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_title("NAT %s" % ("reset (RST)" if mode == "reset" else "silent drop"))
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylabel("checkpoint ms")
    fig.suptitle("Durable function: first checkpoint after each wait (dot; red x: reset, retry or hang) "
                 "vs steady p50 (bar)", fontsize=10)
    fig.text(0.01, 0.01, "; ".join("%s = %s" % item for item in names.items()), fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
