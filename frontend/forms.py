"""Forms of the manager's pages. They read and check what was typed; the actions decide and write."""
import re

from django import forms
from django.conf import settings as conf
from django.forms.models import fields_for_model
from django.utils.translation import get_language_info
from django.utils.translation import gettext_lazy as _

from annotation.models import WORKER_ROLES, CampaignSettings, Protocol, Role
from annotation.presets import PRESETS, meaning
from benchmarks.importers import FORMATS
from benchmarks.models import Benchmark
from modeleval.selectors import run_choice, uncertainty_runs

BY_LANGUAGE = "guidelines_by_language"


def guidelines_field_name(code):
    """The settings forms' field of the guidelines in one language (a code of settings.LANGUAGES)."""
    return "guidelines_" + code.replace("-", "_")


def language_name(code):
    """A language's English name, with its own name where that differs: 'Korean (한국어)'."""
    info = get_language_info(code)
    return info["name"] if info["name"] == info["name_local"] else f"{info['name']} ({info['name_local']})"


def settings_fields():
    """A form field per editable setting, with the model's validators and the setting's meaning as help; the
    guidelines per language are a text field per language of settings.LANGUAGES, after the default guidelines."""
    fields = {}
    for name, field in fields_for_model(CampaignSettings, fields=CampaignSettings.EDITABLE).items():
        field.help_text = meaning(name)
        field.label = field.label.replace("Qc ", "QC ")
        if name == "guidelines":
            field.widget = forms.Textarea(attrs={"rows": 4})
        if name == BY_LANGUAGE:
            for code, _ in conf.LANGUAGES:
                fields[guidelines_field_name(code)] = forms.CharField(
                    required=False, label=f"Guidelines in {language_name(code)}",
                    help_text=meaning(name).replace("that language", get_language_info(code)["name"]),
                    widget=forms.Textarea(attrs={"rows": 3, "lang": code}))
            continue
        fields[name] = field
    return fields


def guidelines_by_language(data):
    """{language code: text} of the per-language fields filled in (`data`: cleaned data)."""
    texts = {code: data.get(guidelines_field_name(code)) or "" for code, _ in conf.LANGUAGES}
    return {code: text for code, text in texts.items() if text.strip()}


class SettingsForm(forms.Form):
    def __init__(self, *args, benchmark=None, initial=None, **kwargs):
        initial = dict(initial or {})
        for code, text in (initial.pop(BY_LANGUAGE, None) or {}).items():
            initial[guidelines_field_name(code)] = text
        super().__init__(*args, initial=initial, **kwargs)
        self.fields.update(settings_fields())
        if benchmark is not None:  # active selection's judge: a run of this benchmark, by name
            self.fields["active_judge_run"].widget = forms.Select(choices=[("", "none")] + [
                (run.pk, run_choice(run)) for run in uncertainty_runs(benchmark)])

    def settings(self):
        return {name: guidelines_by_language(self.cleaned_data) if name == BY_LANGUAGE else self.cleaned_data[name]
                for name in CampaignSettings.EDITABLE}

    def add_action_errors(self, error):
        """Put an ActionError's per-field messages next to their fields."""
        for name, messages in (error.extra.get("errors") or {}).items():
            self.add_error(name if name in self.fields else None, messages)
        if not error.extra.get("errors"):
            self.add_error(None, error.detail)


class SettingsChangeForm(SettingsForm):
    note = forms.CharField(max_length=300, required=False, help_text="Why the settings change (kept with the version).")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.order_fields([name for name in self.fields if name != "note"] + ["note"])  # next to the button

    def changes(self):
        changes = {name: self.cleaned_data[name] for name in self.changed_data if name in CampaignSettings.EDITABLE}
        if any(guidelines_field_name(code) in self.changed_data for code, _ in conf.LANGUAGES):
            changes[BY_LANGUAGE] = guidelines_by_language(self.cleaned_data)
        return changes


