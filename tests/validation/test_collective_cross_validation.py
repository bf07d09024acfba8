#!/usr/bin/python3
"""racksim issue 11: the collective model predicts collectives it was not fitted to. `racksim validate`
refits the collective calibration without one racksim system (leave-one-system-out), then without one GPU
count (leave-one-GPU-count-out), and predicts the left-out records (every collective record of
calibrate/data/published_measurements.json and calibrate/data/public_collectives.json that a system can
express; sources in each record).

The issue's goals, on the pooled held-out predictions: |predicted / measured - 1| median <= 5 % and worst
<= 15 % at >= 64 MiB, median <= 15 % below. Measured 2026-12-02, session 6: leave one system out 7.6 % median,
74.3 % worst at >= 64 MiB, 11.2 % median below (the last goal met); leave one GPU count out 6.2 %, 94.2 %, 12.2 %
(met too), after an in-domain launch cost that a group's own data cannot determine became its architecture's
pooled value (not 0; an algorithm borrowed from the other architecture keeps it too), and a tree inside one node
stopped halving its channels' bus bandwidth. The first two goals are NOT met yet (session 5, after
records run as their source ran them (MNNVL off, two NVLink domains, TCPXO and pods of unknown placement out of
the fit), the all-to-all's latency summed over NCCL's p2p rounds and the extra latencies pulled toward 0 with
the weight of one series, the all-to-all's latency with one kernel's base, then NVLS's ramp to full bandwidth
(the first ramp_bytes_per_gpu x GPUs of the domain at half the bandwidth): leave one system out 7.8 % median,
74.3 % worst at >= 64 MiB, 15.7 % median below; leave one GPU count out 6.4 %, 94.2 %, 21.7 % (18.9 % before the
ramp: with the 8-GPU count held out, Hopper's NVLS borrows Blackwell's rack-scale ramp); session 4: 10.7 / 105.2 / 24.9 and 9.1 / 102.9 / 31.5; before
that 17.2 / 109.0 / 25.4 and 13.0 / 262.8 / 36.6): this test prints how far each is
and fails on regressions past the measured values (BOUNDS, a little above them), so that a model change
that makes prediction worse is caught.
The same numbers are printed by `racksim validate` and written to cross_validation.json."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["RACKSIM_BIN"]
SRC = os.environ["RACKSIM_SOURCE_DIR"]
TIMEOUT_SCALE = int(os.environ.get("RACKSIM_TEST_TIMEOUT_SCALE", "1"))  # 4 in the sanitizer build (tests/CMakeLists.txt)
GOALS = {"median_abs_error_at_or_above_64MiB": 0.05, "worst_abs_error_at_or_above_64MiB": 0.15,
         "median_abs_error_below_64MiB": 0.15}
# Measured in session 9: by system 3.9 % / 75.9 % / 10.9 %, by GPU count 3.7 % / 80.9 % / 12.0 % (docs/calibration.md
# section 4). The medians at >= 64 MiB meet the 5 %; the worst points do not meet its 15 %.
# Session 13 added CollNet (IB SHARP) and its 57 records (5 H100 chains, 26 B200 Direct/Chain at 8-32 GiB, 26 run as
# NCCL's choice with CollNet on: NVLS over CollNet, NVLS-tree, ring): by system 4.9 % (was 4.4 %), by GPU count 4.5 %
# (was 4.0 %), because SHARP's efficiency is measured on one racksim system only (hgx-b200: Together's slinky and
# MD1): held out, nothing else has a fabric-bound SHARP point, and the B200 points are 20-33 % fast.
# Session 21 added NCCL issue #1801's GB200 runs (three NVL partitions in three racks, NVLS off, NCCL 2.27.3): their
# Trees run 1.3x and 2.6x faster than NCCL 2.28's Blackwell tree cap, which every HGX B200 tree of 2.28.9/2.29.7
# meets within 9 % (docs/calibration.md section 4), so the pooled worst is now the 24-GPU tree's 164 %. The worst
# bounds hold every other point to the bounds of before (WORST_EXCEPT), so that a regression elsewhere still fails.
BOUNDS = {"system": {"median_abs_error_at_or_above_64MiB": 0.05, "worst_abs_error_at_or_above_64MiB": 1.70,
                     "median_abs_error_below_64MiB": 0.12},
          "GPU count": {"median_abs_error_at_or_above_64MiB": 0.05, "worst_abs_error_at_or_above_64MiB": 1.70,
                        "median_abs_error_below_64MiB": 0.13}}

# Session 18: held out by system, 132 of the 585 points at >= 64 MiB were beyond 15 %, and all but 7 of them in
# eight named groups of records (docs/calibration.md section 4, "Where the points beyond 15 % are"): Together's MD1
# (0.8 of the wire), slinky's SHARP runs (the only bandwidth-bound CollNet points) and its 480/496-GPU LL128 rings,
# our own 2-GPU H200 probes (a slow ramp), OCI's GB300 racks (the two-rack all-to-all at a quarter of the NICs),
# CoreWeave's 20 GB200 racks and OCI's two GB200 racks with NVLS off. Outside those groups 310 of 317 were within
# 15 %: a model change that moves points elsewhere past 15 % fails here even when the pooled figures hold.
GROUP_SERIES = ("use3a-ss", "h200-nvswitch-2gpu", "OCI BM.GPU.GB300.4", "x20 racks (CoreWeave", "OCI BM.GPU.GB200-v3.4",
                "(issue commenter's cluster)")
# Session 20: NCCL's p2p pipelines over NVLink in the all-to-all (docs/model.md): 121 beyond 15 %, 5 outside the
# groups (the GB300 one-tray and the 4-GPU H100 all-to-all sweeps came within 15 %; the GB300 two-tray one at
# 256-512 MiB went past it, +16 and +20 %, at the 60 GB/s that every sweep together fits).
# Session 21: NCCL #1801's two GB200 Trees (a named group: beyond NCCL 2.28's tree cap) make it 123.
# Session 23: OCI's GB200 README (16 records, 1 tray to 3 racks, NCCL 2.27.3) brings three all-to-all points past
# 15 % held out (-16.7 % on one rack at 4 GiB, whose in-place run took 9 % less; -16.7 / -15.4 % across three racks):
# 126, 8 outside the groups (the other five as before: GCP A4's two-node NVLS-tree at 64-256 MiB, now +22 to +62 %,
# and slinky's two 16-GPU trees). Data, not a model change.
# Session 26: NVIDIA/nccl-tests #309's H100 clusters (data): gj-aion's 4 and 8 nodes at NCCL's default CTAs run
# 320-325 GB/s where racksim gives NVLS-tree the NICs' ~375 (the maintainer: NCCL_MIN_CTAS=24 gets above 380, and
# those nodes reach 391 with it), a named group; qoofyk's two bare-metal nodes are 15.3-15.7 % fast at 64-128 MiB
# held out. 127 beyond 15 %, 6 outside the groups (qoofyk's two, GCP A4's three, OCI's one-rack GB200 all-to-all).
# Session 27: the same 8 nodes with NCCL_MIN_CTAS=24 (data, 14 points; in the named group): held out, their 64-512 MiB
# rows are 19-24 % fast (that run is slower there than the defaults run), 131 beyond 15 %. NVLS-tree's credit cycle
# (docs/model.md section 7) moved no point held out by system past 15 % or back: a system held out keeps no Hopper
# point that sets the cycle. Voltage Park's four H100 nodes (data, 31 points, NCCL 2.24.3 defaults): held out their
# 256 and 512 MiB rows are 27 and 17 % fast (the 256 MiB row is below the 128 MiB one), 133 beyond 15 %, 8 outside the
# named groups; their 1-8 GiB rows are 10-12 % fast held out (no Hopper cycle in that fold), within 4.2 % in sample.
# gj-aion's two nodes (data, 28 points in the named group): the forced Ring with 24 channels is 19 % slow at 64 MiB held out,
# 134 beyond 15 %.
# Session 28: NCCL's per-channel caps scale with the channels that run (NCCL_MIN_CTAS / MIN_NCHANNELS): that Ring's
# LL128 cap at 24 channels is 1.5x the default's, and its 64 MiB row comes within 1.2 % held out: 133.
# Session 28, second change: a verbs connection's queue pairs replace the credit window (docs/model.md section 7);
# MD1's rings and gj-aion's and Voltage Park's NVLS-trees held out come within 15 %: 111. Outside the named groups 8 ->
# 12: Voltage Park's two leave, qoofyk's four VMware VMs (one queue pair, yet 22.9 GB/s a channel: the model's one
# counter-example, docs/decisions.md) come in at 512 MiB-16 GiB, 17-21 % slow.
# Session 29: a ring loop's local copy inside one NVLink domain (calibration.hpp ring_copy_GBps, 2011 GB/s, fitted
# at >= 1 GiB): the 2-GPU H200 probes' rings held out come within 15 % from 512 MiB-1 GiB up; their 64-256 MiB rows
# stay beyond it (a slow ramp that nothing in the model explains; a copy counted in steps and fitted on every size
# took them in too, 94, but left the 2-GPU rings 10-15 % slow at >= 1 GiB): 103, still 12 outside the named groups.
# Session 32: records naming NCCL 2.18-2.24 take 2.27's tables (the nearest) instead of 2.28's: Voltage Park's 2-8 MiB
# rows become NVLS-tree as the runs show (its 13 held-out points' mean 14.9 -> 7.2 %), the H20 pair 42.5 -> 13.1 %; the
# refit moved Voltage Park's 256 MiB row (below its own 128 MiB one, above) from 14.9 to 16.2 % held out: 104, 13.
# Session 33: the launch across domains per 8 GPUs of each domain (calibration.hpp scale_out_launch_units): GCP A4's
# two-node B200 NVLS-tree at 64-256 MiB, priced with OCI's 64-GPU-rack floor held out, came within 15 % (+64 % ->
# +5 % at 64 MiB); Together MD1's and CoreWeave's 8 GiB points moved 1 point the wrong way, none past 15 %: 99, 10.
# Session 47: HGX A100 joined (Azure ND A100 v4, 24 sizes): held out, its 64 and 128 MiB rows are priced 21-22 % fast
# (measured 167 and 174 GB/s between the table's own 133 at 32 MiB and 214 at 256 MiB, its ring's ramp slower than
# Hopper's); no other point moved: 101, 12.
BEYOND_15_BOUNDS = {"all": 101, "outside the named groups": 12}
# And the all-to-all itself, held out by system at >= 64 MiB without OCI's two GB300 racks (a quarter of their
# NICs, which nothing in the model explains): 55 points, median 3.2 %, worst 19.6 % (before the pipelines 9.0 % and
# 27.8 %). The 15 % worst is not met by it either. Session 23: 65 points, median 3.6 %, worst 22.8 %: OCI's
# GB200 all-to-alls (model fast, -3 to -17 %) pull the NVLink all-to-all efficiency that GB300's two-tray sweep shares
# the other way (its 512 MiB point +19.6 -> +22.8 % held out).
ALL_TO_ALL_BOUNDS = {"median": 0.05, "worst": 0.23}


def nccl1801_tree(p):
    """NCCL issue #1801's GB200 Trees (NCCL 2.27.3), beyond NCCL 2.28's tree cap: reported, bounded apart."""
    return "partitions in three racks" in p["series"] and p["key"] == "all_reduce/tree"


