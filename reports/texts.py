"""Texts a report composes in English from parts (a metric's key, counts, the names of models, tasks and systems) and
shows in the reader's language. The stored report keeps the English text, as JSON and CSV name it in every language;
HTML and LaTeX find the template a text was composed from and compose it again in the reader's language from the same
parts: the parts that are texts of ours in the reader's language too, the data (names, keys, numbers) as they are
(`shown`, which reports.render reads every stored text through). One template per text, used both ways: the sections
compose with it, the renderings read it back, so that a report stored before a translation existed is shown
translated as well."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.utils.translation import gettext, gettext_noop, pgettext


@dataclass(frozen=True)
class Composed:
    """An English text with %(part)s placeholders. `texts`: the parts that are texts of ours (shown in the reader's
    language themselves); `lists`: parts that are several such texts joined by `joiner`; the other parts are data.
    `forms`: {part: the regular expression it is read with} where any text would be too loose."""

    text: str
    texts: tuple = ()
    lists: tuple = ()
    joiner: str = ", "
    forms: dict = field(default_factory=dict)
    pattern: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        pieces = re.split(r"%\((\w+)\)s", self.text)
        regex = "".join(re.escape(piece) if n % 2 == 0 else f"(?P<{piece}>{self.forms.get(piece, '.+?')})"
                        for n, piece in enumerate(pieces))
        object.__setattr__(self, "pattern", re.compile(regex, re.S))

    def __call__(self, **parts):
        """The English text (what the stored report keeps)."""
        return self.text % parts

    def read(self, text):
        """The parts `text` was composed from with this template, or None when it was not."""
        found = self.pattern.fullmatch(text)
        return found.groupdict() if found else None

    def shown(self, parts):
        """The text composed again from `parts` in the active language."""
        def part(name, value):
            if name in self.lists:
                return pgettext("list separator", ", ").join(shown(v) for v in value.split(self.joiner))
            return shown(value) if name in self.texts else value
        return gettext(self.text) % {name: part(name, value) for name, value in parts.items()}


# metrics.small_sample: "small sample: 8 items < 30, 2 raters per item < 3 (why)"; a row flagged for its coverage too
# (reports.sections.human_anchored) joins its reasons with "; ".
SMALL_SAMPLE_COUNT = Composed(gettext_noop("%(n)s %(what)s < %(minimum)s"), texts=("what",),
                              forms={"n": r"\d+", "minimum": r"\d+"})
COUNTS = r"\d+ [^,;()]+? < \d+(?:, \d+ [^,;()]+? < \d+)*"
SMALL_SAMPLE = Composed(gettext_noop("small sample: %(counts)s"), lists=("counts",), forms={"counts": COUNTS})
SMALL_SAMPLE_WHY = Composed(gettext_noop("small sample: %(counts)s (%(why)s)"), texts=("why",), lists=("counts",),
                            forms={"counts": COUNTS})
SMALL_SAMPLE_BECAUSE = Composed(gettext_noop("small sample: %(why)s"), texts=("why",), forms={"why": "[^;]+"})
# What the small-sample counts count (reports.readable.flag's `what`).
COUNTED = (gettext_noop("items"), gettext_noop("labelled items"), gettext_noop("rated items"),
           gettext_noop("items with gold"), gettext_noop("matches"), gettext_noop("comparisons"),
           gettext_noop("raters per item"), gettext_noop("raters or positions"))
# metrics.prediction_powered.coverage_short
COVERAGE_SHORT = Composed(gettext_noop("simulated coverage %(worst)s of a %(level)s interval at this size, below "
                                       "%(floor)s"))
NO_COVERAGE = Composed(gettext_noop("no coverage: %(why)s"), texts=("why",))

# A figure over the tasks that some task leaves undefined (reports.sections.multiple_choice).
UNDEFINED_ON_TASKS = Composed(gettext_noop("%(key)s is undefined on task(s) %(tasks)s"))
UNDEFINED_ON_SOME_TASK = Composed(gettext_noop("%(key)s is undefined on some task"))
UNDEFINED_ON_EVERY_TASK = Composed(gettext_noop("%(key)s is undefined on every task"))
NO_ITEM_BOTH_ANSWERED = Composed(gettext_noop("some task has no item both answered: %(why)s"), texts=("why",))

# What a judge's savings are estimated on (reports.sections.judge_card).
ACCURACY_OF = Composed(gettext_noop("accuracy of %(model)s"))
SHARE_LABELLED = Composed(gettext_noop("share of items the people label %(label)s"))
# The judge card's verdict in one sentence: may the judge replace the people, and how many labels it saves.
VERDICT_UNDEFINED = Composed(gettext_noop("The judge %(test)s; its savings are undefined here (%(why)s)."),
                             texts=("test", "why"))
VERDICT_AND = Composed(gettext_noop("The judge %(test)s (%(kind)s annotators, epsilon %(epsilon)s), and saves "
                                    "%(saved)s of the human labels on the %(estimand)s under PPI++ (pilot: rho^2 = "
                                    "%(rho)s)."), texts=("test", "estimand"))
VERDICT_BUT = Composed(gettext_noop("The judge %(test)s (%(kind)s annotators, epsilon %(epsilon)s), but saves "
                                    "%(saved)s of the human labels on the %(estimand)s under PPI++ (pilot: rho^2 = "
                                    "%(rho)s)."), texts=("test", "estimand"))
# The gold the cards' figures use.
GOLD_MADE_UNDER = Composed(gettext_noop("gold %(citation)s: made in campaign %(campaign)s under guideline version "
                                        "%(versions)s"))
GOLD_MADE_UNDER_VERSIONS = Composed(gettext_noop("gold %(citation)s: made in campaign %(campaign)s under guideline "
                                                 "versions %(versions)s"))
GOLD_OUT_OF_SCOPE = Composed(gettext_noop("gold %(citation)s: its campaign is not in this report's scope"))

# Self-chat (reports.sections.selfchat): the loop detector's rule and the section's note.
LOOP_RULE = Composed(gettext_noop("%(measure)s >= %(threshold)s with either of the two generated utterances before"))
SELFCHAT_NOTE = Composed(gettext_noop(
    "pass@N: share of judgements under which the first N utterances read as human; the loop detector (BotChat's "
    "DupDetect, whose measure and threshold the study does not publish) is our choice: %(rules)s; utterance lengths "
    "count the utterances after the seed's first two, in %(words)s (each row's words_counted_by says which its "
    "utterances needed), characters and tokens (BotChat counts GPT-4's CL100K tokens, which cannot be installed "
    "here: the tokenizer of each self-chat run's model stands in, named per row); real dialogues are counted the same "
    "way, in words and characters only"), texts=("words",), lists=("rules",), joiner="; ")

# Ratings (reports.sections.ratings): the human ceiling's rule, a run repeated over few-shot seeds.
CEILING_OF_POSITIONS = Composed(gettext_noop("%(rule)s (raters here are rating positions, not people)"),
                                texts=("rule",))
SEED_RULE = Composed(gettext_noop("mean and standard deviation (ddof 1) over %(n)s seeds' example draws"))

# Why a report cites its gold (reports.gold): who chose or pinned it, when and why, or why the source gold.
DAY = r"\d{4}-\d{2}-\d{2}"
GOLD_PINNED_BY_BECAUSE = Composed(gettext_noop("pinned for campaign %(campaign)s by its managers (%(version)s by "
                                               "%(user)s on %(date)s): %(reason)s"), forms={"date": DAY})
GOLD_PINNED_BY = Composed(gettext_noop("pinned for campaign %(campaign)s by its managers (%(version)s by %(user)s on "
                                       "%(date)s)"), forms={"date": DAY})
GOLD_PINNED_ON_BECAUSE = Composed(gettext_noop("pinned for campaign %(campaign)s by its managers (%(version)s on "
                                               "%(date)s): %(reason)s"), forms={"date": DAY})
GOLD_PINNED_ON = Composed(gettext_noop("pinned for campaign %(campaign)s by its managers (%(version)s on %(date)s)"),
                          forms={"date": DAY})
GOLD_PINNED = Composed(gettext_noop("pinned for campaign %(campaign)s by its managers (%(version)s)"))
GOLD_NOT_PINNED = Composed(gettext_noop("no gold is pinned for campaign %(campaign)s: %(source)s"), texts=("source",))
GOLD_PINNED_DECLINED = Composed(gettext_noop("%(source)s, because the pinned %(version)s cannot score this campaign's "
                                             "raters"), texts=("source",))
GOLD_NOT_CHOSEN = Composed(gettext_noop("no gold is chosen for benchmark %(benchmark)s: %(source)s"),
                           texts=("source",))
GOLD_SOURCE_CHOSEN = Composed(gettext_noop("the source gold was chosen for the benchmark: %(source)s"),
                              texts=("source",))
GOLD_CHOSEN_BY_BECAUSE = Composed(gettext_noop("chosen for benchmark %(benchmark)s by %(user)s on %(date)s: "
                                               "%(reason)s"), forms={"date": DAY})
GOLD_CHOSEN_BY = Composed(gettext_noop("chosen for benchmark %(benchmark)s by %(user)s on %(date)s"),
                          forms={"date": DAY})
GOLD_CHOSEN_ON_BECAUSE = Composed(gettext_noop("chosen for benchmark %(benchmark)s on %(date)s: %(reason)s"),
                                  forms={"date": DAY})
GOLD_CHOSEN_ON = Composed(gettext_noop("chosen for benchmark %(benchmark)s on %(date)s"), forms={"date": DAY})
GOLD_REQUESTED = Composed(gettext_noop("%(version)s was asked for in the request (gold_version=%(requested)s)"))

# The papers' tables beside ours (reports.sections.paper): a row of ours by what its figure is, a figure's missing
# reason, a row label of ours around a system's name.
PAPER_OVERALL_OF = Composed(gettext_noop("the paper's Overall is the mean of its %(tasks)s tasks; %(ran)s ran here"),
                            forms={"tasks": r"\d+", "ran": r"\d+"})
MAJORITY_OF = Composed(gettext_noop("a majority of %(m)s of %(k)s right"), forms={"m": r"\d+", "k": r"\d+"})
HUMAN_MAJORITY_FIGURE = Composed(gettext_noop("the campaign's raters on the items they answered, an item right with "
                                              "%(rule)s (the paper: 3 experts on 50 items per task, 2 of 3)"),
                                 texts=("rule",))
AGAINST_GOLD = Composed(gettext_noop("%(task)s / %(quality)s against gold"))
DOMAIN_ACCURACY = Composed(gettext_noop("accuracy on the gold items of domain %(domain)s"), texts=("domain",))
EXAMPLES_SPEARMAN = Composed(gettext_noop("Spearman against the mean human rating (the mean over seeds); examples: "
                                          "%(strategy)s %(k)s"), forms={"k": r"\d+"})
JUDGED_TASK = Composed(gettext_noop("task %(task)s, judged by %(judge)s (the paper's judge: GPT-4-0613)"))
BEFORE_LOOP = Composed(gettext_noop("the mean share of the %(n)s dialogues' utterances before their loop, the "
                                    "triggering one included (the paper: 16 for a dialogue without repetition)"),
                       forms={"n": r"\d+"})
TOKENS_COUNTED_BY = Composed(gettext_noop("tokens counted by %(counter)s (the paper: GPT-4's CL100K)"))
SAME_VERDICT = Composed(gettext_noop("task %(task)s: share of pairs with the same verdict"))
REPLIES_READ = Composed(gettext_noop("%(key)s on %(n)s of the %(total)s items, %(valid)s replies read (the others the "
                                     "study's random stand-in)"), forms={"n": r"\d+", "total": r"\d+", "valid": r"\d+"})
JUDGED_ROW = Composed(gettext_noop("%(system)s (judge %(judge)s)"), forms={"judge": r"[^()]+"})

TEMPLATES = (SMALL_SAMPLE_WHY, SMALL_SAMPLE, SMALL_SAMPLE_BECAUSE, SMALL_SAMPLE_COUNT, COVERAGE_SHORT, NO_COVERAGE,
             UNDEFINED_ON_TASKS, UNDEFINED_ON_SOME_TASK, UNDEFINED_ON_EVERY_TASK, NO_ITEM_BOTH_ANSWERED, ACCURACY_OF,
             SHARE_LABELLED, VERDICT_UNDEFINED, VERDICT_AND, VERDICT_BUT, GOLD_MADE_UNDER_VERSIONS, GOLD_MADE_UNDER,
             GOLD_OUT_OF_SCOPE, LOOP_RULE, SELFCHAT_NOTE, CEILING_OF_POSITIONS, SEED_RULE, GOLD_PINNED_BY_BECAUSE,
             GOLD_PINNED_BY, GOLD_PINNED_ON_BECAUSE, GOLD_PINNED_ON, GOLD_PINNED, GOLD_NOT_PINNED, GOLD_PINNED_DECLINED,
             GOLD_NOT_CHOSEN, GOLD_SOURCE_CHOSEN, GOLD_CHOSEN_BY_BECAUSE, GOLD_CHOSEN_BY, GOLD_CHOSEN_ON_BECAUSE,
             GOLD_CHOSEN_ON, GOLD_REQUESTED, PAPER_OVERALL_OF, MAJORITY_OF, HUMAN_MAJORITY_FIGURE, AGAINST_GOLD,
             DOMAIN_ACCURACY, EXAMPLES_SPEARMAN, JUDGED_TASK, BEFORE_LOOP, TOKENS_COUNTED_BY, SAME_VERDICT,
             REPLIES_READ, JUDGED_ROW)


def shown(text):
    """A stored text (a title, header, note, reason or flag) in the reader's language: the catalog's text where it
    has this one, else the template it was composed from composed again (several such texts joined by "; " each
    apart), else as it is; an empty one stays empty."""
    if not isinstance(text, str) or not text:
        return text
    found = gettext(text)
    if found != text:
        return found
    for template in TEMPLATES:
        parts = template.read(text)
        if parts is not None:
            return template.shown(parts)
    if "; " in text:
        pieces = text.split("; ")
        translated = [shown(piece) for piece in pieces]
        if translated != pieces:
            return pgettext("list separator", "; ").join(translated)
    return text
