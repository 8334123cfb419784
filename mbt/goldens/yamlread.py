"""YAML as goldens are read: PyYAML's safe loader, numbers with a fraction as exact decimals, repeated keys refused."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import yaml


class DecimalLoader(yaml.SafeLoader):
    """YAML's safe loader, reading numbers with a fraction as exact decimals: a golden's 17.99999999999999999 is not
    the float 18.0, and 0.1 + 0.2 is 0.3 (goldens are business values; the model compares them exactly)."""


def _decimal(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Decimal | float:
    text = str(loader.construct_scalar(node)).replace("_", "")
    if text.lower().lstrip("+-") in (".inf", ".nan"):
        return loader.construct_yaml_float(node)  # not a business value: kept as YAML reads it (and refused later)
    return Decimal(text)


DecimalLoader.add_constructor("tag:yaml.org,2002:float", _decimal)


def _unique_keys(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    """A YAML mapping whose key repeats is refused (PyYAML keeps the last one without a word)."""
    if isinstance(node, yaml.MappingNode):
        # The keys written in this mapping, before merge keys (`<<: *base`) bring others in: a written key may
        # override a merged one, as YAML says; only a key written twice is refused.
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = loader.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: the constructor refuses it with its own message
            if repeated:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key `{key}` in a mapping (which one counts is not said)",
                    key_node.start_mark)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


DecimalLoader.construct_mapping = _unique_keys  # type: ignore[method-assign,assignment]
