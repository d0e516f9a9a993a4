"""SQL expressions the reads compute in the database, so that what they read from never travels."""
from __future__ import annotations

from django.db.models import CharField, Func, IntegerField


class AccPick(Func):
    """The key of the option with the highest summed log-probability (lm-eval `acc`; the first of
    equal maxima), read from Prediction.options in SQL so that the options never travel."""

    output_field = CharField()

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return (f"(SELECT o ->> 'key' FROM jsonb_array_elements({sql}) WITH ORDINALITY AS t(o, i) "
                f"ORDER BY (o ->> 'logprob')::float8 DESC NULLS LAST, i LIMIT 1)", params)

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return (f"(SELECT json_extract(value, '$.key') FROM json_each({sql}) "
                f"ORDER BY json_extract(value, '$.logprob') IS NULL, json_extract(value, '$.logprob') DESC, key "
                f"LIMIT 1)", params)


class OptionCount(Func):
    """How many options an item offers: the keys of fields.options (0 when there are none)."""

    output_field = IntegerField()

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return (f"(CASE WHEN jsonb_typeof({sql} -> 'options') = 'object' "
                f"THEN (SELECT count(*) FROM jsonb_object_keys({sql} -> 'options')) ELSE 0 END)", params * 2)

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return (f"(CASE WHEN json_type({sql}, '$.options') = 'object' "
                f"THEN (SELECT count(*) FROM json_each({sql}, '$.options')) ELSE 0 END)", params * 2)
