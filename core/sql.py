"""Statements of the annotator cycle kept as SQL text, built once from the models' _meta.

The ORM compiles a queryset again on every request, and on the lease and submit paths that compile costs
more CPU than the statement itself. The text here is the statement the ORM would send; column lists come
from _meta (so they follow the migrations) and rows become model instances through the fields' own
converters, as the ORM does it."""
from datetime import datetime
from functools import cache

from django.db import connection


@cache
def _fields(model):
    return tuple(model._meta.concrete_fields)


def columns(model, alias):
    """Every concrete column of `model` under the table alias `alias`, in the order `instance` reads them."""
    return ", ".join(f'{alias}."{field.column}"' for field in _fields(model))


@cache
def _loader(model):
    fields = _fields(model)
    converters = []
    for i, field in enumerate(fields):
        col = field.get_col(model._meta.db_table)
        found = connection.ops.get_db_converters(col) + field.get_db_converters(connection)
        if found:
            converters.append((i, found, col))
    return [field.attname for field in fields], converters


def instance(model, row, start=0):
    """(the instance whose columns begin at row[start], where the next one begins); None for a row of NULLs
    from an outer join."""
    names, converters = _loader(model)
    end = start + len(names)
    values = list(row[start:end])
    if values[0] is None:
        return None, end
    for i, found, col in converters:
        for convert in found:
            values[i] = convert(values[i], col, connection)
    return model.from_db(connection.alias, names, values), end


def lock(clause):
    """A row-lock clause where the database has them (SQLite serialises writers instead)."""
    return f" {clause}" if connection.features.has_select_for_update else ""


def _cursor():
    # On PostgreSQL the parameters are bound on the server, so that a statement run on every request is prepared
    # once per connection (core/postgresql/base.py); other databases take Django's cursor.
    bound = getattr(connection, "bound_cursor", None)
    return bound() if bound else connection.cursor()


def fetch_one(sql, params):
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def fetch_all(sql, params):
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def execute(sql, params):
    """Runs a write; returns how many rows it touched."""
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def params(*values):
    """Statement parameters: choices as their plain values (a driver may write an enum by its name), datetimes
    as the database's datetime columns take them (as the ORM adapts them)."""
    return [str(v) if isinstance(v, str) else connection.ops.adapt_datetimefield_value(v) if isinstance(v, datetime)
            else v for v in values]


@cache
def _insert_sql(model):
    fields = [field for field in _fields(model) if not field.primary_key]
    names = ", ".join(f'"{field.column}"' for field in fields)
    marks = ", ".join(["%s"] * len(fields))
    return (f'INSERT INTO "{model._meta.db_table}" ({names}) VALUES ({marks}) '
            f'RETURNING "{model._meta.pk.column}"', fields)


def insert(obj):
    """Saves a new instance with one INSERT ... RETURNING, its values prepared by its fields as save() does
    (defaults, auto_now_add); the models written this way have no save() override and no signal receivers."""
    text, fields = _insert_sql(type(obj))
    values = [field.get_db_prep_save(field.pre_save(obj, True), connection) for field in fields]
    obj.pk = fetch_one(text, values)[0]
    obj._state.adding, obj._state.db = False, connection.alias
    return obj


def prepared(model, name, value):
    """`value` as the field `name` of `model` writes it (a JSON value wrapped for the driver, and so on)."""
    return model._meta.get_field(name).get_db_prep_save(value, connection)


def loaded(model, name, value):
    """A value of the column of field `name` as the ORM would read it (JSON decoded, and so on)."""
    names, converters = _loader(model)
    i = names.index(model._meta.get_field(name).attname)
    for j, found, col in converters:
        if j == i:
            for convert in found:
                value = convert(value, col, connection)
    return value


def literals(values):
    """Choice values of our own models written into a statement's text, never a person's input: where a
    condition matches a partial index (pending items, live leases), a prepared statement's generic plan can use
    the index only when the condition is in the text, not a parameter."""
    for value in values:
        if not str(value).replace("_", "").isalnum():
            raise ValueError(f"not a choice value: {value!r}")
    return ", ".join(f"'{value}'" for value in values)


def marks(values):
    """Placeholders for an IN list of `values`."""
    return ", ".join(["%s"] * len(values))


def execute_all(on, statements):
    """Each statement in turn on the connection `on`, without parameters (schema statements: triggers)."""
    with on.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)
