"""Diagrams and tables for review: a plain description built from model + coverage (graph.py), drawn by dot.py."""