# The worst at >= 64 MiB without the #1801 Trees, as the pooled bound was before them (the Trees themselves: +33 %
# at 12 GPUs and +164 % at 24, held out as in sample).
WORST_EXCEPT = {"system": 0.80, "GPU count": 0.90}


def worst_except_1801(cvs, kind):
    errs = [abs(p["predicted_s"] / p["measured_s"] - 1) for cv in cvs if cv["leave_one_out_by"] == kind
            for p in cv["predictions"] if p["bytes"] >= 64 * 2**20 and not nccl1801_tree(p)]
    return max(errs) if errs else 1.0


def all_to_all_errors(cvs):
    preds = [p for cv in cvs if cv["leave_one_out_by"] == "system" for p in cv["predictions"]
             if p["bytes"] >= 64 * 2**20 and p["key"] == "all_to_all/direct"
             and not ("OCI BM.GPU.GB300.4" in p["series"] and p["domains"] > 1)]
    errs = sorted(abs(p["predicted_s"] / p["measured_s"] - 1) for p in preds)
    if not errs:
        return 0, 1.0, 1.0
    mid = len(errs) // 2
    median = errs[mid] if len(errs) % 2 else 0.5 * (errs[mid - 1] + errs[mid])
    return len(errs), median, errs[-1]


def in_named_group(p):
    s = p["series"]
    if any(g in s for g in GROUP_SERIES):
        return True
    return ("cluster 'slinky'" in s and ("collnet" in p["key"] or p["gpus"] in (480, 496))) or nccl1801_tree(p)


