"""lm-evaluation-harness's own per-question answers on a few real MMLU questions: the reference that
tests/model/test_harness_equality.py holds ``python -m benchmarks mmlu evaluate`` to.

Needs lm_eval 0.4.13 installed (``pip install lm_eval==0.4.13``, best in a virtual environment of
its own made with ``--system-site-packages``, so that it uses this project's torch and
transformers); the project itself never imports it, and CI does not need it. Runs offline.

    HF_HUB_OFFLINE=1 python -m tools.harness_reference [--model-dir DIR] [--out tests/fixtures/harness_reference]

The fixtures were written with lm_eval 0.4.13 (torch 2.13.0+cpu, transformers 5.24.0, float32,
``OMP_NUM_THREADS=1``), one process per setting:

    python -m tools.harness_reference --shots 0 --sides plain --questions 4
    python -m tools.harness_reference --shots 0 --sides chat --questions 4
    python -m tools.harness_reference --shots 5 --sides plain --questions 3
    python -m tools.harness_reference --shots 5 --sides chat --questions 3

(each with ``--subjects abstract_algebra astronomy --methods letter option generative``; option was
run again with ``--methods option --merge`` once its worked examples kept their letters.)

What it does:

* writes the chosen questions (``QUESTIONS``: the first few test questions of a few subjects, read
  from ``MMLU_DATA_DIR`` by this project's reader) and each subject's dev split as JSON Lines in
  cais/mmlu's own fields (``question``, ``subject``, ``choices``, ``answer`` as 0-3; plus ``index``,
  the question's row in the CSV), since the harness's ``cais/mmlu`` cannot be downloaded here;
* writes task YAML files that ``include`` the harness's own MMLU templates from the installed
  package and change only where the data comes from (``dataset_path: json`` with the files
  above) and the description (the per-subject YAMLs' own):
  ``mmlu`` (lm_eval/tasks/mmlu/default/_default_template_yaml: our ``letter``),
  ``mmlu_generative`` (lm_eval/tasks/mmlu/generative/_default_template_yaml: our ``generative``),
  ``mmlu_continuation`` (lm_eval/tasks/mmlu/continuation/_continuation_template_yaml), and
  ``option``: the ``mmlu`` template with ``doc_to_choice: "{{choices}}"`` (each option's text scored
  after the lettered prompt) and the worked examples' choices kept as the letters
  (``fewshot_config.doc_to_choice``, so an example's answer reads "B" as in ``mmlu``), which is our
  ``option`` method (no harness task scores exactly that);
* runs ``lm_eval.simple_evaluate`` with ``model="hf"``, ``model_args="pretrained=<the converted
  model folder>,dtype=float32,device=cpu"``, ``batch_size=1``, ``log_samples=True`` and a
  ``TaskManager`` over that folder of YAMLs, at 0 and 5 shots, plain and with
  ``apply_chat_template=True, fewshot_as_multiturn=True`` (the command line's defaults with
  ``--apply_chat_template``), the same as

      lm_eval --model hf --model_args pretrained=DIR,dtype=float32,device=cpu --include_path TASKS \\
          --tasks local_mmlu_letter_astronomy,... --num_fewshot 5 [--apply_chat_template] \\
          --batch_size 1 --log_samples --output_path OUT

* writes, per setting, ``<shots>shot-<plain|chat>.json``: per task and question the prompt the
  harness built, its ``resps`` and ``filtered_resps``, its metrics (``acc``, ``acc_norm``,
  ``exact_match``) and the target.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

SUBJECTS = ("abstract_algebra", "astronomy")
QUESTIONS = 4  # the first four test questions of each subject (the fixtures have three at 5 shots)
SHOTS = (0, 5)
SIDES = ("plain", "chat")
TASKS = {  # ours: (the harness's template, overrides)
    "letter": ("default/_default_template_yaml", {}),
    # The worked examples keep the mmlu task's letters (their answers are "B", not the option's text):
    # the few-shot choices are the letters, the question's the options' text.
    "option": ("default/_default_template_yaml", {"doc_to_choice": "{{choices}}",
                                                  "fewshot_config": {"sampler": "first_n",
                                                                     "doc_to_choice": ["A", "B", "C", "D"]}}),
    "continuation": ("continuation/_continuation_template_yaml", {}),
    "generative": ("generative/_default_template_yaml", {}),
}
LETTERS = "ABCD"


def model_folder() -> Path:
    found = sorted((Path.home() / ".cache" / "annotated-papers").glob("smollm2-135m-instruct-*/config.json"))
    if not found:
        sys.exit("no converted model folder in ~/.cache/annotated-papers; load the model once (python -m benchmarks "
                 "mmlu evaluate --limit 1 --subjects astronomy --out /tmp/x.jsonl --force) or pass --model-dir")
    return found[-1].parent


def server_model_args(url: str) -> str:
    """local-completions' arguments for a server: its completions route, the served name and its
    context length as max_length (the client's own default, 2048, would cut five-shot prompts
    differently from the hf model's), the tokenizer the server's own (/tokenize)."""
    import urllib.request

    base = url.rstrip("/")
    with urllib.request.urlopen(base + "/v1/models", timeout=30) as answer:
        served = json.loads(answer.read())["data"][0]
    return (f"base_url={base}/v1/completions,model={served['id']},max_length={served['max_model_len']},"
            "tokenizer_backend=remote,tokenized_requests=True,num_concurrent=1,max_retries=3")


def write_data(folder: Path, subjects=SUBJECTS, questions: int = QUESTIONS) -> dict[str, dict[str, str]]:
    """Each subject's chosen test questions and its dev split, as JSON Lines in cais/mmlu's fields."""
    from benchmarks.mmlu.server import data_dir
    from benchmarks.mmlu.server.reader import MMLUData
    from engine.config import default_config

    data = MMLUData(data_dir(default_config()))
    files = {}
    for subject in subjects:
        files[subject] = {}
        for split, docs in (("test", data.questions(subject, "test")[:questions]),
                            ("dev", data.questions(subject, "dev"))):
            path = folder / f"{subject}_{split}.jsonl"
            path.write_text("".join(json.dumps({"question": d.question, "subject": subject, "choices": list(d.choices),
                                                "answer": LETTERS.index(d.answer), "index": d.index}) + "\n"
                                    for d in docs))
            files[subject][split] = str(path)
    return files


def write_tasks(folder: Path, files: dict[str, dict[str, str]], methods=tuple(TASKS)) -> list[str]:
    """One YAML per (method, subject), including the harness's own template; the task names."""
    import lm_eval

    templates = Path(lm_eval.__file__).parent / "tasks" / "mmlu"
    names = []
    for method in methods:
        template, overrides = TASKS[method]
        for subject in files:
            title = subject.replace("_", " ")
            description = (f"The following are questions (with answers) about {title}.\n\n" if method == "continuation"
                           else f"The following are multiple choice questions (with answers) about {title}.\n\n")
            name = f"local_mmlu_{method}_{subject}"
            config = {"include": str(templates / template), "task": name, "dataset_path": "json",
                      "dataset_name": None, "dataset_kwargs": {"data_files": files[subject]},
                      "description": description, **overrides}
            (folder / f"{name}.yaml").write_text(json.dumps(config, indent=1))  # JSON is YAML
            names.append(name)
    return names


def plain(value):
    """JSON-ready: tuples as lists, numpy numbers as Python's."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if hasattr(value, "item"):
        return value.item()
    return value


def records(samples: list[dict]) -> list[dict]:
    out = []
    for s in sorted(samples, key=lambda s: s["doc_id"]):
        metrics = {m: s[m] for m in ("acc", "acc_norm", "exact_match") if m in s}
        out.append({"subject": s["doc"]["subject"], "index": s["doc"]["index"], "doc_id": s["doc_id"],
                    "target": s["target"], "prompt": s["arguments"][0][0] if s["arguments"] else None,
                    "continuations": [a[1] for a in s["arguments"]] if len(s["arguments"][0]) > 1
                    and isinstance(s["arguments"][0][1], str) else None,
                    "resps": plain(s["resps"]), "filtered_resps": plain(s["filtered_resps"]),
                    **{m: plain(v) for m, v in metrics.items()}})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, default=None, help="the converted model folder (default: the cache's)")
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/harness_reference"))
    parser.add_argument("--shots", type=int, nargs="+", default=list(SHOTS))
    parser.add_argument("--sides", nargs="+", default=list(SIDES), choices=SIDES)
    parser.add_argument("--subjects", nargs="+", default=list(SUBJECTS))
    parser.add_argument("--questions", type=int, default=QUESTIONS, help="the first N test questions of each subject")
    parser.add_argument("--methods", nargs="+", default=["letter", "option", "generative"], choices=list(TASKS),
                        help="continuation (mmlu_continuation) is there too, for comparison; evaluate has no such method")
    parser.add_argument("--model-server", default=None, metavar="URL",
                        help="score through an OpenAI-compatible server (lm_eval's local-completions, its tokenizer "
                             "remote) instead of --model hf: tests/model/test_harness_client.py runs ours so")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other methods' records of an existing output file of the same setting")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    import lm_eval
    from lm_eval.tasks import TaskManager

    if args.model_server:
        model, model_args = "local-completions", server_model_args(args.model_server)
    else:
        model, model_args = "hf", f"pretrained={args.model_dir or model_folder()},dtype=float32,device=cpu"
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="harness-reference-") as tmp:
        folder = Path(tmp)
        names = write_tasks(folder, write_data(folder, args.subjects, args.questions), args.methods)
        manager = TaskManager(include_path=str(folder))
        for shots in args.shots:
            for side in args.sides:
                chat = side == "chat"
                result = lm_eval.simple_evaluate(
                    model=model, model_args=model_args, tasks=names,
                    num_fewshot=shots, batch_size=1, log_samples=True, apply_chat_template=chat,
                    fewshot_as_multiturn=chat, task_manager=manager, bootstrap_iters=0)
                tasks: dict[str, list] = {method: [] for method in args.methods}
                for name, samples in result["samples"].items():
                    method = name.removeprefix("local_mmlu_").split("_", 1)[0]
                    tasks[method] += records(samples)
                for method in tasks:
                    tasks[method].sort(key=lambda r: (r["subject"], r["index"]))
                reference = {"lm_eval": lm_eval.__version__ if hasattr(lm_eval, "__version__") else "0.4.13",
                             "model": model, "model_args": model_args if args.model_server else
                             "pretrained=<converted smollm2-135m-instruct folder>,dtype=float32,device=cpu",
                             "batch_size": 1, "num_fewshot": shots, "apply_chat_template": chat,
                             "fewshot_as_multiturn": chat, "subjects": args.subjects, "questions_per_subject": args.questions,
                             "tasks": {m: {"harness_template": TASKS[m][0], "overrides": TASKS[m][1]}
                                       for m in args.methods},
                             "samples": tasks}
                path = args.out / f"{shots}shot-{side}.json"
                if args.merge and path.exists():
                    before = json.loads(path.read_text())
                    reference["samples"] = {**before["samples"], **reference["samples"]}
                    reference["tasks"] = {**before["tasks"], **reference["tasks"]}
                path.write_text(json.dumps(reference, indent=1, ensure_ascii=False) + "\n")
                print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
