from django import forms
from django.contrib import admin, messages

from . import actions
from .models import Backend, EvalRun, ModelSpec, Prediction, RunChunk, RunEvent

API_POINTERS = ("backend", "endpoint", "api_model", "api_key_env")


class ModelSpecForm(forms.ModelForm):
    class Meta:
        model = ModelSpec
        exclude = ("sha256", "created_by")

    def clean_backend(self):
        # A model behind an API is registered by the one action that checks its endpoint and key variable against
        # the operator's settings and probes it (the API and the command call it); never from here.
        if self.cleaned_data["backend"] == Backend.API:
            raise forms.ValidationError("Register a model behind an API with POST /api/v1/models/ or manage.py "
                                        "register_api_model: its endpoint and key variable are checked and it is "
                                        "probed first.")
        return self.cleaned_data["backend"]

    def clean_source(self):
        source = self.cleaned_data["source"]
        try:
            self.sha256 = actions.source_sha256(source)
        except FileNotFoundError as error:
            raise forms.ValidationError(f"model files not found: {error}") from None
        return source


@admin.register(ModelSpec)
class ModelSpecAdmin(admin.ModelAdmin):
    form = ModelSpecForm
    list_display = ("name", "source", "dtype", "device", "short_sha", "created_at")
    search_fields = ("name", "source", "sha256")

    def get_readonly_fields(self, request, obj=None):
        # Runs cite the spec: once saved, what it points at stays put (register a new one instead).
        # An API model's endpoint and key variable change only through a new registration (actions.register_api_model).
        return ("sha256", "created_by", "created_at") + (("name", "source") + API_POINTERS if obj else ())

    @admin.display(description="sha256")
    def short_sha(self, spec):
        return spec.sha256[:12]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.sha256, obj.created_by = form.sha256, request.user
        super().save_model(request, obj, form, change)


class RunChunkInline(admin.TabularInline):
    model = RunChunk
    fields = ("index", "state", "attempts", "worker", "error", "started_at", "finished_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False


class RunEventInline(admin.TabularInline):
    model = RunEvent
    fields = ("created_at", "kind", "chunk", "actor", "reason", "figures")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(EvalRun)
class EvalRunAdmin(admin.ModelAdmin):
    list_display = ("id", "model", "benchmark", "mode", "state", "items_done", "items_total", "chunks_done",
                    "chunks_total", "created_at")
    list_filter = ("state", "mode", "model", "benchmark")
    readonly_fields = [f.name for f in EvalRun._meta.fields] + ["tasks"]
    inlines = [RunChunkInline, RunEventInline]
    actions = ["cancel_runs"]

    def has_add_permission(self, request):
        return False  # started with the API or `manage.py score`, which cut the run into chunks

    @admin.action(description="Cancel selected runs")
    def cancel_runs(self, request, queryset):
        for run in queryset:
            try:
                actions.cancel_run(run, user=request.user, reason="cancelled from the admin")
            except actions.RunError as error:
                self.message_user(request, str(error), messages.WARNING)


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = ("run", "item", "variant", "answer", "gold", "correct", "parse_status", "rating")
    list_filter = ("run", "parse_status", "correct")
    search_fields = ("item__external_id",)
    list_select_related = ("item",)
    readonly_fields = [f.name for f in Prediction._meta.fields]

    def has_add_permission(self, request):
        return False
