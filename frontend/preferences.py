"""A person's own choices for their pages, kept on their account: the language."""
from django.conf import settings

from annotation.selectors import campaign_language

SESSION_KEY = "hb_language"


def person_language(user) -> str:
    """Their own choice, else their campaign's language, else "" (the browser's)."""
    from .models import Preferences

    chosen = Preferences.objects.filter(user=user).values_list("language", flat=True).first()
    return chosen or campaign_language(user)


def choose_language(request, language: str) -> None:
    """Keep `language` ("" for the campaign's) as the signed-in person's choice."""
    from .models import Preferences

    if language and language not in dict(settings.LANGUAGES):
        return
    Preferences.objects.update_or_create(user=request.user, defaults={"language": language})
    request.session[SESSION_KEY] = person_language(request.user)
