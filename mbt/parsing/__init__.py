"""Parsing: grammar loading, syntax errors in plain words, and transformation of parse trees into typed models."""
