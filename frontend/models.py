from django.conf import settings
from django.db import models


class SignInAttempts(models.Model):
    """Failed sign-in attempts counted in one window for one key (an account, an address, or a browser known to
    an account), by the sign-in throttle (frontend/throttling.py), and the attempts whose password is being
    checked now. A row is locked while it is read and changed, so that attempts sent at once take their places
    one after the other, each before its password is checked."""

    key = models.CharField(max_length=64, primary_key=True)
    count = models.PositiveIntegerField(default=0, help_text="Failed attempts in the window")
    in_flight = models.PositiveIntegerField(default=0, help_text="Attempts whose password is being checked")
    window_ends = models.DateTimeField(db_index=True)

    def __str__(self):
        return f"{self.key}: {self.count} (+{self.in_flight}) until {self.window_ends:%H:%M:%S}"


class Preferences(models.Model):
    """What a person chose for their own pages: the language (empty: their campaign's, else the browser's)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences")
    language = models.CharField(max_length=10, blank=True, default="", choices=settings.LANGUAGES)

    class Meta:
        verbose_name_plural = "preferences"

    def __str__(self):
        return f"{self.user}: {self.language or 'campaign language'}"
