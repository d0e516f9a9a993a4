import json

from ..build import public


def render_json(report):
    # allow_nan=False: a NaN that slipped through is a bug to surface, not a value to print.
    return json.dumps(public(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
