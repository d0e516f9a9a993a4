"""Signals other apps may listen to; sent on commit, so a listener never sees a rolled-back change."""
from django.dispatch import Signal

# sender=Batch, batch=<Batch>, event=<Event>
batch_transitioned = Signal()
