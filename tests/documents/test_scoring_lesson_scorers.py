"""The scoring lesson's three-scorers widget: lm-evaluation-harness's MMLU prompts byte for byte, its
generative parser on the cases its task file documents, chat-template wrapping, the decisions; the
widget in the gallery, the lesson, its page, its embed and oEmbed, and its refusals, each next to
the field it names; and (marked model) one real question scored every way, checked against an
independent computation on the same model, and answered inside the embed and the lesson's copy."""
from __future__ import annotations

import re

import pytest
from documents.scoring_lesson.server import three_scorers as page
from jinja2.exceptions import TemplateError

from benchmarks.mmlu import prompt as mmlu_prompt
from benchmarks.mmlu.data import Question
from benchmarks.mmlu.server import data_dir as mmlu_data_dir
from benchmarks.mmlu.server import harness_tasks as harness
from benchmarks.mmlu.server.reader import MMLUData
from engine import create_app
from tests.conftest import app_with_model, run_form_token

SHOT = Question(subject="high_school_us_history", split="dev", index=0, question="  What?  ",
                choices=("w", "x", "y", "z"), answer="B")
ASKED = ("Who?\n", ["a", "b", "c", "d"])


# -- prompts ---------------------------------------------------------------------------------

def test_the_generative_prompt_byte_for_byte():
    # lm_eval/tasks/mmlu/generative: the description, then doc_to_text + " " + the letter + "\n\n" per example.
    expected = ("The following are multiple choice questions (with answers) about high school us history.\n\n"
                "What?\nA. w\nB. x\nC. y\nD. z\nAnswer: B\n\n"
                "Who?\nA. a\nB. b\nC. c\nD. d\nAnswer:")
    generative = harness.HarnessPrompt("mmlu_generative")
    assert generative.text("high_school_us_history", *ASKED, [SHOT]) == expected
    assert harness.HarnessPrompt("mmlu").text("high_school_us_history", *ASKED, [SHOT]) == expected
    assert generative.delimiter == " "


def test_the_continuation_prompt_byte_for_byte():
    expected = ("The following are questions (with answers) about high school us history.\n\n"
                "Question: What?\nAnswer: x\n\n"
                "Question: Who?\nAnswer:")
    assert harness.HarnessPrompt("mmlu_continuation").text("high_school_us_history", *ASKED, [SHOT]) == expected


@pytest.mark.parametrize("shots", [0, 5])
def test_the_harness_mmlu_prompt_is_the_mmlu_papers_prompt(shots):
    data = MMLUData(mmlu_data_dir())
    q = data.question("astronomy", "test", 7)
    examples = data.questions("astronomy", "dev")[:shots]
    plain = harness.HarnessPrompt("mmlu")
    assert plain.text(q.subject, q.question, q.choices, examples) == mmlu_prompt.build_prompt(
        q.subject, q.question, q.choices, examples)
    kinds = [part.kind for part in plain.prompt_parts(q.subject, q.question, q.choices, examples)]
    assert kinds == ["header"] + ["shot"] * shots + ["question"]  # the scorer caches the header and shots


def test_the_chat_template_gets_the_harness_turns():
    seen = []

    def render(turns):
        seen.append(turns)
        return "<rendered>"

    chat = harness.HarnessPrompt("mmlu_continuation", render)
    parts = chat.prompt_parts("high_school_us_history", *ASKED, [SHOT])
    assert [(p.kind, p.text) for p in parts] == [("chat", "<rendered>")] and chat.delimiter == ""
    assert seen == [[
        {"role": "system", "content": "The following are questions (with answers) about high school us history.\n\n"},
        {"role": "user", "content": "Question: What?\nAnswer:"},  # the delimiters belong to plain text only
        {"role": "assistant", "content": "x"},
        {"role": "user", "content": "Question: Who?\nAnswer:"},
    ]]


