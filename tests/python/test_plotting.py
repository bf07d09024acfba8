"""racksim.plotting's held-out band: the measured times a calibrated prediction's held-out error allows,
worked out by hand, and the band drawn where they say."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from racksim import plotting  # noqa: E402


def test_heldout_range_from_the_90th_percentile():
    # |predicted / measured - 1| <= 0.25: measured in [100 / 1.25, 100 / 0.75]
    low, high = plotting.heldout_range(100.0, {"p90_abs_pct": 25.0})
    assert low == pytest.approx(80.0)
    assert high == pytest.approx(133.333333)
    # from 100 % the model could be any amount too fast: no upper bound
    assert plotting.heldout_range(100.0, {"p90_abs_pct": 125.6}) == (pytest.approx(100 / 2.256), math.inf)
    # no held-out figure (calibration none, failures; pandas' NaN for a missing one)
    for missing in (None, math.nan):
        assert all(math.isnan(v) for v in plotting.heldout_range(100.0, missing))


def test_heldout_band_drawn_between_the_bounds():
    fig, ax = plt.subplots()
    band = plotting.heldout_band(ax, [1, 2, 3], [100.0, 200.0, 50.0],
                                 [{"p90_abs_pct": 25.0}, None, {"p90_abs_pct": 150.0}], "C0")
    ys = [v[1] for path in band.get_paths() for v in path.vertices]
    assert min(ys) == pytest.approx(20.0)   # 50 / 2.5
    assert max(ys) == pytest.approx(500.0)  # unbounded top drawn at 10x the prediction
    assert any(y == pytest.approx(133.333333) for y in ys)
    plt.close(fig)
