"""Reads compiled once: a queryset's SQL kept, then run again with new values.

Django compiles a queryset each time it is evaluated. For the reads on every
search's path that costs several times the query itself (docs/benchmarks.md,
"Keyword search against Tantivy"). A `PreparedRead` compiles `build(*values)` once
per connection and shape (the length of each list among the values), and from
then on executes that SQL with the new values, applying the converters the ORM
would. It trusts the compiled SQL only where the first run proves it: the
compiled parameters are exactly the values in order, and the rows equal the
queryset's own. Otherwise it evaluates the queryset every time.
"""

from __future__ import annotations

import threading
import weakref
from collections import namedtuple
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import QuerySet


@dataclass(frozen=True)
class _Compiled:
    sql: str
    converters: list  # (position, (converters, expression)), as the ORM's


class PreparedRead:
    def __init__(self, build: Callable[..., QuerySet], names: Sequence[str]) -> None:
        """`build(*values)` returns a `values_list` queryset of the columns `names`."""
        self.build = build
        self.row = namedtuple("Row", names)
        # connection -> shape -> _Compiled, or None where the SQL is not trusted
        self._compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def rows(self, *values: Any, using: str = "default") -> list:
        connection = connections[using]
        shape = tuple(len(v) if isinstance(v, list | tuple) else -1 for v in values)
        if 0 in shape:  # an empty list matches nothing: Django compiles no SQL
            return self._evaluated(values, using)
        with self._lock:
            known = self._compiled.setdefault(connection, {})
        if shape not in known:
            known[shape], rows = self._compile(values, connection, using)
            return rows
        compiled = known[shape]
        if compiled is None:
            return self._evaluated(values, using)
        return self._executed(compiled, _flat(values), connection)

    def _compile(self, values, connection, using) -> tuple[_Compiled | None, list]:
        expected = self._evaluated(values, using)
        compiler = self.build(*values).query.get_compiler(using)
        sql, params = compiler.as_sql()
        if list(params) != _flat(values):
            return None, expected
        expressions = [column for column, _, _ in compiler.select]
        compiled = _Compiled(sql, list(compiler.get_converters(expressions).items()))
        if self._executed(compiled, list(params), connection) != expected:
            return None, expected
        return compiled, expected

    def _evaluated(self, values, using) -> list:
        return [self.row(*row) for row in self.build(*values).using(using)]

    def _executed(self, compiled: _Compiled, params: list, connection) -> list:
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            fetched = cursor.fetchall()
        if not compiled.converters:
            return [self.row(*row) for row in fetched]
        rows = []
        for row in map(list, fetched):
            for position, (converters, expression) in compiled.converters:
                value = row[position]
                for converter in converters:
                    value = converter(value, expression, connection)
                row[position] = value
            rows.append(self.row(*row))
        return rows


def _flat(values: Sequence[Any]) -> list:
    flat: list = []
    for value in values:
        if isinstance(value, list | tuple):
            flat.extend(value)
        else:
            flat.append(value)
    return flat
