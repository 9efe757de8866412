"""The studies: each a package of pure functions, prompts and tidy-table builders on the shared layer."""
