"""Limit/offset pagination with a ceiling: ?limit= asks for at most MAX_PAGE_SIZE rows (settings), so that
one request cannot make the server build and send a whole table."""
from django.conf import settings
from rest_framework.pagination import LimitOffsetPagination


class CappedLimitOffsetPagination(LimitOffsetPagination):
    @property
    def max_limit(self):
        return settings.MAX_PAGE_SIZE
