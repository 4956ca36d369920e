"""AWS service stand-ins, one module per service (moto's shape): ``dynamodb`` (DynamoDB Local, a
JVM fetched by Maven from its pom beside it, behind ``lab.net.tls_front``).

Imports: ``lab.net`` and ``lab`` only.
"""
