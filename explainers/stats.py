"""Error bars for a score: how far a measured accuracy can sit from the true rate by luck alone.

Scores and rates are proportions between 0 and 1 throughout; multiply by 100 for percentage points.
"""
from __future__ import annotations

import math
from statistics import NormalDist

from . import checks

INTERVAL_METHODS = ("normal", "wilson")
BAND_METHODS = ("normal", "exact")
# The exact band sums n + 1 binomial terms; beyond this the normal band is indistinguishable anyway.
MAX_EXACT_N = 100_000
# Student's t with more degrees of freedom than this is the normal curve to far beyond any figure shown,
# and the incomplete beta function's continued fraction slows down as they grow.
MAX_DEGREES_OF_FREEDOM = 100_000
# The smallest q student_t_quantile takes: with df = 1 its answer there is about -3e299, and below
# about 4e-309 it is beyond the largest float (the document states this bound, engine/openapi.py).
MIN_T_QUANTILE_Q = 1e-300


def normal_quantile(q: float) -> float:
    """The value a standard normal variable falls below with probability q.

    In words: "how many standard deviations above the mean you must go to leave a share q of the
    bell curve behind you". normal_quantile(0.975) is about 1.96.
    """
    q = checks.number("q", q)
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be strictly between 0 and 1, got {q}")
    return NormalDist().inv_cdf(q)


def _degrees_of_freedom(df: float) -> float:
    df = checks.number("df", df)
    if not 1.0 <= df <= MAX_DEGREES_OF_FREEDOM:
        raise ValueError(f"df must be from 1 to {MAX_DEGREES_OF_FREEDOM:,}, got {df:g}")
    return df


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function, by the modified Lentz method."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def _t_upper_tail(t: float, df: float) -> float:
    """P(T > t) for t ≥ 0: half the regularised incomplete beta I_x(df/2, 1/2) at x = df/(df + t²).

    Both x and 1 − x are formed directly (not by subtraction), so neither small nor huge t loses digits.
    """
    if t < 1e-150:  # the tail differs from one half by less than a float can show
        return 0.5
    if math.isinf(t):
        return 0.0
    a, b = df / 2.0, 0.5
    if t > 1e150:  # t² would overflow: I_x(a, b) = x^a / (a B(a, b)) to double precision, x = df/t²
        return math.exp(a * math.log(df) - df * math.log(t) + math.lgamma(a + b)
                        - math.lgamma(a + 1.0) - math.lgamma(b)) / 2.0
    x, y = df / (df + t * t), t * t / (df + t * t)
    front = math.exp(a * math.log(x) + b * math.log(y) + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a / 2.0
    return (1.0 - front * _beta_fraction(b, a, y) / b) / 2.0


def student_t_cdf(x: float, df: float) -> float:
    """The probability that Student's t with ``df`` degrees of freedom falls below x.

    In words: "the share of the t curve to the left of x"; the t curve is the bell curve with
    heavier tails, for a mean divided by an error estimated from few pieces (df of them).
    Computed from the regularised incomplete beta function: P(T > |x|) = ½ I_{df/(df+x²)}(df/2, ½).
    student_t_cdf(2.0, 2) is about 0.908.
    """
    x = checks.number("x", x)
    tail = _t_upper_tail(abs(x), _degrees_of_freedom(df))
    return 1.0 - tail if x >= 0 else tail


def student_t_quantile(q: float, df: float) -> float:
    """The value Student's t with ``df`` degrees of freedom falls below with probability q.

    In words: "how far out on the t curve you must go to leave a share q of it behind you".
    student_t_quantile(0.975, 2) is about 4.303 (the normal curve's is 1.960). Found by Newton's
    method on the upper tail (see student_t_cdf), kept inside a bracket that halves when a step
    would leave it.
    """
    q = checks.number("q", q)
    if not MIN_T_QUANTILE_Q <= q < 1.0:
        raise ValueError(f"q must be from {MIN_T_QUANTILE_Q:g} to less than 1, got {q}")
    df = _degrees_of_freedom(df)
    if q == 0.5:
        return 0.0
    t = _t_beyond(1.0 - q if q > 0.5 else q, df)  # q ≥ ½ makes 1 − q exact
    return t if q > 0.5 else -t


def _t_beyond(tail: float, df: float) -> float:
    """The t > 0 that Student's t with df degrees of freedom exceeds with probability ``tail`` (0 < tail < ½)."""
    low, high = 0.0, 1.0
    while _t_upper_tail(high, df) > tail:
        low, high = high, high * 2.0
        if math.isinf(high):
            raise ValueError(f"the quantile with df {df:g} this far in the tail is beyond the largest number")
    log_density = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    t = max(low, min(high, -NormalDist().inv_cdf(tail)))  # the normal curve's answer, a first guess
    for _ in range(200):
        excess = _t_upper_tail(t, df) - tail  # positive: t is too small
        if excess > 0:
            low = t
        else:
            high = t
        density = math.exp(log_density - (df + 1) / 2 * math.log1p(t * t / df))
        step = excess / density if density > 0 else math.inf
        following = t + step
        if not low < following < high:
            following = (low + high) / 2
        if abs(following - t) <= 1e-15 * max(1.0, abs(t)) or high - low <= 1e-15 * high:
            return following
        t = following
    return t


def _z(level: float) -> float:
    """The multiplier for a two-sided interval: 1.96 for level 0.95."""
    return NormalDist().inv_cdf(0.5 + checks.level(level) / 2)


def standard_error(p: float, n: int) -> float:
    """The binomial standard error of a score.

    In words: "the typical distance between a measured score and the true rate is the square root
    of the true rate times its complement, divided by the number of questions":
    SE = √(p (1 − p) / n). standard_error(0.25, 100) is about 0.0433.
    """
    p = checks.probability("p", p)
    n = checks.whole("n", n)
    return math.sqrt(p * (1.0 - p) / n)


def margin_of_error(p: float, n: int, level: float = 0.95) -> float:
    """Half the width of the normal confidence interval: z × SE, with z = 1.96 for level 0.95.

    43.9 % on 14,079 questions gives about 0.008, i.e. ±0.8 points.
    """
    return _z(level) * standard_error(p, n)


def confidence_interval(p: float, n: int, level: float = 0.95, method: str = "normal") -> tuple[float, float]:
    """The range (low, high) the true rate probably lies in, given a score p on n questions.

    method="normal": the score plus or minus z standard errors, clipped to [0, 1].
    method="wilson": the Wilson score interval, which stays inside [0, 1] on its own and behaves
    better for scores near 0 or 1 on few questions: its centre is pulled toward one half,
    (p + z²/2n) / (1 + z²/n), and its half-width is z √(p(1 − p)/n + z²/4n²) / (1 + z²/n).
    """
    p = checks.probability("p", p)
    n = checks.whole("n", n)
    z = _z(level)
    method = checks.choice("method", method, INTERVAL_METHODS)
    if method == "normal":
        half = z * math.sqrt(p * (1.0 - p) / n)
        return max(0.0, p - half), min(1.0, p + half)
    shrink = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / shrink
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n)) / shrink
    # At p = 0 (or 1) the low (or high) end is exactly 0 (or 1); rounding would leave a speck.
    low = 0.0 if p == 0.0 else max(0.0, centre - half)
    high = 1.0 if p == 1.0 else min(1.0, centre + half)
    return low, high


