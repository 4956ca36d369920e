"""The lab's experiments: one package each, run by ``make`` as ``python -m lab.experiments.<name>.run``.

``demo`` (make demo: ``run``; make demo-lmi: ``lmi``; their shared header, tables and plots),
``soak`` (make soak: the fault soak, its chaos schedule, report and plot), ``measure_keepalive``,
``measure_learn``, ``async_patterns`` (make measure-async), ``otel`` (the OpenTelemetry layer in
the stand-in's /opt, and the comparison behind its wrapper), ``standin_bench`` (what the stand-in
itself costs), ``durable`` (make demo-durable: a durable function's checkpoint client across waits,
against AWS's local runner). ``progress``: the status line the long runs share.

Imports: anything below (``lab.standin``, ``lab.services``, ``lab.net``), this package's shared
modules, and another experiment's function code (soak's aiobotocore variant runs async_patterns'
task folder).
"""