class TemplateTokenizer:
    """Stands in for a tokenizer's apply_chat_template, recording how it is called."""

    def __init__(self, template, refuse_system=False):
        self.chat_template, self.refuse_system, self.calls = template, refuse_system, []

    def apply_chat_template(self, turns, **options):
        self.calls.append((turns, options))
        if self.refuse_system and turns[0]["role"] == "system":
            raise TemplateError("System role not supported")
        return "|".join(f"{t['role']}:{t['content']}" for t in turns) + "|assistant:"


def test_chat_wrapping_as_the_harness_calls_the_template():
    turns = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}]
    tokenizer = TemplateTokenizer("{{ messages }}")
    assert page.chat_template(tokenizer)(turns) == "system:S|user:Q|assistant:"
    assert tokenizer.calls == [(turns, {"tokenize": False, "add_generation_prompt": True})]
    refusing = TemplateTokenizer("{{ messages }}", refuse_system=True)
    assert page.chat_template(refusing)(turns) == "user:Q|assistant:"  # retried without the system turn
    assert page.chat_template(TemplateTokenizer(None)) is None


# -- the generative task's parser -------------------------------------------------------------

@pytest.mark.parametrize("written, kept, letter", [
    ("A", "A", "A"),
    (" B", "B", "B"),  # "Remove leading white spaces"
    ("C \t", "C", "C"),  # "ignore right white spaces"
    ("D\nA", "D", "D"),  # "Filter everything after the first break line"
    ("b.", "b.", "B"),  # exact_match with ignore_case and ignore_punctuation
    ("(c)", "(c)", "C"),
    ("A. Mars", "A. Mars", None),  # more than a letter: no match, scored 0
    ("The answer is A", "The answer is A", None),
    ("", "", None),
    ("E", "E", None),  # not one of the four
])
def test_the_generative_parser(written, kept, letter):
    assert harness.get_response(written) == kept
    assert harness.generated_letter(kept) == letter


def test_exact_match_and_the_regex_fallback():
    assert harness.exact_match("a!", "A") and not harness.exact_match("a b", "A")
    assert harness.regex_filter("no digits", re.compile(r"(\d+)")) == harness.INVALID


# -- the page's decisions, without the model --------------------------------------------------

def scored(letters_logprobs, choices, prediction):
    return {"prompt": {"text": "the prompt"}, "prediction": prediction,
            "options": [{"letter": letter, "choice": choice, "continuation": f" {choice}", "tokens": 2, "logprob": lp}
                        for (letter, lp), choice in zip(letters_logprobs, choices, strict=True)]}


def test_decisions_side_by_side():
    letter = page.letter_side(scored([("A", -0.5), ("B", -2.0), ("C", -3.0), ("D", -3.0)], "ABCD", "A"))
    # Summed, B (-3.0) beats A (-4.0); per character, A (-4/40) beats B (-3/10).
    continuation = page.continuation_side(scored([("A", -4.0), ("B", -3.0), ("C", -9.0), ("D", -6.0)],
                                            ["a" * 40, "b" * 10, "c" * 9, "d" * 12], "B"))
    assert (continuation["summed"], continuation["normalised"]) == ("B", "A")
    assert continuation["rows"][0][3:] == (40, -4.0, -0.1)
    plain = page.generation_side("the prompt", " c.", {"reason": "stop", "tokens": 3})
    chat = page.generation_side("the chat prompt", "C. a leaf", {"reason": "end of text", "tokens": 4})
    assert (plain["response"], plain["prediction"], chat["prediction"]) == ("c.", "C", None)
    rows = page.decisions({"plain": letter, "chat": letter}, {"plain": continuation},
                     {"plain": plain, "chat": chat})
    assert [(r["task"], r["metric"], r["plain"], r["chat"]) for r in rows] == [
        ("mmlu", "acc", "A", "A"), ("mmlu_continuation", "acc", "B", None),
        ("mmlu_continuation", "acc_norm", "A", None), ("mmlu_generative", "exact_match", "C", None)]


# -- the widget: gallery, lesson, page, embed, oEmbed ------------------------------------------

@pytest.fixture(scope="module")
def APP(real_app):
    return real_app


PAGE = "/scoring-lesson/widgets/three-scorers"
EMBED = "/embed/scoring-lesson/three-scorers"


