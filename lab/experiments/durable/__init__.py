"""Lambda durable functions in the lab: the SDK's checkpoint client kept alive across waits.

A durable function (python3.13 / python3.14) runs a workflow of steps and waits; AWS's Durable
Execution SDK for Python (``aws-durable-execution-sdk-python``) checkpoints every step to Lambda's
``CheckpointDurableExecution`` from a background thread, through one boto3 Lambda client the SDK
creates at the first invocation and caches on a class (``LambdaClient.initialize_client``:
``connect_timeout=5, read_timeout=50``, its own ``user_agent_extra``), or through the client the
user passes (``durable_execution(boto3_client=...)``). A wait ends the invocation; when it is over,
Lambda invokes the function again, maybe in the same warm environment, whose pooled connection has
then been idle for the whole wait: behind a NAT gateway's 350 s that is a reset and a retry, behind
a silent middlebox a 50 s hang.

The pieces, each someone else's module:

* the function: ``function/app.py`` with the SDK and its boto3 from PyPI, hash-pinned
  (``function-requirements.txt``), bundled in the task folder as ``sam build`` does, run by the
  Lambda stand-in (lab.standin.lambda_env) on CPython 3.13 / 3.14, frozen between invocations;
* the durable service: AWS's local runner (``dex-local-runner``, ``runner-requirements.txt``)
  behind an HTTP/1.1 keep-alive front and the lab's TLS front, invoking the function through a
  Lambda Invoke endpoint (lab.services.durable);
* per environment its own network (lab.standin.function_net): the kernel NAT (lab.net.nat) in reset or silent
  mode, its idle timeout scaled down from 350 s, and a Netem hop adding the RTT.

Modules: ``experiment`` (configurations, the run, what each resume measured), ``report`` (the table
and build/demo-durable.json), ``plot`` (build/demo-durable.png), ``run`` (``make demo-durable``:
``python -m lab.experiments.durable.run``).
"""
