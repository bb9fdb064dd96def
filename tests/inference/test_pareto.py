"""Pareto fronts and interpolation on constructed data with a known answer."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podium.inference.pareto import FrontPoint, interpolate, pareto_front


def xy(front):
    return [(p.x, p.y) for p in front]


def test_known_front_drops_dominated_points():
    pts = [FrontPoint(10, 100), FrontPoint(20, 80), FrontPoint(15, 70), FrontPoint(30, 40), FrontPoint(5, 90)]
    # (15, 70) is beaten by (20, 80); (5, 90) by (10, 100).
    assert xy(pareto_front(pts)) == [(10, 100), (20, 80), (30, 40)]


def test_non_monotone_input_order_does_not_matter():
    # A sweep whose throughput dips at one concurrency, given in a shuffled order.
    pts = [
        FrontPoint(30, 40),
        FrontPoint(10, 100),
        FrontPoint(25, 35),
        FrontPoint(20, 80),
        FrontPoint(12, 60),
    ]
    assert xy(pareto_front(pts)) == [(10, 100), (20, 80), (30, 40)]
    assert xy(pareto_front(list(reversed(pts)))) == [(10, 100), (20, 80), (30, 40)]


def test_ties():
    # Exact duplicates are kept once; equal x keeps the higher y; equal y keeps the higher x.
    pts = [
        FrontPoint(10, 100),
        FrontPoint(10, 100),
        FrontPoint(10, 90),
        FrontPoint(5, 100),
        FrontPoint(20, 50),
    ]
    assert xy(pareto_front(pts)) == [(10, 100), (20, 50)]


def test_single_point_and_unusable_points():
    assert xy(pareto_front([FrontPoint(7, 3)])) == [(7, 3)]
    assert pareto_front([]) == []
    bad = [
        FrontPoint(0, 5),
        FrontPoint(-1, 5),
        FrontPoint(math.nan, 5),
        FrontPoint(4, math.inf),
        FrontPoint(3, -1),
    ]
    assert pareto_front(bad) == []


def test_items_travel_with_points():
    front = pareto_front([FrontPoint(1, 2, "a"), FrontPoint(2, 1, "b"), FrontPoint(1, 1, "c")])
    assert [p.item for p in front] == ["a", "b"]


def test_interpolation_exact_linear_and_pchip():
    front = pareto_front([FrontPoint(1, 100), FrontPoint(2, 50), FrontPoint(4, 40)])
    assert interpolate(front, 2).y == 50
    assert interpolate(front, 2).method == "exact"
    assert interpolate(front, 1.5, "linear").y == pytest.approx(75.0)
    # Fritsch–Carlson by hand: slopes d0=-65, d1=-10 → Hermite at t=0.5 gives 68.125.
    assert interpolate(front, 1.5).y == pytest.approx(68.125)
    assert interpolate(front, 3, "linear").y == pytest.approx(45.0)


def test_pchip_reproduces_straight_lines_and_stays_monotone():
    line = pareto_front([FrontPoint(1, 100), FrontPoint(2, 80), FrontPoint(3, 60), FrontPoint(5, 20)])
    assert interpolate(line, 1.5).y == pytest.approx(90.0)
    assert interpolate(line, 4).y == pytest.approx(40.0)
    # A sharp knee: the interpolant never leaves the bracket of its two neighbours.
    knee = pareto_front([FrontPoint(1, 1000), FrontPoint(2, 990), FrontPoint(3, 100), FrontPoint(10, 90)])
    prev = math.inf
    for i in range(101):
        x = 1 + 9 * i / 100
        y = interpolate(knee, x).y
        assert y is not None and y <= prev + 1e-9
        prev = y
    y = interpolate(knee, 2.5).y
    assert 100 <= y <= 990


def test_outside_the_front_is_null_with_reason():
    front = pareto_front([FrontPoint(10, 100), FrontPoint(20, 80)])
    low, high = interpolate(front, 5), interpolate(front, 25)
    assert low.y is None and low.reason == "outside the front: interactivity spans 10 to 20"
    assert high.y is None and high.reason == "outside the front: interactivity spans 10 to 20"
    single = pareto_front([FrontPoint(7, 3)])
    assert interpolate(single, 7).y == 3
    got = interpolate(single, 8)
    assert got.y is None and got.reason == "outside the front: a single point at interactivity 7"
    empty = interpolate([], 1)
    assert empty.y is None and empty.reason == "no usable points on the front"


def test_interpolate_refuses_an_unsorted_front():
    with pytest.raises(ValueError):
        interpolate([FrontPoint(2, 1), FrontPoint(1, 2)], 1.5)


coords = st.floats(min_value=0.5, max_value=1000, allow_nan=False, allow_infinity=False)


@given(st.lists(st.tuples(coords, coords), min_size=1, max_size=40))
def test_front_properties_on_random_sets(pairs):
    points = [FrontPoint(x, y) for x, y in pairs]
    front = pareto_front(points)

    def dominates(a, b):
        return a.x >= b.x and a.y >= b.y and (a.x > b.x or a.y > b.y)

    assert front, "a non-empty set has a non-empty front"
    assert all(b.x > a.x and b.y < a.y for a, b in itertools.pairwise(front))
    assert not any(dominates(p, f) for p in points for f in front)
    on_front = {(f.x, f.y) for f in front}
    for p in points:
        assert (p.x, p.y) in on_front or any(dominates(f, p) for f in front)
    # Interpolation inside the front stays within the bracket of its neighbours.
    for a, b in itertools.pairwise(front):
        mid = interpolate(front, (a.x + b.x) / 2).y
        assert b.y - 1e-9 <= mid <= a.y + 1e-9