def widget_of(html: str) -> str:
    """The widget's own markup in a page."""
    start = html.index('<section class="widget three-scorers"')
    return html[start:html.index("</section>\n", html.index('class="widget-share"', start))]


def post(client, url=PAGE, **fields):
    return client.post(url, data={**fields, **run_form_token(client, url)})


def test_the_widget_is_in_the_gallery_and_inline_in_the_lesson(APP):
    client = APP.test_client()
    gallery = client.get("/scoring-lesson/widgets/").get_data(as_text=True)
    assert f'<a href="http://localhost{PAGE}">Same question, three scorers</a>' in gallery
    lesson = client.get("/scoring-lesson/").get_data(as_text=True)
    what_gets_scored = lesson[lesson.index('id="what-gets-scored"'):lesson.index('id="micro-macro"')]
    inline = widget_of(what_gets_scored)
    assert 'data-mode="inline"' in inline and '<h3 class="widget-title"' in inline
    assert f'action="{PAGE}#ts-results"' in inline and 'name="csrf_token"' in inline  # no JavaScript: to its page
    assert 'href="/scoring-lesson/three-scorers"' not in lesson  # no link to the old address
    old = client.get("/scoring-lesson/three-scorers")
    assert old.status_code == 301 and old.headers["Location"] == PAGE


def test_the_widget_page_and_the_embed(APP):
    client = APP.test_client()
    page = client.get(PAGE)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and page.headers["X-Frame-Options"] == "DENY"
    assert html.count("<h1") == 1
    assert '<h1 class="widget-title" id="w-three-scorers-title">Same question, three scorers</h1>' in html
    assert "<summary>Share / embed</summary>" in html and "0.488" in html and "0.636" in html and "0.637" in html
    assert f'src=&#34;http://localhost{EMBED}&#34;' in html  # the embed code, as a teacher pastes it
    assert 'type="application/json+oembed"' in html and f'action="{PAGE}#ts-results"' in html
    assert "not in this version" not in html.lower()

    embed = client.get(EMBED)
    framed = embed.get_data(as_text=True)
    assert embed.status_code == 200 and "X-Frame-Options" not in embed.headers
    assert "frame-ancestors *" in embed.headers["Content-Security-Policy"]
    # Without JavaScript the embed's form posts to the embed itself, so the answer stays in the frame.
    assert f'action="{EMBED}#ts-results"' in framed and 'name="csrf_token"' in framed
    assert framed.count("<h1") == 1 and "embed-height.js" in framed and "<summary>Share / embed</summary>" in framed
    assert client.get("/api/widgets/scoring-lesson/three-scorers").status_code == 404  # live: not a view


@pytest.mark.parametrize("url", [PAGE, EMBED])
def test_oembed_for_the_widget(APP, url):
    client = APP.test_client()
    answer = client.get(f"/oembed?url=http://localhost{url}&format=json&maxheight=500").get_json()
    assert answer["type"] == "rich" and answer["title"] == "Same question, three scorers" and answer["height"] == 500
    assert f'<iframe src="http://localhost{EMBED}" title="Same question, three scorers"' in answer["html"]


# -- the widget's refusals ----------------------------------------------------------------------

def field_error(html: str, field: str) -> str:
    """The error shown with ``field``, which must point at it (aria-describedby, aria-invalid)."""
    box = re.search(rf'<(?:input|select) id="ts-{field}"[^>]*>', html).group(0)
    assert f"ts-{field}-error" in box and 'aria-invalid="true"' in box, box
    return re.search(rf'<span class="field-error" id="ts-{field}-error" data-field-error="ts-{field}">([^<]*)</span>',
                     html).group(1)


