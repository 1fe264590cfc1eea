"""Support: which passages back which answer sentence (`stage.check_support`), by a lexical
layer and an optional trained checker (`checker`); its records live in `ragteam.types`."""
