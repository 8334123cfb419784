"""Reading XML safely for the importers (DMN, GraphML): defusedxml, and where each element starts in the file."""

from __future__ import annotations

import re
from typing import Any
from xml.etree.ElementTree import Element, ParseError, TreeBuilder

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from mbt.errors import LocatedError, Problem, problem_at

# Two private attributes (in a namespace no document uses) carry each element's line and column.
LINE_KEY = "{urn:mbt}line"
COLUMN_KEY = "{urn:mbt}column"


class _LineTreeBuilder(TreeBuilder):
    """Records where each element starts (expat's position) as two private attributes."""

    expat: Any = None

    def start(self, tag, attrs):
        attrs = dict(attrs)
        attrs[LINE_KEY] = str(self.expat.CurrentLineNumber)
        attrs[COLUMN_KEY] = str(self.expat.CurrentColumnNumber + 1)
        return super().start(tag, attrs)


def parse_xml(text: str, shown: str, what: str) -> Element:
    """The document's root; bad XML is one located error, a DTD or entity is refused (`what`: DMN, GraphML)."""
    builder = _LineTreeBuilder()
    parser = DefusedXMLParser(target=builder, forbid_dtd=True)
    builder.expat = parser.parser
    try:
        parser.feed(text)
        return parser.close()
    except ParseError as err:
        line, column = getattr(err, "position", (1, 0))
        message = re.sub(r": line \d+, column \d+$", "", str(err))
        raise LocatedError([problem_at(shown, text, line, column + 1, f"not well-formed XML: {message}")]) from None
    except DefusedXmlException as err:
        raise LocatedError([Problem(shown, 1, 1, f"refused: {type(err).__name__} ({err}); {what} files need no "
                                                 "DTD or entities")]) from None


def position(el: Element) -> tuple[int, int]:
    """(line, column) where the element starts."""
    return int(el.get(LINE_KEY, "1")), int(el.get(COLUMN_KEY, "1"))