@pytest.mark.parametrize("url", [PAGE, EMBED])
def test_bad_input_is_refused_at_its_field_before_the_model_runs(APP, url):
    client = APP.test_client()
    bad = post(client, url, subject="<b>nope</b>", number="1", shots="0")
    html = widget_of(bad.get_data(as_text=True))
    assert bad.status_code == 400 and "no such subject" in field_error(html, "subject") and "<b>nope</b>" not in html
    assert 'role="alert"' in html and '<li data-problem-for="ts-subject"><a href="#ts-subject">' in html
    far = post(client, url, subject="astronomy", number="99999", shots="0")
    assert far.status_code == 400
    html = widget_of(far.get_data(as_text=True))
    assert field_error(html, "number") == ("Type a question number from 1 to 152: astronomy has 152 questions "
                                           "in its test split.")
    assert 'value="99999"' in html and '<option value="astronomy" selected>' in html  # what the reader typed, kept
    assert "from 0 to 5 worked examples" in field_error(widget_of(post(client, url, subject="astronomy", number="1", shots="9")
                                                          .get_data(as_text=True)), "shots")
    for not_a_number in ("", "0", "1.5"):  # nothing, the 0 of a count from 0, a fraction: each is said beside its field
        assert "Type a question number from 1 to 152" in field_error(
            widget_of(post(client, url, subject="astronomy", number=not_a_number, shots="0").get_data(as_text=True)), "number")
    unsigned = client.post(url, data={"subject": "astronomy", "number": "1", "shots": "0"})  # no form token
    assert unsigned.status_code == 400 and "This form has expired" in unsigned.get_data(as_text=True)
    assert 'aria-invalid' not in widget_of(unsigned.get_data(as_text=True))  # the whole form, no one field
    assert APP.extensions["scoring"].state == "not loaded"


@pytest.mark.parametrize("url", [PAGE, EMBED])
def test_the_scripts_post_gets_the_results_alone_always_a_200(APP, url):
    """With ?fragment=1 (static/js/widgets/live-form.js) a refusal comes back as the results panel alone,
    a 200 carrying the real status, its problems listed by the control they belong to, headed for the
    copy that sent it (shown_in); the whole page keeps its own headings."""
    client = APP.test_client()
    token = run_form_token(client, url)
    answer = client.post(f"{url}?fragment=1", data={"subject": "astronomy", "number": "0", "shots": "0",
                                                    "shown_in": "inline", **token})
    html = answer.get_data(as_text=True)
    assert answer.status_code == 200 and answer.headers["Cache-Control"] == "no-store"
    assert "<form" not in html and 'name="csrf_token"' not in html and "<html" not in html
    assert 'data-ls-error data-status="400"' in html and '<h4 class="ls-results-title">The question was not scored</h4>' in html
    assert re.search(r'<li data-problem-for="ts-number"><a href="#ts-number">Type a question number from 1 to 152', html)
    page = client.post(url, data={"subject": "astronomy", "number": "0", "shots": "0", "shown_in": "inline", **token})
    assert page.status_code == 400 and '<h2 class="ls-results-title">' in page.get_data(as_text=True)  # its own level
    expired = client.post(f"{url}?fragment=1", data={"subject": "astronomy", "number": "1", "shots": "0"})
    said = expired.get_data(as_text=True)
    assert expired.status_code == 200 and "This form has expired" in said and "reload the page, then press" in said
    bare = client.post(url, data={"number": "1", **token})  # not the form: refused before the model
    assert bare.status_code == 400 and "The form arrived without a subject" in bare.get_data(as_text=True)
    assert APP.extensions["scoring"].state == "not loaded"


def test_why_a_generation_stopped_in_words():
    """The widget says why the model stopped writing as MMLU-Pro's chain of thought does (reading.why_it_stopped)."""
    words = {reason: page.generation_side("p", "", {"reason": reason, "tokens": 1})["stopped"]
             for reason in ("stop", "end of text", "length")}
    assert words == {
        "stop": "it wrote a stop sequence (a line break or “</s>”), where the protocol ends the answer",
        "end of text": "it ended its answer (the model's end-of-text token)",
        "length": "it reached the cap of 32 new tokens (this widget's; the harness allows 256)"}


