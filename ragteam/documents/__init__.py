"""Documents as they are: one converter per format (PDF, Word, slides, web pages, Markdown,
reStructuredText, text, JSONL corpora) turns a file into units of plain text with where they
stand (page, printed page label, section path, slide, a corpus's row), and `chunking` cuts
units into passages. This folder is a floor near the ground: it imports nothing of ragteam but
`errors`, `plugins`, `types` and `jsonl`."""

from __future__ import annotations

from ragteam.documents.base import (
    CONVERTERS,
    ConversionFailed,
    Converted,
    Converter,
    ConvertSettings,
    Unit,
    converter_for,
    converters_by_suffix,
    supported_suffixes,
)

__all__ = [
    "CONVERTERS",
    "ConversionFailed",
    "ConvertSettings",
    "Converted",
    "Converter",
    "Unit",
    "converter_for",
    "converters_by_suffix",
    "supported_suffixes",
]
