"""Cells written to CSV files that people open in spreadsheets.

A text cell starting with =, +, -, @ (or a tab or carriage return) is read as a formula by Excel,
LibreOffice and Google Sheets; such a cell is written with a leading single quote, which they show
as text. Numbers stay numbers (a negative score is -1, not '-1).
"""
import numbers

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def is_number(value) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)
