"""Error types whose messages name the file, the record and what was expected."""

from __future__ import annotations


class WobbleError(Exception):
    """Base class: a problem the user can fix, reported in one clear line."""


class DataError(WobbleError):
    """A malformed input record: names the file, the record (line or key) and what was expected."""

    def __init__(self, path, record, expected: str):
        self.path, self.record, self.expected = str(path), record, expected
        super().__init__(f"{self.path}: record {record}: {expected}")


class ConfigError(WobbleError):
    """An invalid config value: names the key and what was expected."""

    def __init__(self, key: str, expected: str):
        self.key, self.expected = key, expected
        super().__init__(f"config error at '{key}': {expected}")


class RetiredKeyError(ConfigError):
    """A config key that has been renamed: names the file, the old key and its replacement."""

    def __init__(self, source: str, key: str, replacement: str):
        self.source, self.replacement = source, replacement
        WobbleError.__init__(self, f"{source}: {key} is retired: use {replacement}")
        self.key, self.expected = key, f"use {replacement}"


class SourceUnavailable(WobbleError):
    """A data source could be found neither in the mirror nor by download."""
