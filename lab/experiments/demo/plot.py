"""The demos' PNGs, one column per configuration.

make demo (``plot``): per handler a row of latency over time and a row of its distribution. Shared
axes per row, so columns compare at a glance.

Latency is the function's own timing of its put(s). Time is seconds since the first counted
invocation of that handler (all configurations run at the same time, so the gap phase lines up).
An invocation that met a reset or a read timeout is drawn as a red cross; one that opened a new TCP
connection (Netem's count) as an orange ring. Log scales: a reset costs 10x a reused connection.

make demo-lmi (``plot_lmi``): one row per NAT mode; each panel the function's own timing of every
counted put over time, busy workers' calls and idle workers' calls in two colours; crosses and rings
as above (a new connection: urllib3's log in the worker); log scale (a reset or a hang costs
10-1000x a reuse).
"""

from __future__ import annotations

from pathlib import Path

PHASE_COLORS = {"steady": "#1f77b4", "gaps": "#2ca02c"}
LMI_PHASE_COLORS = {"busy": "#1f77b4", "idle": "#2ca02c"}


def plot(runs, handlers: dict, call_ms, args, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker
    from matplotlib.lines import Line2D

    configs = _configs(runs)
    by_key = {(r.config.name, r.handler): r for r in runs}
    fig, axes = plt.subplots(2 * len(handlers), len(configs), figsize=(4.2 * len(configs), 3.0 * 2 * len(handlers)),
                             squeeze=False, sharey="row")
    for h, (handler, what) in enumerate(handlers.items()):
        counted = [r for c in configs for r in by_key[(c.name, handler)].phases.get("steady", [])
                   + by_key[(c.name, handler)].phases.get("gaps", [])]
        if not counted:
            continue
        t0 = min(r.timings.queued_ns for r in counted)
        values = [v for v in (call_ms(r) for r in counted) if v]
        lo, hi = max(0.1, min(values) * 0.8), max(values) * 1.25
        bins = [lo * (hi / lo) ** (i / 30) for i in range(31)]
        t_max = max((r.timings.queued_ns - t0) / 1e9 for r in counted) + 2
        for c, config in enumerate(configs):
            run = by_key[(config.name, handler)]
            ax_t, ax_d = axes[2 * h][c], axes[2 * h + 1][c]
            for phase, color in PHASE_COLORS.items():
                records = run.phases.get(phase, [])
                pts = [((r.timings.queued_ns - t0) / 1e9, call_ms(r), r) for r in records if call_ms(r)]
                if not pts:
                    continue
                ax_t.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3.5, lw=0.8, color=color,
                          label=phase)
                _mark(ax_t, pts, lambda record: record.counters.get("tcp_connects"))
                ax_d.hist([p[1] for p in pts], bins=bins, color=color, alpha=0.75, label=phase)
            resets = sum(r.counters["connection_errors"] for phase in PHASE_COLORS
                         for r in run.phases.get(phase, []))
            ax_t.set_title("%s\napp.%s (%s): %d reset%s" % (config.label, handler, what, resets,
                                                             "" if resets == 1 else "s"), fontsize=9.5)
            ax_t.set_yscale("log")
            ax_t.set_xlim(-1, t_max)
            ax_t.grid(True, which="both", alpha=0.25)
            ax_t.set_xlabel("s since start (gap phase: frozen %.0f s > NAT %d s)" % (args.gap, args.nat_timeout),
                            fontsize=8)
            ax_d.set_xscale("log")
            ax_d.set_xlim(lo, hi)
            ax_d.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
            ax_d.grid(True, which="both", alpha=0.25)
            ax_d.set_xlabel("ms per invocation (%s)" % what, fontsize=8)
            if c == 0:
                ax_t.set_ylabel("ms (%s)" % what)
                ax_d.set_ylabel("invocations")
            ax_t.legend(handles=_legend_handles(Line2D), fontsize=7, loc="upper left")
            ax_d.legend(fontsize=7, loc="upper right")
    # Plain numbers on the log axes. Set last: set_yscale on an axis shared by a row resets the
    # formatters of every axis in the row.
    for ax in fig.axes:
        for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
            if scale == "log":
                axis.set_major_formatter(ticker.FuncFormatter(_plain))
                axis.set_minor_formatter(ticker.FuncFormatter(_plain_minor))
    fig.suptitle("aws-python-keepalive demo at %d MB (its CPU share): DynamoDB Local over TLS, RTT %.0f ms, "
                 "NAT idle timeout 350 s scaled to %d s (reset mode)"
                 % (args.memory_mb, args.rtt_ms, args.nat_timeout), fontsize=11)
    _save(plt, fig, path, top=0.97, dpi=110)


