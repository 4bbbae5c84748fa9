"""The LaTeX-to-MathML converter: the subset the content uses, explained symbols, loud errors."""
from __future__ import annotations

import xml.etree.ElementTree as etree

import pytest

from engine.mathml import MathSyntaxError, to_mathml

NS = "{http://www.w3.org/1998/Math/MathML}"


def tree(latex: str, **options) -> etree.Element:
    return etree.fromstring(to_mathml(latex, **options))


def tags(element: etree.Element) -> list[str]:
    return [node.tag.removeprefix(NS) for node in element.iter()]


def test_standard_error_formula_structure():
    math = tree(r"\mathrm{SE} = \sqrt{\frac{p(1-p)}{n}}", display=True)
    assert math.get("display") == "block"
    assert tags(math)[:5] == ["math", "mrow", "mi", "mo", "msqrt"]
    assert math.find(f".//{NS}mi").text == "SE"  # one upright token, not S times E
    fraction = math.find(f".//{NS}mfrac")
    assert [child.tag.removeprefix(NS) for child in fraction] == ["mrow", "mi"]
    assert "−" in [mo.text for mo in math.iter(f"{NS}mo")]  # a real minus sign


def test_scripts_sums_and_accents():
    math = tree(r"\sum_{i=1}^{N} \hat{y}_i", display=True)
    assert tags(math)[2] == "munderover"
    hat = math.find(f".//{NS}msub/{NS}mover")
    assert hat.get("accent") == "true" and hat[0].text == "y"
    assert tree(r"\max_\ell P", display=True).find(f".//{NS}munder") is not None
    assert tree(r"\max_\ell P").find(f".//{NS}msub") is not None  # inline: limits move aside
    assert tags(tree(r"x^12"))[2:5] == ["msup", "mi", "mn"]  # TeX's one-digit rule


def test_text_fences_and_operators():
    math = tree(r"\left\lvert a - b \right\rvert \le \text{ two } \times 0.5 \approx \operatorname{argmax}")
    fences = [mo for mo in math.iter(f"{NS}mo") if mo.get("fence") == "true"]
    assert [mo.text for mo in fences] == ["|", "|"]
    assert math.find(f".//{NS}mtext").text == "\u00a0two\u00a0"
    assert {"≤", "×", "≈"} <= {mo.text for mo in math.iter(f"{NS}mo")}
    assert math.find(f".//{NS}mn").text == "0.5"
    assert [mi.text for mi in math.iter(f"{NS}mi")][-1] == "argmax"


def test_explained_symbols_are_wrapped_by_the_caller():
    seen = []

    def wrap(symbol_id, mathml):
        seen.append(symbol_id)
        return f'<mrow class="sym" data-id="{symbol_id}">{mathml}</mrow>'

    math = tree(r"\g{se}{\mathrm{SE}} = \sqrt{\frac{\g{p}{p}}{\g{n}{n}}}", wrap_symbol=wrap)
    assert seen == ["se", "p", "n"]
    wrapped = [node for node in math.iter(f"{NS}mrow") if node.get("class") == "sym"]
    assert [(node.get("data-id"), node[0].text) for node in wrapped] == [("se", "SE"), ("p", "p"), ("n", "n")]


@pytest.mark.parametrize("latex, message", [
    (r"\unknowncommand x", "unsupported command"),
    (r"\frac{1}", "unexpected end"),
    (r"a}", "unexpected '}'"),
    (r"\left( x", "without a matching"),
    (r"x_1_2", "double subscript"),
    (r"\g{bad id}{x}", "bad symbol id"),
])
def test_errors_name_what_to_fix(latex, message):
    with pytest.raises(MathSyntaxError, match=message):
        to_mathml(latex)
