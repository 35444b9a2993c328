// The paired re-timing's stop options (--min-rounds, --max-rounds, --max-seconds, --ci-halfwidth), declared once for
// mkb retime and mkb calibrate, their defaults RetimeSettings'.
#pragma once

#include "core/util/option_table.h"
#include "core/wire/retime_request.h"

namespace mkb::cli {

inline OptionTable retimeStopOptions() {
    const RetimeSettings defaults;
    return {
        integerOption("min-rounds", "N", "rounds before the stop may apply")
            .withDefault(defaults.minRounds)
            .within(2, 1000000),
        integerOption("max-rounds", "N", "round limit").withDefault(defaults.maxRounds).within(2, 1000000),
        numberOption("max-seconds", "S", "time limit of the rounds").withDefault(defaults.maxSeconds).above(0),
        numberOption("ci-halfwidth", "F", "stop once every pair's CI is within ratio x (1 +- F)")
            .withDefault(defaults.ciHalfwidth)
            .above(0),
    };
}

/// The stop the parsed options say (checked: the round limit is not below the rounds before the stop).
inline Result<RetimeSettings> retimeStopFrom(const ParsedOptions& options) {
    const RetimeSettings stop{options.integer("min-rounds"), options.integer("max-rounds"),
                              options.number("max-seconds"), options.number("ci-halfwidth")};
    if (stop.maxRounds < stop.minRounds) {
        return makeError("--max-rounds (" + std::to_string(stop.maxRounds) + ") is below --min-rounds (" +
                         std::to_string(stop.minRounds) + ")");
    }
    return stop;
}

} // namespace mkb::cli