def beyond_15(cvs):
    """Held out by system, >= 64 MiB: how many points are beyond 15 %, all and outside the named groups."""
    preds = [p for cv in cvs if cv["leave_one_out_by"] == "system" for p in cv["predictions"] if p["bytes"] >= 64 * 2**20]
    off = [p for p in preds if abs(p["predicted_s"] / p["measured_s"] - 1) > 0.15]
    outside = [p for p in preds if not in_named_group(p)]
    return {"all": (len(off), len(preds)),
            "outside the named groups": (sum(1 for p in off if not in_named_group(p)), len(outside))}


# Session 33: the launch across domains per 8 GPUs of each domain. GCP A4's two 8-GPU B200 nodes at 8-64 MiB,
# held out by system, were priced with the launch of OCI's 64-GPU GB300 racks as one figure per call: +64 to +174 %;
# now +5 to +21 %. Bounded at 25 % so that a launch that ignores the domain's size fails here.
SMALL_DOMAIN_LAUNCH = ("GCP A4 (HGX B200 8-GPU) x2 nodes", "all_reduce/nvls_tree", 8 * 2**20, 64 * 2**20, 0.25)


def small_domain_launch_errors(cvs):
    series, key, lo, hi, _ = SMALL_DOMAIN_LAUNCH
    return [abs(p["predicted_s"] / p["measured_s"] - 1) for cv in cvs if cv["leave_one_out_by"] == "system"
            for p in cv["predictions"] if series in p["series"] and p["key"] == key and lo <= p["bytes"] <= hi]


