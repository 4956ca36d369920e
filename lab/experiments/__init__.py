"""Experiments: each folder runs one question end to end with the stand-in and the network pieces."""
