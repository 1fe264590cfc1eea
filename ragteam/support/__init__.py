"""Support: which passages back which answer sentence (`stage.check_support`), by layers
registered in `layers` (lexical, the span reader's, a trained checker, an LLM judge); its
records (`records`) and the label shown beside an answer (`grounding`) live here too."""
