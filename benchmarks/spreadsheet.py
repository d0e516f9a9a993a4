"""Cells written to CSV files that people open in spreadsheets.

A text cell starting with =, +, -, @ (or a tab or carriage return) is read as a formula by Excel,
LibreOffice and Google Sheets; such a cell is written with a leading single quote, which they show
as text (OWASP "CSV injection"). Numbers stay numbers (a negative score is -1, not '-1), and so does
text that is a plain number ("-0.25").
"""
import numbers
import re

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value):
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not NUMBER.fullmatch(value):
        return "'" + value
    return value


def is_number(value) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)
