"""AWS service stand-ins, one module per service (moto's shape): ``dynamodb`` (DynamoDB Local, a
JVM fetched by Maven from its pom beside it, behind ``lab.net.tls_front``), ``durable`` (Lambda's
durable execution service: AWS's local runner ``dex-local-runner`` behind an HTTP/1.1 keep-alive
front and ``lab.net.tls_front``, and Lambda's Invoke API in front of a stand-in function).

Imports: ``lab.net`` and ``lab`` only.
"""
