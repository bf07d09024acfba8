#pragma once
// Where the ranks of a collective run: N ranks placed in order over the trays (rank i on GPU i, filling
// tray 0's GPUs first, then tray 1, ...). With R racks each rack gets N / R ranks, in order from its
// first tray, so rank r of rack k is GPU k * (GPUs per rack) + r. This is what torchrun does with hosts
// listed in rack order (seed course, section 7: "ranks 0-71 in rack 0").
#include <string>
#include <vector>

namespace racksim {

class TopologyGraph;

// Global GPU indices of ranks 0..N-1. InputError (naming `where`) when N < 1, N is not a multiple of the
// graph's racks, or N / R exceeds the GPUs of one rack. Failed trays are not skipped: a rank placed on
// one makes the simulation fail with an error naming the tray.
std::vector<int> place_ranks(const TopologyGraph& graph, int ranks, const std::string& where = "--gpus");

}  // namespace racksim