def test_the_costliest_question_at_five_shots_is_refused_for_all_six_runs_before_the_model():
    """Issue 26, finding 2: the budget was checked once, on the plain prompt, so this post passed and
    cost about 180 CPU-s (six runs of ~3,000 tokens). Now the whole form's work is budgeted: refused
    before the model, at the shots field, naming how many worked examples fit."""
    app = create_app({"TESTING": True})  # its own app, so "not loaded" proves the model never ran
    client = app.test_client()
    response = post(client, PAGE, subject="high_school_european_history", number="3", shots="5")
    html = widget_of(response.get_data(as_text=True))
    assert response.status_code == 413
    said = field_error(html, "shots")
    assert "six runs" in said and "To fit: choose 1 worked example or fewer, or a shorter question" in said, said
    assert app.extensions["scoring"].state == "not loaded"
    data = MMLUData(mmlu_data_dir())
    q = data.question("astronomy", "test", 0)
    arguments = {"subject": "astronomy", "shots": data.questions("astronomy", "dev")[:5], "question": q.question,
                 "choices": list(q.choices)}
    assert page.form_work(arguments) <= page.FORM_WORK_FACTOR * app.config["SCORER_MAX_WORK_CHARS"]  # typical: allowed


def test_a_form_from_another_site_is_refused(APP):
    client = APP.test_client()
    token = run_form_token(client, EMBED)
    response = client.post(EMBED, data={"subject": "astronomy", "number": "1", "shots": "0", **token},
                           headers={"Origin": "http://evil.example"})
    assert response.status_code == 403 and APP.extensions["scoring"].state == "not loaded"


def test_the_widget_says_when_the_model_cannot_load(tmp_path):
    app = create_app({"TESTING": True, "SCORER_MODEL": str(tmp_path / "no-model-here")})
    response = post(app.test_client(), EMBED, subject="astronomy", number="1", shots="0")
    assert response.status_code == 503 and response.headers["Cache-Control"] == "no-store"
    assert "Live scoring is unavailable" in widget_of(response.get_data(as_text=True))


# -- the real model -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def live_app(loaded_model):
    return app_with_model({"SCORER_TIMEOUT_S": 300}, loaded_model)


