"""MMLU's four subject groups, named once: how the data files, the paper's tables and the pages say them."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    key: str  # as figures.py's Table 1 rows and the widgets' context name it
    name: str  # as subjects.csv's "group" column writes it
    title: str  # for sentences and tooltips
    short: str  # for an axis label


GROUPS = (
    Group("humanities", "humanities", "Humanities", "Humanities"),
    Group("social_sciences", "social sciences", "Social sciences", "Soc. sci."),
    Group("stem", "STEM", "STEM", "STEM"),
    Group("other", "other", "Other", "Other"),
)
BY_NAME = {group.name: group for group in GROUPS}
