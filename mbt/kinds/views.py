"""The views kinds share: the generic element table (rows per rule, partition, boundary, conflict, trigger)."""

from __future__ import annotations

from mbt.kind import View
from mbt.render.table import element_table

TABLE_SUFFIXES = (".md", ".html")
ELEMENT_TABLE = View("table", element_table, TABLE_SUFFIXES)
