"""Answer extraction: composable filters (:mod:`wobble.extract.filters`) and pipelines of them
(:mod:`wobble.extract.pipeline`). ``extract(text, Regex("answer is (.*)"), Number())`` -> "1080"."""

from wobble.extract.filters import (FILTERS, Filter, LetterString, Normalize, Number, OptionLetter, Regex, Strip,
                                    YesNo, normalize_number)
from wobble.extract.pipeline import Pipeline, TakeFirst, build_pipeline, extract

__all__ = ["FILTERS", "Filter", "LetterString", "Normalize", "Number", "OptionLetter", "Regex", "Strip", "YesNo",
           "normalize_number", "Pipeline", "TakeFirst", "build_pipeline", "extract"]
