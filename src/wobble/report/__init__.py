"""Reporting layer: table/figure declarations (spec), cell formats, the one renderer, file formats."""
