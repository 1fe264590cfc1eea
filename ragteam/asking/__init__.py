"""The answer pipeline: what a request asks (`request.AskRequest`, its options declared once),
the one path from a question to a labelled answer (`posed.run_posed`), and the Python API's
`answer` (`api`)."""

from ragteam.asking.request import (
    AskRequest,
    Reach,
    ask_fields,
    ask_hints,
    key_values,
    labelled,
    option,
    requested,
)

__all__ = [
    "AskRequest",
    "Reach",
    "ask_fields",
    "ask_hints",
    "key_values",
    "labelled",
    "option",
    "requested",
]
