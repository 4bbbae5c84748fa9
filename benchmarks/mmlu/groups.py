"""MMLU's four subject groups, named once: how the data files, the paper's tables and the pages say them."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    key: str  # as figures.py's Table 1 rows and the widgets' context name it
    name: str  # as subjects.csv's "group" column writes it
    title: str  # for sentences and tooltips
    short: str  # for an axis label
    shortest: str  # for an axis label on a phone, where each group has about 40 px


GROUPS = (
    Group("humanities", "humanities", "Humanities", "Humanities", "Hum."),
    Group("social_sciences", "social sciences", "Social sciences", "Soc. sci.", "Soc."),
    Group("stem", "STEM", "STEM", "STEM", "STEM"),
    Group("other", "other", "Other", "Other", "Other"),
)
BY_NAME = {group.name: group for group in GROUPS}