def spread_of(predictions):
    """measurement_spread recomputed here: a fold's points with the same system, algorithm, protocol, GPUs,
    domains, size and prediction, measured more than once; floor = (slowest - fastest) / (slowest + fastest)."""
    groups = {}
    for p in predictions:
        key = (p["fold"], p["system"], p["key"], p["protocol"], p["gpus"], p["domains"], p["bytes"], p["predicted_s"])
        groups.setdefault(key, []).append(p["measured_s"])
    out = {"small": [], "large": [], "twice small": [], "twice large": []}
    for key, times in groups.items():
        if len(times) > 1:
            out["large" if key[6] >= 64 * 2**20 else "small"].append(((max(times) - min(times)) / (max(times) + min(times)), len(times)))
    for p in predictions:  # nccl-tests' two timings of one run: out of place (priced) and in place
        if p["measured_in_place_s"]:
            a, b = sorted((p["measured_s"], p["measured_in_place_s"]))
            out["twice large" if p["bytes"] >= 64 * 2**20 else "twice small"].append(((b - a) / (b + a), 2))
    return out


def median(xs):
    xs = sorted(xs)
    mid = len(xs) // 2
    return 0 if not xs else xs[mid] if len(xs) % 2 else 0.5 * (xs[mid - 1] + xs[mid])


# Session 39: the records the model cannot tell apart but that were measured apart set a floor under any fit's
# worst error: at >= 64 MiB Together's two B200 clusters' NVLS-trees (slinky 1.31-1.42x MD1 at 16 GiB, the same
# system, GPUs and size): 17.2 %, above the 15 % (2 such groups of 118 with 329 points); below 64 MiB 58.8 %
# (83 groups, 180 points). docs/calibration.md section 4.
SPREAD_FLOOR_LARGE = 0.172


