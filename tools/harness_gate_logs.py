"""Real lm-evaluation-harness ``--log_samples`` files for the release gate's tests, as a new user makes
them: the harness's own ``mmlu_<subject>`` (letter, metric ``acc``) and ``mmlu_<subject>_generative``
(written answers, metric ``exact_match``) tasks on the first 40 test questions of three subjects, at 0
and 5 shots, written by the harness's own ``EvaluationTracker.save_results_samples`` (what
``lm_eval --log_samples --output_path OUT`` writes), gzipped to keep the fixtures small.

Needs lm_eval 0.4.13 (see tools/harness_reference.py, whose data and task files it reuses: the
tasks ``include`` the installed package's MMLU templates and change only where the data comes
from, since cais/mmlu cannot be downloaded here). Runs offline on the CPU; about 10 minutes on 2 cores:

    HF_HUB_OFFLINE=1 ~/.cache/annotated-papers/lm-eval-0.4.13/bin/python -m tools.harness_gate_logs

writes tests/fixtures/harness_gate/3x40/<0shot|5shot>/samples_<task>_<date>.jsonl.gz; with ``--spread
--out tests/fixtures/harness_gate/20x6`` the first 6 questions of the first 20 subjects (alphabetical)
instead. Each shot count was run as its own process (``--shots 0``, ``--shots 5``).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import tempfile
from pathlib import Path

from tools.harness_reference import model_folder, write_data

SUBJECTS = ("abstract_algebra", "anatomy", "astronomy")
QUESTIONS = 40
# The written-answers fixture: more subjects, fewer questions each (the same 120 questions' cost), so
# that a drop of written answers can pass a gate of Student's t with 19 degrees of freedom.
SPREAD_SUBJECTS = 20
SPREAD_QUESTIONS = 6
TEMPLATES = {"": "default/_default_template_yaml", "_generative": "generative/_default_template_yaml"}


def write_tasks(folder: Path, files: dict[str, dict[str, str]]) -> list[str]:
    """The harness's own task names (mmlu_anatomy, mmlu_anatomy_generative) over the local data."""
    import lm_eval

    templates = Path(lm_eval.__file__).parent / "tasks" / "mmlu"
    names = []
    for suffix, template in TEMPLATES.items():
        for subject in files:
            name = f"mmlu_{subject}{suffix}"
            config = {"include": str(templates / template), "task": name, "task_alias": subject,
                      "dataset_path": "json", "dataset_name": None, "dataset_kwargs": {"data_files": files[subject]},
                      "description": f"The following are multiple choice questions (with answers) about "
                                     f"{subject.replace('_', ' ')}.\n\n"}
            (folder / f"{name}.yaml").write_text(json.dumps(config, indent=1))  # JSON is YAML
            names.append(name)
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/harness_gate/3x40"))
    parser.add_argument("--shots", type=int, nargs="+", default=[0, 5])
    parser.add_argument("--spread", action="store_true",
                        help=f"the first {SPREAD_QUESTIONS} test questions of the first {SPREAD_SUBJECTS} subjects "
                             f"(write them to tests/fixtures/harness_gate/{SPREAD_SUBJECTS}x{SPREAD_QUESTIONS})")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    import lm_eval
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    with tempfile.TemporaryDirectory(prefix="harness-gate-") as tmp:
        folder = Path(tmp)
        if args.spread:
            from benchmarks.mmlu.server import data_dir
            from benchmarks.mmlu.server.reader import MMLUData
            from engine.config import default_config

            subjects = sorted(MMLUData(data_dir(default_config())).subjects)[:SPREAD_SUBJECTS]
            files = write_data(folder, subjects, SPREAD_QUESTIONS)
        else:
            files = write_data(folder, SUBJECTS, QUESTIONS)
        names = write_tasks(folder, files)
        manager = TaskManager(include_path=str(folder), include_defaults=False)
        for shots in args.shots:
            written = folder / f"{shots}shot-out"
            tracker = EvaluationTracker(output_path=str(written))
            result = lm_eval.simple_evaluate(
                model="hf", model_args=f"pretrained={model_folder()},dtype=float32,device=cpu", tasks=names,
                num_fewshot=shots, batch_size=1, log_samples=True, evaluation_tracker=tracker,
                task_manager=manager, bootstrap_iters=0)
            samples = result.pop("samples")
            tracker.save_results_aggregated(results=result, samples=samples)  # as the command line: it dates the files
            for task in result["configs"]:
                tracker.save_results_samples(task_name=task, samples=samples[task])
            out = args.out / f"{shots}shot"
            out.mkdir(parents=True, exist_ok=True)
            for path in sorted(written.rglob("samples_*.jsonl")):
                with path.open("rb") as source, (out / (path.name + ".gz")).open("wb") as raw, \
                        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as target:
                    shutil.copyfileobj(source, target)
                print(f"wrote {out / path.name}.gz")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
