import pytest

from benchmarks.actions import import_items
from benchmarks.importers import ImportFailure
from benchmarks.models import Item, Task


def test_mutual_import_and_reimport(db, mutual_path):
    summary = import_items(mutual_path, "mutual", "mutual-test")
    assert (summary.tasks_created, summary.items_created, summary.items_unchanged) == (1, 547, 0)
    task = Task.objects.get(benchmark__slug="mutual-test")
    assert task.slug == "human-dialogue" and task.primary_key == "is_ai"
    item = Item.objects.get(task=task, external_id="MT-1")
    assert item.dialogue[0] == {"speaker": "A", "text": "You look rather pale. Are you feeling well?"}
    assert item.dialogue[1]["speaker"] == "B" and item.source_gold == {"is_ai": False}
    assert Item.objects.filter(task=task, meta__n_utterances__gte=4).count() == 222

    again = import_items(mutual_path, "mutual", "mutual-test")
    assert (again.tasks_created, again.items_created, again.items_unchanged) == (0, 0, 547)


def test_mutual_refuses_a_one_utterance_dialogue(db, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x", "utterances": ["only one"]}\n')
    with pytest.raises(ImportFailure, match="line 1.*utterances"):
        import_items(path, "mutual", "bad")
    assert not Item.objects.exists()
