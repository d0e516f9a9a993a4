"""perf/annotator_load.py's ratio to the floor: each round's HumanBaseline API cycle against the floor of the
same round, the median over rounds; the page's cycle and open levels stay out of it."""
from perf.annotator_load import floor_ratios


def row(target, users, rate, round_no, mode="closed"):
    return {"target": target, "users": users, "cycles_per_s": rate, "mode": mode, "round": round_no}


def test_each_round_is_paired_with_its_own_floor_and_the_median_taken():
    rows = [row("humanbaseline", 32, 200.0, 1), row("humanbaseline-page", 32, 150.0, 1),
            row("psycopg-floor", 32, 400.0, 1),
            row("humanbaseline", 32, 100.0, 2), row("psycopg-floor", 32, 300.0, 2),
            row("humanbaseline", 32, 250.0, 3), row("psycopg-floor", 32, 450.0, 3),
            row("humanbaseline", 8, 100.0, 1), row("psycopg-floor", 8, 150.0, 1),
            row("humanbaseline", None, 50.0, 1, mode="open"), row("psycopg-floor", None, 50.0, 1, mode="open")]
    assert floor_ratios(rows) == [{"users": 32, "ratios": [2.0, 3.0, 1.8], "median": 2.0},
                                  {"users": 8, "ratios": [1.5], "median": 1.5}]


def test_a_round_without_its_floor_gives_no_ratio():
    assert floor_ratios([row("humanbaseline", 32, 200.0, 1)]) == []
