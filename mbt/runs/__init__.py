"""Observed runs (traces and transcripts): one module per stage, from the observed-step model to regression goldens."""
