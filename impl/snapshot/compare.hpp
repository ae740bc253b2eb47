// How a replay is compared with what a snapshot recorded (steel-replay, tests): per world, the
// largest absolute difference of its impulses and of its velocities, and the same relative to
// the larger of the two runs' largest magnitudes in that world.
#pragma once

#include "snapshot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace steel {
namespace snapshot {

struct Difference {
    double absolute = 0; // max |replayed - recorded|
    double relative = 0; // absolute / max(max |recorded|, max |replayed|); 0 when both are all zero
};

struct WorldDifference {
    Difference impulses;
    Difference velocities;
    double relative() const { return std::max(impulses.relative, velocities.relative); }
};

inline Difference difference(const double* recorded, const double* replayed, uint64_t count) {
    Difference d;
    double scale = 0;
    for (uint64_t k = 0; k < count; ++k) {
        const double gap = std::fabs(replayed[k] - recorded[k]);
        // A NaN gap counts as infinitely far.
        d.absolute =
            std::isnan(gap) ? std::numeric_limits<double>::infinity() : std::max(d.absolute, gap);
        scale = std::max({scale, std::fabs(recorded[k]), std::fabs(replayed[k])});
    }
    d.relative = d.absolute == 0 ? 0
                 : scale > 0     ? d.absolute / scale
                                 : std::numeric_limits<double>::infinity();
    return d;
}

// One entry per world. impulses and velocities are the replay's, laid out like the snapshot's.
inline std::vector<WorldDifference> compare_with_recorded(const Snapshot& recorded,
                                                          const std::vector<double>& impulses,
                                                          const std::vector<double>& velocities) {
    std::vector<WorldDifference> worlds(recorded.rows.world_row_counts.size());
    uint64_t row0 = 0, dof0 = 0;
    for (size_t w = 0; w < worlds.size(); ++w) {
        const uint32_t m = recorded.rows.world_row_counts[w], n = recorded.rows.world_dof_counts[w];
        worlds[w].impulses =
            difference(recorded.results.impulses.data() + row0, impulses.data() + row0, m);
        worlds[w].velocities =
            difference(recorded.results.velocities.data() + dof0, velocities.data() + dof0, n);
        row0 += m;
        dof0 += n;
    }
    return worlds;
}

// The default replay tolerance on the relative difference: the same build reproduces a solve
// bit for bit, so this only absorbs another compiler's or machine's rounding.
inline double default_tolerance(int32_t precision) {
    return precision == STEEL_PRECISION_FLOAT32 ? 1e-4 : 1e-9;
}

} // namespace snapshot
} // namespace steel
