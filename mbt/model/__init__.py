"""Typed models of every kind, and the parts they share (locations, spans, status, severity)."""
