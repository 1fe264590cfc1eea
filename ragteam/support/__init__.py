"""Support: which passages back which answer sentence (`stage.check_support`), by layers
registered in `layers` (lexical, the span reader's, a trained checker, an LLM judge). Its
records (`Support`, `SentenceSupport`, `SupportSettings`) live in `ragteam.types` and the label
shown beside an answer in `ragteam.grounding`: an `Answer` carries them, and `types` is the
floor below the reader this stage reads with."""
