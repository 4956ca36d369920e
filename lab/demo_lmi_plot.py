"""The PNG of ``make demo-lmi``: one column per configuration, one row per NAT mode; each panel the
function's own timing of every counted put over time, busy workers' calls and idle workers' calls
in two colours. As in lab/demo_plot.py: a call that met a reset or a read timeout is a red cross,
one that opened a connection an orange ring; log scale (a reset or a hang costs 10-1000x a reuse).
"""

from __future__ import annotations

from pathlib import Path

PHASE_COLORS = {"busy": "#1f77b4", "idle": "#2ca02c"}


def plot(runs, args, path: Path, put_ms) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from lab.demo_plot import _plain

    configs = []
    for run in runs:
        if run.config not in configs:
            configs.append(run.config)
    by_key = {(r.config.name, r.mode): r for r in runs}
    fig, axes = plt.subplots(len(args.modes), len(configs), figsize=(4.4 * len(configs), 3.4 * len(args.modes)),
                             squeeze=False, sharey=True)
    for m, mode in enumerate(args.modes):
        counted = [record for c in configs for _, _, record in by_key[(c.name, mode)].calls]
        if not counted:
            continue
        t0 = min(r.timings.queued_ns for r in counted)
        for c, config in enumerate(configs):
            run = by_key[(config.name, mode)]
            ax = axes[m][c]
            for phase, color in PHASE_COLORS.items():
                pts = [((r.timings.queued_ns - t0) / 1e9, put_ms(r), r) for p, _, r in run.calls
                       if p == phase and put_ms(r)]
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=12, color=color, zorder=2)
                new = [p for p in pts if p[2].counters["new_connections"] + p[2].counters["dropped_replaced"]]
                ax.scatter([p[0] for p in new], [p[1] for p in new], s=70, facecolors="none",
                           edgecolors="#ff7f0e", linewidths=1.3, zorder=3)
                bad = [p for p in pts if p[2].counters["connection_errors"] or p[2].counters["retries"]]
                ax.scatter([p[0] for p in bad], [p[1] for p in bad], s=60, marker="x", color="#d62728", zorder=4)
            resets = sum(r.counters["connection_errors"] for _, _, r in run.calls)
            with_timer = sum(1 for found in run.timers.values() if found and None not in found)
            ax.set_title("%s, NAT %s: %d reset%s / timeout%s\nkeep-alive timer in %d of %d workers"
                         % (config.label, "reset" if mode == "reset" else "silent", resets,
                            "" if resets == 1 else "s", "" if resets == 1 else "s", with_timer, args.workers),
                         fontsize=9)
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_plain))
            ax.grid(True, which="both", alpha=0.25)
            ax.set_xlabel("s since start (idle workers: %.0f s > NAT %d s)" % (args.idle, args.nat_timeout),
                          fontsize=8)
            if c == 0:
                ax.set_ylabel("ms per put")
            ax.legend(handles=[
                Line2D([], [], ls="", marker="o", ms=4, color=PHASE_COLORS["busy"], label="busy worker"),
                Line2D([], [], ls="", marker="o", ms=4, color=PHASE_COLORS["idle"], label="worker idle > NAT"),
                Line2D([], [], ls="", marker="o", ms=8, mfc="none", mec="#ff7f0e", label="new connection"),
                Line2D([], [], ls="", marker="x", ms=7, color="#d62728", label="reset/timeout + retry"),
            ], fontsize=7, loc="upper left")
    fig.suptitle("aws-python-keepalive demo-lmi: %d never-frozen workers (Lambda Managed Instances), "
                 "NAT idle timeout 350 s scaled to %d s, RTT %.0f ms" % (args.workers, args.nat_timeout, args.rtt_ms),
                 fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
