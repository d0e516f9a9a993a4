"""Memory of a scoring process, measured alike on both sides of perf/scoring_vs_lm_eval.py (this file
is imported by the lm-eval worker too, in its own venv: it needs psutil only)."""

import resource
import threading


class PeakRSS:
    """Highest resident set size seen while the block runs, sampled every `interval` s.
    ru_maxrss covers the whole process life (model load included); this is the scoring
    part alone."""

    def __init__(self, interval=0.005):
        import psutil

        self.process, self.interval = psutil.Process(), interval
        self.peak = self.before = 0

    def _sample(self):
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, self.process.memory_info().rss)

    def __enter__(self):
        self.before = self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)


def max_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


