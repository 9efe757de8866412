"""The command a job names when it needs the network it does not have: ``wobble fetch-models`` with the run's config.

Apart from :mod:`wobble.models.fetch` so the modules that download (wheels, the hub) can name it without importing
the fetcher, which imports them."""

from __future__ import annotations

import os

#: The environment variable the Snakefile sets to the run's config file(s), for :func:`fetch_command`.
CONFIG_ENV = "WOBBLE_CONFIGFILE"


def fetch_command(configfile: str | None = None) -> str:
    """The command that downloads a run's models, naming its config file (the run's, from :data:`CONFIG_ENV`)."""
    configfile = configfile or os.environ.get(CONFIG_ENV) or "config.yaml"
    return f"wobble fetch-models --configfile {configfile}"
