"""gunicorn settings for the web service; every value can be overridden from the environment."""
import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
# Requests are short and mostly wait on PostgreSQL: threads per process keep memory low.
workers = int(os.environ.get("GUNICORN_WORKERS", max(2, multiprocessing.cpu_count())))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
worker_class = "gthread"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
keepalive = 5
# A worker is replaced after max_requests requests (a guard against slow leaks); 0 turns recycling off.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "5000"))
# Each worker draws its own limit, max_requests + a random 0..max_requests_jitter, when it starts. The workers
# share the load evenly, so with equal limits (or a jitter that is small beside max_requests) they all reach
# theirs within a few seconds of each other and restart together, while a new worker spends seconds importing
# Django before it serves: under load, one worker was left serving alone for about 4 s. A quarter of
# max_requests spreads the first restarts over a quarter of a worker's life, and each restart draws again, so
# the workers stay out of step afterwards. GUNICORN_MAX_REQUESTS_JITTER overrides it.
max_requests_jitter = int(os.environ.get("GUNICORN_MAX_REQUESTS_JITTER", max_requests // 4))
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
errorlog = "-"
