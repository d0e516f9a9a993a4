"""A report row's figures: a statistic that cannot be computed is null, with the reason kept in the
row's `undefined`."""
from __future__ import annotations

import numpy as np


def put(row, key, value, reason=None):
    """Set a statistic; a None value records why in row["undefined"]."""
    row[key] = value
    if value is None:
        row["undefined"][key] = reason or "undefined"
    return row


def note(row, key, text):
    """Say something a defined figure cannot say by itself (e.g. a p-value of 1 from no discordant items): kept in
    row["notes"] and shown beside the figure."""
    if text:
        row.setdefault("notes", {})[key] = text
    return row


def new_row(**keys):
    return {**keys, "undefined": {}}


def mean_or_none(values):
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None

