"""OpenTelemetry: ``layer`` puts the real OpenTelemetry Lambda layer (``otel-instrument`` beside it) into
the stand-in's /opt; ``compare`` reads the keep-alive timer behind its exec wrapper. Imports:
lab.standin."""
