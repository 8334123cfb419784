"""lark's Transformer with each rule's and token's callback looked up once per transform, not once per node."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark import Token, Transformer, Tree
from lark.exceptions import GrammarError, VisitError
from lark.visitors import Discard


class TableTransformer(Transformer):
    """Transforms as lark's Transformer does (bottom-up, the same callbacks with the same arguments, `Discard`
    honoured, an exception inside a callback raised as VisitError of its tree or token); the attribute lookups and
    the `v_args` wrapping lark repeats per node are done once per rule name and token type in a transform."""

    def transform(self, tree: Tree) -> Any:
        rules: dict[str, tuple[Callable[[Tree, list], Any], bool]] = {}
        tokens: dict[str, tuple[Callable[[Token], Any] | None, bool]] = {}
        visit_tokens = self.__visit_tokens__

        def walk(node: Tree) -> Any:
            children = []
            for child in node.children:
                if isinstance(child, Tree):
                    child = walk(child)
                elif visit_tokens and isinstance(child, Token):
                    kind = child.type
                    entry = tokens.get(kind)
                    if entry is None:
                        entry = tokens[kind] = self._token_callback(kind)
                    callback, own = entry
                    if callback is None:  # the token as it is (most have no callback)
                        pass
                    elif not own:  # an overridden __default_token__, which lark calls outside its wrapping
                        child = callback(child)
                    else:
                        try:
                            child = callback(child)
                        except GrammarError:
                            raise
                        except Exception as e:
                            raise VisitError(kind, child, e) from e
                if child is not Discard:
                    children.append(child)
            name = node.data
            found = rules.get(name)
            if found is None:
                found = rules[name] = self._rule_callback(name)
            build, own = found
            if not own:  # __default__, which lark calls outside its VisitError wrapping
                return build(node, children)
            try:
                return build(node, children)
            except GrammarError:
                raise
            except Exception as e:
                raise VisitError(name, node, e) from e

        if not isinstance(tree, Tree):  # what lark's transform does with a lone token or value
            return super().transform(tree)
        result = walk(tree)
        return None if result is Discard else result

    def _rule_callback(self, name: str) -> tuple[Callable[[Tree, list], Any], bool]:
        """What lark's Transformer._call_userfunc calls for a tree of rule `name`, as (tree, new children) -> value,
        and whether it is the transformer's own method for the rule (not __default__)."""
        try:
            f = getattr(self, name)
        except AttributeError:
            default = self.__default__
            return (lambda tree, children: default(name, children, tree.meta)), False
        wrapper = getattr(f, "visit_wrapper", None)
        if wrapper is not None:
            return (lambda tree, children: wrapper(f, name, children, tree.meta)), True
        return (lambda tree, children: f(children)), True

    def _token_callback(self, kind: str) -> tuple[Callable[[Token], Any] | None, bool]:
        """What lark's Transformer._call_userfunc_token calls for a token of type `kind` (None: the token stays as it
        is, lark's own __default_token__), and whether it is the transformer's own method for the type."""
        try:
            return getattr(self, kind), True
        except AttributeError:
            default = self.__default_token__
            return (None if getattr(default, "__func__", None) is Transformer.__default_token__ else default), False
