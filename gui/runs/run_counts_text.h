// A run's running totals in the Runs view's words (the counts come from core's progress reader).
#pragma once

#include "core/protocol/progress.h"

#include <QString>

namespace mkb::gui {

/// "3/12 done · 2 running · 1 failed · 2 passed · 00:41 elapsed · ETA 01:10".
QString describeCounts(const ProgressCounts& counts);

} // namespace mkb::gui
