"""Evaluation: datasets, metrics, a resumable runner and reports."""