def check_spread(cvs, failures):
    for cv in cvs:
        ours = spread_of(cv["predictions"])
        theirs = cv["measurement_spread"]
        for band, name in (("small", "below_64MiB"), ("large", "at_or_above_64MiB")):
            floors = ours[band]
            worst = theirs["worst_" + name]
            if theirs["groups_" + name] != len(floors) or theirs["points_" + name] != sum(n for _, n in floors):
                failures.append("%s: measurement_spread %s counts %d groups / %d points, recomputed %d / %d"
                                % (cv["leave_one_out_by"], name, theirs["groups_" + name], theirs["points_" + name],
                                   len(floors), sum(n for _, n in floors)))
            top = max((f for f, _ in floors), default=None)
            if (top is None) != (worst is None) or (top is not None and abs(worst["floor"] - top) > 1e-6):
                failures.append("%s: measurement_spread worst %s floor %s, recomputed %s"
                                % (cv["leave_one_out_by"], name, worst and worst["floor"], top))
        for band, name in (("small", "below_64MiB"), ("large", "at_or_above_64MiB")):
            pairs = [f for f, _ in ours["twice " + band]]
            worst = theirs["timed_twice_worst_" + name]
            if (theirs["timed_twice_" + name] != len(pairs)
                    or abs(theirs["timed_twice_median_floor_" + name] - median(pairs)) > 1e-6
                    or (worst is None) != (not pairs) or (pairs and abs(worst["floor"] - max(pairs)) > 1e-6)):
                failures.append("%s: measurement_spread's in-place pairs %s differ from the recomputed ones (%d, median %.6f)"
                                % (cv["leave_one_out_by"], name, len(pairs), median(pairs)))
        beyond = sum(1 for f, _ in ours["large"] if f > 0.15)
        if theirs["groups_at_or_above_64MiB_floor_above_15pct"] != beyond:
            failures.append("%s: %d groups at >= 64 MiB with a floor above 15 %%, recomputed %d"
                            % (cv["leave_one_out_by"], theirs["groups_at_or_above_64MiB_floor_above_15pct"], beyond))
    spread = cvs[0]["measurement_spread"]
    floor = spread["worst_at_or_above_64MiB"]
    print("records priced alike, measured apart, >= 64 MiB: floor under any fit's worst error %.1f %% (%s; issue goal 15 %%)"
          % (100 * floor["floor"], floor["what"]))
    print("one run's two timings (out of place, in place), >= 64 MiB: %d records, median %.2f %%, widest %.1f %% (%s)"
          % (spread["timed_twice_at_or_above_64MiB"], 100 * spread["timed_twice_median_floor_at_or_above_64MiB"],
             100 * spread["timed_twice_worst_at_or_above_64MiB"]["floor"], spread["timed_twice_worst_at_or_above_64MiB"]["what"]))
    # Session 39: 326 held-out records at >= 64 MiB print both timings; their pairs' median floor is 0.1 %: the
    # clusters' spread above is not the timer's.
    if spread["timed_twice_at_or_above_64MiB"] < 300 or spread["timed_twice_median_floor_at_or_above_64MiB"] > 0.01:
        failures.append("in-place pairs at >= 64 MiB: %d records, median %.4f (measured 326, 0.001)"
                        % (spread["timed_twice_at_or_above_64MiB"], spread["timed_twice_median_floor_at_or_above_64MiB"]))
    if abs(floor["floor"] - SPREAD_FLOOR_LARGE) > 0.001:
        failures.append("the floor at >= 64 MiB is %.4f, measured %.3f: a record or the model's inputs changed; "
                        "say so in docs/calibration.md and here" % (floor["floor"], SPREAD_FLOOR_LARGE))


def by_points(cvs):
    return sum(cv["all"]["points"] for cv in cvs if cv["leave_one_out_by"] == "system")


