#pragma once
// The held-out error table (sim/calib/heldout_errors.hpp) from `racksim validate`'s leave-one-system-out
// predictions: every held-out point counted in its class at four widths (its architecture and algorithm,
// its architecture and op, its op on any architecture, any collective), each with its scope (one NVLink
// domain or across) and size band. Written into validate's --out-dir as heldout_errors.json; the shipped
// copy is calibrate/heldout_errors.json.
#include "models/calibration/collective_fit.hpp"
#include "sim/calib/heldout_errors.hpp"

namespace racksim::calibration {

// Classes with fewer points than this do not answer (HeldoutTable::lookup goes to a wider one): below ten
// points a 90th percentile is the worst point or its neighbour.
inline constexpr int kHeldoutMinPoints = 10;

// The table of `by_system` (a CrossValidation whose `by` is "system"), classes in sorted order, figures
// rounded to 4 decimals.
HeldoutTable heldout_table_of(const CrossValidation& by_system);

}  // namespace racksim::calibration
