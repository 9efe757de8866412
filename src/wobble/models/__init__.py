"""Model declaration, materialization (pypi-gguf, hub, local, tiny) and loading."""
