"""wobble: measure how language-model answers wobble when the instructions around them change."""

__version__ = "0.1.0"
