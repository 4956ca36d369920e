"""The Lambda lab (issue 4): DynamoDB Local over TLS, an RTT emulator, a kernel NAT with an idle
timeout, and a Lambda execution stand-in. Modules are independent; import what you need."""