class PresetChoiceForm(forms.Form):
    """Step 1 of a new campaign: the benchmark and the protocol preset whose values fill the settings."""
    benchmark = forms.ModelChoiceField(Benchmark.objects.order_by("slug"), to_field_name="slug",
                                       empty_label="choose a benchmark")
    preset = forms.ChoiceField(choices=[(key, p.name) for key, p in PRESETS.items()])


class CampaignForm(SettingsForm):
    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    protocol = forms.ChoiceField(choices=Protocol.choices)
    worker_role = forms.ChoiceField(choices=[(role.value, f"{role.label}s") for role in WORKER_ROLES],
                                    required=False, label="Who labels the items", help_text=(
                                        "The role of the people who label: add them under this role on the People "
                                        "page. Experts who label vote blind (DialogBench's 3-expert baseline, a gold "
                                        "panel)."))
    tasks = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple,
                                      help_text="The tasks of the benchmark this campaign labels.")
    benchmark = forms.CharField(widget=forms.HiddenInput)
    preset = forms.CharField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, benchmark, **kwargs):
        super().__init__(*args, benchmark=benchmark, **kwargs)
        self.fields["tasks"].choices = [(t.slug, f"{t.names} ({t.slug})") for t in benchmark.tasks.order_by("slug")]
        # Campaign fields first, then the settings in the model's order.
        order = ["name", "description", "protocol", "worker_role", "tasks", "benchmark", "preset"]
        self.order_fields(order + [name for name in self.fields if name not in order])

    def clean_worker_role(self):
        """Left out: the preset's labelling role (Preset.worker_role), else the protocol's (create_campaign)."""
        preset = PRESETS.get(self.data.get("preset") or "")
        return self.cleaned_data.get("worker_role") or (preset.worker_role if preset else None)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """One file or several (a Hugging Face dataset's Parquet files); cleaned to a list."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        files = data if isinstance(data, (list, tuple)) else [data]
        return [super(MultipleFileField, self).clean(one, initial) for one in files]


# The upload page's choice for a Hugging Face dataset (reports.hf_dataset), beside the item formats.
HF_FORMAT = "hf"


class UploadForm(forms.Form):
    file = MultipleFileField(help_text=_("A data file in one of the import formats (see the table below); for a "
                                         "Hugging Face dataset, its folder as a zip or its Parquet files."))
    benchmark = forms.ModelChoiceField(Benchmark.objects.order_by("slug"), to_field_name="slug", required=False,
                                       empty_label="a new benchmark (give its slug)",
                                       help_text="Items are added to this benchmark; unchanged items are skipped.")
    new_benchmark = forms.SlugField(required=False, label="New benchmark slug",
                                    help_text="Lowercase letters, digits and hyphens, e.g. diqad-2026.")
    format = forms.ChoiceField(required=False, choices=[("", "recognise from the file")]
                               + [(name, name) for name in sorted(FORMATS)] + [(HF_FORMAT, HF_FORMAT)])
    task = forms.CharField(required=False, max_length=100, label="Task",
                           help_text="For a released DialogBench file not named after its task: the task, e.g. "
                                     "Emotion Detection. Leave empty otherwise.")

    def clean(self):
        data = super().clean()
        chosen, new = data.get("benchmark"), data.get("new_benchmark")
        if chosen and new:
            raise forms.ValidationError("Choose a benchmark or give a new slug, not both.")
        if not chosen and not new and "new_benchmark" not in self.errors:
            self.add_error("new_benchmark", "Give the new benchmark's slug, or choose a benchmark.")
        if new and Benchmark.objects.filter(slug=new).exists():
            self.add_error("new_benchmark", f"A benchmark {new} exists already; choose it in the list.")
        data["slug"] = chosen.slug if chosen else new
        if len(data.get("file") or []) > 1 and data.get("format") not in ("", HF_FORMAT):
            self.add_error("file", _("Several files are one Hugging Face dataset's Parquet files; other formats come "
                                     "one file at a time."))
        return data


ROLE_CHOICES = [(role.value, role.label) for role in Role]
SEPARATORS = re.compile(r"[\s,;]+")


class AccountsForm(forms.Form):
    people = forms.CharField(widget=forms.Textarea(attrs={"rows": 5}), label="New accounts",
                             help_text="One person a line: a username, optionally followed by an email "
                                       "(separated by a space, comma or semicolon).")
    role = forms.ChoiceField(choices=ROLE_CHOICES, initial=Role.ANNOTATOR, label="Role in this campaign")

    def clean_people(self):
        people = []
        for number, line in enumerate(self.cleaned_data["people"].splitlines(), start=1):
            parts = [part for part in SEPARATORS.split(line.strip()) if part]
            if not parts:
                continue
            if len(parts) > 2:
                raise forms.ValidationError(f"Line {number}: expected a username and an optional email, "
                                            f"got {len(parts)} words.")
            people.append((parts[0], parts[1] if len(parts) == 2 else ""))
        if not people:
            raise forms.ValidationError("Give at least one username.")
        return people


class MembersForm(forms.Form):
    usernames = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), label="Usernames",
                                help_text="Existing accounts, separated by spaces, commas or new lines.")
    role = forms.ChoiceField(choices=ROLE_CHOICES, initial=Role.ANNOTATOR)

    def clean_usernames(self):
        names = [name for name in SEPARATORS.split(self.cleaned_data["usernames"]) if name]
        if not names:
            raise forms.ValidationError("Give at least one username.")
        return list(dict.fromkeys(names))


class PlannerForm(forms.Form):
    """The campaign page's planner: a judge run and the interval width wanted."""
    judge = forms.ModelChoiceField(queryset=None, empty_label=None, label="Judge run",
                                   help_text="A model run on this benchmark whose answers stand in for a person's.")
    width = forms.FloatField(min_value=0.001, max_value=10, initial=0.05, label="Interval width wanted",
                             help_text="The full width of the interval (high minus low), e.g. 0.05 for ±2.5 points "
                                       "of accuracy.")
    confidence = forms.TypedChoiceField(choices=[(0.9, "90%"), (0.95, "95%"), (0.99, "99%")], coerce=float,
                                        initial=0.95, label="Confidence")

    def __init__(self, *args, judges, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = judges
        self.fields["judge"].label_from_instance = run_choice


class VerdictsForm(forms.Form):
    """Answers made elsewhere (modeleval.outside_runs): a judge's verdicts, lm-evaluation-harness' samples or an
    Inspect log; the file, where they belong and who made them."""

    FORMATS = [("jsonl", _("Verdicts in JSON lines")),
               ("lm-eval", _("lm-evaluation-harness samples (samples_*.jsonl of --log_samples)")),
               ("inspect", _("Inspect eval log (.json)"))]
    format = forms.ChoiceField(choices=FORMATS, required=False, initial="jsonl", label=_("Format"))
    file = forms.FileField(label=_("File"),
                           help_text=_('Verdicts: JSON lines, one per line: {"item": "<external id>", "answer": ...}; '
                                       "lm-eval: one samples file (one task); Inspect: the log"))
    benchmark = forms.ModelChoiceField(Benchmark.objects.order_by("slug"), to_field_name="slug",
                                       label=_("Benchmark"))
    task = forms.SlugField(max_length=100, required=False, label=_("Task"),
                           help_text=_("The task's slug, e.g. diqad-quality (verdicts: required; lm-eval and "
                                       "Inspect: matched by the items' ids unless given)"))
    judge = forms.CharField(max_length=200, required=False, label=_("Judge or model"),
                            help_text=_("The name the run is kept under, e.g. the model the tool or API called "
                                        "(Inspect: the log's model unless given)"))
    judge_settings = forms.JSONField(required=False, initial=dict, label=_("Judge settings"),
                                     help_text=_("A JSON object: prompt, temperature, tool, date..."),
                                     widget=forms.Textarea(attrs={"rows": 3}))

    def clean_format(self):
        return self.cleaned_data.get("format") or "jsonl"

    def clean_judge_settings(self):
        value = self.cleaned_data.get("judge_settings")
        if value in (None, ""):
            return {}
        if not isinstance(value, dict):
            raise forms.ValidationError(_("The judge's settings must be a JSON object."))
        return value