def _legend_handles(Line2D):
    return [Line2D([], [], color=PHASE_COLORS["steady"], marker="o", ms=3.5, lw=0.8, label="steady (1/s)"),
            Line2D([], [], color=PHASE_COLORS["gaps"], marker="o", ms=3.5, lw=0.8, label="after a gap"),
            *_mark_handles(Line2D, "reset + retry")]


def _plain(value, _pos=None):
    return "%g" % value


def _plain_minor(value, _pos=None):
    """Label only the 2x, 3x, 5x and 7x minor ticks of a log axis: enough to read values, not crowded."""
    lead = ("%e" % value)[0]
    return "%g" % value if lead in "2357" else ""


def plot_lmi(runs, args, path: Path, put_ms) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    configs = _configs(runs)
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
            for phase, color in LMI_PHASE_COLORS.items():
                pts = [((r.timings.queued_ns - t0) / 1e9, put_ms(r), r) for p, _, r in run.calls
                       if p == phase and put_ms(r)]
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=12, color=color, zorder=2)
                _mark(ax, pts, lambda record: record.counters["new_connections"] + record.counters["dropped_replaced"])
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
                Line2D([], [], ls="", marker="o", ms=4, color=LMI_PHASE_COLORS["busy"], label="busy worker"),
                Line2D([], [], ls="", marker="o", ms=4, color=LMI_PHASE_COLORS["idle"], label="worker idle > NAT"),
                *_mark_handles(Line2D, "reset/timeout + retry"),
            ], fontsize=7, loc="upper left")
    fig.suptitle("aws-python-keepalive demo-lmi: %d never-frozen workers (Lambda Managed Instances), "
                 "NAT idle timeout 350 s scaled to %d s, RTT %.0f ms" % (args.workers, args.nat_timeout, args.rtt_ms),
                 fontsize=11)
    _save(plt, fig, path, top=0.95, dpi=100)


def _configs(runs) -> list:
    """The runs' configurations in first-seen order: the columns."""
    configs = []
    for run in runs:
        if run.config not in configs:
            configs.append(run.config)
    return configs


def _mark(ax, pts, new_connection) -> None:
    """Over the points ``(x, ms, record)``: an orange ring where ``new_connection(record)``, a red
    cross where the record met a reset / read timeout or a retry."""
    new = [p for p in pts if new_connection(p[2])]
    ax.scatter([p[0] for p in new], [p[1] for p in new], s=70, facecolors="none",
               edgecolors="#ff7f0e", linewidths=1.3, zorder=3)
    bad = [p for p in pts if p[2].counters["connection_errors"] or p[2].counters["retries"]]
    ax.scatter([p[0] for p in bad], [p[1] for p in bad], s=60, marker="x", color="#d62728", zorder=4)


def _mark_handles(Line2D, reset_label: str) -> list:
    return [Line2D([], [], ls="", marker="o", ms=8, mfc="none", mec="#ff7f0e", label="new connection"),
            Line2D([], [], ls="", marker="x", ms=7, color="#d62728", label=reset_label)]


def _save(plt, fig, path: Path, top: float, dpi: int) -> None:
    fig.tight_layout(rect=(0, 0, 1, top))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
