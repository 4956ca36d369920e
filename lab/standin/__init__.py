"""The Lambda stand-in: a function's execution environment, as the managed runtime gives it.

``runtime_api`` (the Runtime API server), ``runtime_prefix`` (one plain CPython prefix per minor
with the runtime's awslambdaric and bundled-kind boto3), ``lambda_env`` (``LambdaFunction``: the
function's environment, /opt, freeze and thaw), ``runtime/`` (the bootstrap the runtime process
runs, and lab_observe's per-invocation counters), ``cpu_share`` (Lambda's CPU per memory size, a
cgroup quota), ``trust_store`` (the SDK's CA bundle + the lab CA), ``output_capture`` (stdout and
stderr per invocation), ``driver`` (invoke at a rate or after idle gaps), ``function_net`` (one
stand-in function inside its own ``lab.net`` namespace and RTT hop, in front of a service).

Imports: ``lab.net`` and ``lab`` only (never ``lab.services`` or ``lab.experiments``: a service
reaches ``function_net`` as an argument).
"""
