"""The language of a signed-in person's pages and API answers: their own choice (Preferences), else the language
of their campaign (CampaignSettings.language), else what LocaleMiddleware found (the switcher's cookie, the
browser's Accept-Language). Pages look it up and keep it in the session; API calls made from the pages use the
session's, so a label's submission costs no query more."""
from django.utils import translation

from .preferences import SESSION_KEY, person_language


class PersonLanguageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        session = getattr(request, "session", None)
        if session is not None and request.user.is_authenticated:
            language = session.get(SESSION_KEY)
            if language is None or not request.path.startswith("/api/"):
                language = person_language(request.user)
                if session.get(SESSION_KEY) != language:
                    session[SESSION_KEY] = language
            if language:
                translation.activate(language)
                request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)
