"""Snakemake entry point: acquire one pinned source (mirror, download or recipe, sha256-checked) into output[0]."""
import logging

from wobble.data.acquire import acquire
from wobble.provenance import tracked
from wobble.snake import logged

source = snakemake.wildcards.source
mirror = snakemake.params.mirror or None
timeout = getattr(snakemake.params, "timeout", 20)
url_prefixes = dict(getattr(snakemake.params, "url_prefixes", None) or {})
entries = []  # filled inside the block; tracked() reads it after the block, when it writes the sidecar
with logged(snakemake), tracked(snakemake, config={"source": source, "mirror": mirror, "url_prefixes": url_prefixes},
                                    sources=entries):
    try:
        entries.extend(acquire(source, snakemake.output[0], mirror=mirror, timeout=timeout,
                               url_prefixes=url_prefixes, cache=getattr(snakemake.params, "cache", None)))
    except Exception as exc:
        logging.getLogger("acquire_source").error("%s", exc)
        raise
