"""A name of an object for a verb of one of its parts: how an object that holds named
parts (:class:`kronika.memory.Memory`, :class:`kronika.stores.sqlite.SqliteIndex`)
keeps flat names without inheriting from them.

``approve = Alias("proposals", Proposals.approve)`` in the class body makes
``memory.approve(...)`` call ``memory.proposals.approve(...)``: the same signature,
docstring and types (mypy reads them off the part's method), nothing looked up by a
name the type checker cannot see. On the class, the alias is the part's function
(``inspect.signature(Memory.approve)`` is that of ``Proposals.approve``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

P = ParamSpec("P")
R = TypeVar("R")
Part = TypeVar("Part")


class Alias(Generic[Part, P, R]):
    """``instance.<part>.<method>`` under another name of ``instance``'s class."""

    def __init__(self, part: str, method: Callable[Concatenate[Part, P], R]) -> None:
        self.part = part
        self.method = method
        self.verb: str = method.__name__
        self.__doc__ = method.__doc__

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Callable[Concatenate[Part, P], R]: ...
    @overload
    def __get__(self, instance: object, owner: type[Any]) -> Callable[P, R]: ...
    def __get__(self, instance: object | None, owner: type[Any]) -> Callable[..., R]:
        if instance is None:
            return self.method
        bound: Callable[P, R] = getattr(getattr(instance, self.part), self.verb)
        return bound

    def __repr__(self) -> str:
        return f"<alias of {self.part}.{self.verb}>"