def binomial_cdf(k: int, n: int, p: float) -> float:
    """The probability that n independent tries, each succeeding with probability p, give at most k successes."""
    n = checks.whole("n", n)
    if n > MAX_EXACT_N:
        raise ValueError(f"n must be at most {MAX_EXACT_N}, got {n}")
    k = checks.whole("k", k, minimum=0)
    p = checks.probability("p", p)
    return _binomial_cdf_table(n, p)[min(k, n)]


def _binomial_cdf_table(n: int, p: float) -> list[float]:
    """P(X ≤ k) for k = 0..n, X ~ Binomial(n, p), summed from log-space terms to avoid underflow."""
    if p in (0.0, 1.0):
        return [1.0 if (p == 0.0 or k == n) else 0.0 for k in range(n + 1)]
    log_p, log_q = math.log(p), math.log1p(-p)
    log_n_fact = math.lgamma(n + 1)
    total, table = 0.0, []
    for k in range(n + 1):
        total += math.exp(log_n_fact - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q)
        table.append(min(total, 1.0))
    return table


def chance_band(n: int, options: int = 4, level: float = 0.95, method: str = "normal") -> tuple[float, float]:
    """The range (low, high) a pure guesser's score falls in, with probability ``level``, on n questions.

    A guesser picks one of ``options`` answers at random, so its true rate is 1/options (0.25 for
    MMLU's four options). method="normal": 1/options ± z standard errors, clipped to [0, 1];
    on 100 questions that is 16.5 % to 33.5 %. method="exact": the central range of the binomial
    distribution itself, from the count below which at most (1 − level)/2 of guessers fall to the
    count above which at most as many fall, divided by n.
    """
    n = checks.whole("n", n)
    options = checks.whole("options", options, minimum=2)
    method = checks.choice("method", method, BAND_METHODS)
    chance = 1.0 / options
    if method == "normal":
        return confidence_interval(chance, n, level, "normal")
    if n > MAX_EXACT_N:
        raise ValueError(f"n must be at most {MAX_EXACT_N} for the exact method, got {n}")
    tail = (1.0 - checks.level(level)) / 2
    cdf = _binomial_cdf_table(n, chance)
    low = next(k for k, c in enumerate(cdf) if c >= tail)
    high = next((k for k, c in enumerate(cdf) if c >= 1.0 - tail), n)
    return low / n, high / n


def is_distinguishable_from_chance(
    score: float, n: int, options: int = 4, level: float = 0.95, method: str = "normal"
) -> bool:
    """Whether a score on n questions can be told apart from guessing.

    True when the score's confidence interval (see confidence_interval) leaves out the chance
    rate 1/options. 30 % on 100 questions: False; 30 % on 1,000 questions: True.
    """
    options = checks.whole("options", options, minimum=2)
    low, high = confidence_interval(score, n, level, method)
    chance = 1.0 / options
    return not low <= chance <= high
