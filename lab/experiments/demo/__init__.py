"""make demo (``run``: standard Lambda, frozen between invocations) and make demo-lmi (``lmi``: Managed
Instances, N never-frozen workers; ``lmi_task/`` its function): no layer / switch off / on behind a
NAT that forgets idle flows. ``report``: the header both print and the Markdown tables; ``plot``: the
PNGs. Imports: lab.standin, lab.services, lab.net, lab.experiments.progress, bench.rows."""