def harness_loglikelihood(loaded, context: str, continuation: str) -> float:
    """The harness's recipe, written out: trailing whitespace of the context moves to the
    continuation, the pair is encoded whole, one forward pass, the continuation's log-probabilities summed."""
    import torch

    spaces = len(context) - len(context.rstrip())
    if spaces:
        context, continuation = context[:-spaces], context[-spaces:] + continuation
    encode = loaded.tokenizer
    context_ids = encode(context, add_special_tokens=False)["input_ids"]
    whole = encode(context + continuation, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logprobs = torch.log_softmax(loaded.model(torch.tensor([whole])).logits[0].float(), dim=-1)
    return sum(logprobs[i - 1, whole[i]].item() for i in range(len(context_ids), len(whole)))


@pytest.mark.model
def test_a_real_question_scored_every_way(live_app):
    values = {"subject": "high_school_biology", "number": "6", "shots": "1"}  # index 5
    with live_app.test_request_context("/scoring-lesson/three-scorers", method="POST"):
        found = page.score_three_ways(values)
    loaded = live_app.extensions["scoring"].scorer.loaded
    assert loaded.dtype == "float32" and found["key"] == "C" and found["sides"] == ["plain", "chat"]
    data = MMLUData(mmlu_data_dir())
    q, shot = data.question("high_school_biology", "test", 5), data.questions("high_school_biology", "dev")[0]
    header = "The following are multiple choice questions (with answers) about high school biology.\n\n"
    letter, continuation, generation = found["letter"], found["continuation"], found["generation"]
    assert letter["plain"]["prompt"].startswith(header) and letter["plain"]["prompt"].endswith("\nAnswer:")
    assert letter["chat"]["prompt"].startswith(f"<|im_start|>system\n{header}<|im_end|>\n<|im_start|>user\n")
    assert letter["chat"]["prompt"].endswith(f"D. {q.choices[3]}\nAnswer:<|im_end|>\n<|im_start|>assistant\n")
    assert f"<|im_start|>assistant\n{shot.answer}<|im_end|>" in letter["chat"]["prompt"]  # the example's answer turn
    assert generation["plain"]["prompt"] == letter["plain"]["prompt"]
    assert generation["chat"]["prompt"] == letter["chat"]["prompt"]
    assert continuation["chat"]["prompt"].endswith(f"Question: {q.question}\nAnswer:<|im_end|>\n<|im_start|>assistant\n")

    # Every log-likelihood on the page equals the harness's recipe on the same model, and the decisions follow.
    for side, delimiter in (("plain", " "), ("chat", "")):
        for letter_row in letter[side]["rows"]:
            expected = harness_loglikelihood(loaded, letter[side]["prompt"], delimiter + letter_row[0])
            assert letter_row[1] == delimiter + letter_row[0] and letter_row[3] == pytest.approx(expected, abs=1e-4)
        lls = {row[0]: harness_loglikelihood(loaded, continuation[side]["prompt"], delimiter + choice)
               for row, choice in zip(continuation[side]["rows"], q.choices, strict=True)}
        assert [row[4] for row in continuation[side]["rows"]] == pytest.approx(list(lls.values()), abs=1e-4)
        assert continuation[side]["summed"] == max(lls, key=lls.get)
        per_char = {k: lls[k] / len(c) for k, c in zip("ABCD", q.choices, strict=True)}
        assert continuation[side]["normalised"] == max(per_char, key=per_char.get)
        written = generation[side]
        assert 0 <= written["tokens"] <= page.PAGE_MAX_NEW_TOKENS and "\n" not in written["generated"]
        assert written["prediction"] == harness.generated_letter(harness.get_response(written["generated"]))
    rows = {(r["task"], r["metric"]): r for r in found["summary"]}
    assert len(rows) == 4 and all(r["plain"] in (None, *"ABCD") and r["chat"] in (None, *"ABCD") for r in rows.values())


@pytest.mark.model
def test_the_embed_answers_its_form_in_the_frame(live_app):
    client = live_app.test_client()
    response = post(client, EMBED, subject="astronomy", number="1", shots="0")
    assert response.status_code == 200 and "X-Frame-Options" not in response.headers
    html = widget_of(response.get_data(as_text=True))
    assert html.count('data-role="decision"') == 8 and html.count('class="prompt-text"') == 6
    assert html.count("&lt;|im_start|&gt;system") == 3  # a chat prompt per scorer, escaped like any text
    assert ('<h2 class="ls-results-title" id="ts-results-title">'
            "Decisions for astronomy question 1 (answer key: ") in html  # numbered from 1, as the form numbers it
    # In a student's words (issue 40): the model by its name, not its file; each scorer's harness task and score.
    assert "<p>Scored by SmolLM2-135M-Instruct with 0 worked examples." in html and "GGUF" not in html
    assert "Letter log-likelihood <span class=\"ts-how\">the <code>mmlu</code> task's <code>acc</code></span>" in html
    tally = re.search(r"data-ls-verdict><strong>(\d) of the 8 decisions are the key's letter</strong>", html)
    decided = re.findall(r'<span data-role="decision">([^<]*)</span>\s*<span class="ts-mark">(right|wrong)</span>', html)
    assert tally and int(tally.group(1)) == sum(verdict == "right" for _, verdict in decided)


@pytest.mark.model
def test_the_lessons_copy_gets_its_results_alone_with_its_own_headings(live_app):
    """The lesson page's script posts to the widget's page with ?fragment=1 and puts the results in the
    lesson: only the results, with the lesson's headings (shown_in); why each generation stopped in words."""
    client = live_app.test_client()
    response = post(client, f"{PAGE}?fragment=1", subject="virology", number="4", shots="1", shown_in="inline")
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and html.lstrip().startswith('<h4 class="ls-results-title"')
    assert "<form" not in html and "<section class=\"widget" not in html and "data-ls-verdict" in html
    assert '<h5 id="ts-letter">' in html and html.count("<h6>") == 6
    stopped = re.findall(r"<dt>It stopped because</dt><dd>([^<]*)</dd>", html)
    assert len(stopped) == 2 and all(s.startswith(("it wrote a stop sequence (a line break or “&lt;/s&gt;”)",
                                                   "it ended its answer", "it reached the cap of 32 new tokens"))
                                     for s in stopped), stopped
