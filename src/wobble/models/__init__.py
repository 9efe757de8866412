"""Model declaration, materialization (pypi-gguf wheels, hub, local, tiny, openai server dirs) and loading."""
