"""Audit of a QC sample: draw it again from the inputs stored on the QC review and compare.

At hand-in the sample is drawn from the campaign seed, the batch, the round and a secret drawn then
(annotation/qc.py); the review keeps the secret and the candidates (item, final label) it was drawn
from. `redraw_qc_sample` repeats the draw; `python manage.py audit_qc_sample REVIEW_ID` prints both
samples and says whether they match."""
from .qc import draw_sample, sample_seed


class NotAuditable(Exception):
    pass


def redraw_qc_sample(review):
    """The batch item ids the stored inputs draw, in the order of the stored sample's positions."""
    inputs = review.sample_inputs
    if not review.sample_secret or not inputs:
        raise NotAuditable(f"QC review {review.pk} was drawn before draw inputs were stored; it cannot be re-drawn.")
    return draw_sample([tuple(c) for c in inputs["candidates"]], inputs["size"],
                       sample_seed(inputs["public_seed"], review.sample_secret), stratify=inputs["stratify"])


def stored_qc_sample(review):
    return list(review.sample.order_by("position").values_list("batch_item_id", flat=True))
