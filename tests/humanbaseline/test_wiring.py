"""When Django starts, the top app fills the slots where one app reads another's data without importing it."""
from annotation import policy, selectors
from annotation.importers import FED_SOURCE
from benchmarks import permissions
from modeleval import human_labels


def test_model_evaluation_reads_annotations_labels():
    provider = human_labels.source.provider
    assert provider.accepted_final_labels is selectors.accepted_final_labels
    assert (provider.fed_ratings.func, provider.fed_ratings.keywords) == (selectors.imported_ratings,
                                                                        {"source": FED_SOURCE})
    assert (provider.has_fed_ratings.func, provider.has_fed_ratings.keywords) == (selectors.has_imported_ratings,
                                                                                {"source": FED_SOURCE})


def test_benchmarks_read_campaign_roles_from_annotation():
    assert permissions.member_scope.provider is policy.member_scope


def test_active_selection_reads_a_judge_runs_uncertainty_from_model_evaluation():
    from annotation import judges
    from modeleval.selectors import item_uncertainty

    assert judges.source.provider is item_uncertainty