def main():
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run([BIN, "validate", "--calibration", "default", "--out-dir", out], capture_output=True,
                             text=True, timeout=600 * TIMEOUT_SCALE)
        if run.returncode != 0:
            print(run.stdout, run.stderr)
            return 1
        if "leave one system out" not in run.stdout:
            print("validate did not print the cross-validation:\n" + run.stdout[-2000:])
            return 1
        with open(os.path.join(out, "cross_validation.json")) as f:
            cvs = json.load(f)
        with open(os.path.join(out, "heldout_errors.json")) as f:
            heldout = f.read()
    failures = []
    # Every result priced with the shipped calibration quotes calibrate/heldout_errors.json (its class's
    # leave-one-system-out error): the shipped copy must be what validate writes today.
    with open(os.path.join(SRC, "calibrate", "heldout_errors.json")) as f:
        if f.read() != heldout:
            failures.append("calibrate/heldout_errors.json is stale: copy the heldout_errors.json that "
                            "`racksim validate --out-dir D` writes (scripts/make-default-calibration.sh does)")
    table = json.loads(heldout)
    widest = [c for c in table["classes"] if c["arch"] == "*" and c["collective"] == "*"]
    if sum(c["points"] for c in widest) != by_points(cvs):
        failures.append("heldout_errors.json's widest classes hold %d points, the leave-one-system-out %d"
                        % (sum(c["points"] for c in widest), by_points(cvs)))
    by = {cv["leave_one_out_by"]: cv for cv in cvs}
    for kind in ("system", "GPU count"):
        if kind not in by:
            failures.append("no leave-one-%s-out result" % kind)
            continue
        cv = by[kind]
        allf = cv["all"]
        print("leave one %-9s out: %4d points; >= 64 MiB median %5.1f %% worst %5.1f %% (n=%d); < 64 MiB median %5.1f %% (n=%d)"
              % (kind, allf["points"], 100 * allf["median_abs_error_at_or_above_64MiB"],
                 100 * allf["worst_abs_error_at_or_above_64MiB"], allf["points_at_or_above_64MiB"],
                 100 * allf["median_abs_error_below_64MiB"], allf["points_below_64MiB"]))
        if allf["points_at_or_above_64MiB"] < 100:
            failures.append("%s: only %d held-out points at >= 64 MiB" % (kind, allf["points_at_or_above_64MiB"]))
        for key, bound in BOUNDS[kind].items():
            goal = GOALS[key]
            print("    %-36s %6.1f %%   issue goal %4.0f %% (%s)   regression bound %5.0f %%"
                  % (key, 100 * allf[key], 100 * goal, "met" if allf[key] <= goal else "NOT met", 100 * bound))
            if key == "worst_abs_error_at_or_above_64MiB":
                rest = worst_except_1801(cvs, kind)
                print("    %-36s %6.1f %%   without NCCL #1801's GB200 Trees           regression bound %5.0f %%"
                      % ("  worst of the other points", 100 * rest, 100 * WORST_EXCEPT[kind]))
                if rest > WORST_EXCEPT[kind]:
                    failures.append("leave-one-%s-out worst at >= 64 MiB without the #1801 Trees = %.1f %% > %.0f %%"
                                    % (kind, 100 * rest, 100 * WORST_EXCEPT[kind]))
            if allf[key] > bound:
                failures.append("leave-one-%s-out %s = %.1f %% > %.0f %% (measured before)" % (kind, key, 100 * allf[key], 100 * bound))
    for what, (off, points) in beyond_15(cvs).items():
        print("leave one system out, >= 64 MiB, %s: %d of %d points beyond 15 %% (regression bound %d)"
              % (what, off, points, BEYOND_15_BOUNDS[what]))
        if off > BEYOND_15_BOUNDS[what]:
            failures.append("%s: %d held-out points at >= 64 MiB beyond 15 %% > %d (measured before)" % (what, off, BEYOND_15_BOUNDS[what]))
    errs = small_domain_launch_errors(cvs)
    print("leave one system out, GCP A4's two B200 nodes at 8-64 MiB (the launch across 8-GPU domains): %d points, "
          "worst %.1f %% (bound %.0f %%)" % (len(errs), 100 * max(errs, default=1.0), 100 * SMALL_DOMAIN_LAUNCH[4]))
    if len(errs) < 4 or max(errs) > SMALL_DOMAIN_LAUNCH[4]:
        failures.append("GCP A4's two B200 nodes at 8-64 MiB held out: %d points, worst %.1f %% > %.0f %%"
                        % (len(errs), 100 * max(errs, default=1.0), 100 * SMALL_DOMAIN_LAUNCH[4]))
    n, median, worst = all_to_all_errors(cvs)
    print("leave one system out, all-to-all >= 64 MiB (OCI's two GB300 racks aside): %d points, median %.1f %%, worst %.1f %%"
          % (n, 100 * median, 100 * worst))
    if n < 40 or median > ALL_TO_ALL_BOUNDS["median"] or worst > ALL_TO_ALL_BOUNDS["worst"]:
        failures.append("all-to-all held out: %d points, median %.1f %%, worst %.1f %% (bounds %d %% / %d %%)"
                        % (n, 100 * median, 100 * worst, 100 * ALL_TO_ALL_BOUNDS["median"], 100 * ALL_TO_ALL_BOUNDS["worst"]))
    check_spread(cvs, failures)
    if "cannot tell apart" not in run.stdout:
        failures.append("validate did not print the records it cannot tell apart")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
