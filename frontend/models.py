from django.conf import settings
from django.db import models


class SignInAttempts(models.Model):
    """Sign-in attempts counted in one window for one key (a username from an address, or an address), by the
    sign-in throttle (frontend/throttling.py). A row is locked while it is counted, so that attempts sent at
    once are counted one after the other, each before its password is checked."""

    key = models.CharField(max_length=64, primary_key=True)
    count = models.PositiveIntegerField(default=0)
    window_ends = models.DateTimeField(db_index=True)

    def __str__(self):
        return f"{self.key}: {self.count} until {self.window_ends:%H:%M:%S}"


class Preferences(models.Model):
    """What a person chose for their own pages: the language (empty: their campaign's, else the browser's)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences")
    language = models.CharField(max_length=10, blank=True, default="", choices=settings.LANGUAGES)

    class Meta:
        verbose_name_plural = "preferences"

    def __str__(self):
        return f"{self.user}: {self.language or 'campaign language'}"
