// Filing one finished trial that was made elsewhere (an imported folder, a cluster job's shard) under one rule:
// the same content is filed once, changed content archives the live trial, history never disturbs the live one.
#pragma once

#include "core/store/store.h"
#include "core/util/result.h"

#include <cstdint>
#include <vector>

namespace mkb {

enum class FiledAs {
    Unchanged, // this content (trial.origin) is already stored in the same role: nothing written
    Imported,  // written as a new trial (live, or archived when trial.archived)
    Replaced,  // a live trial with other content was archived and this one written live
};

struct FiledTrial {
    FiledAs filed = FiledAs::Unchanged;
    bool relinked = false;    // unchanged skill arm stored without its source trial, linked now
    std::int64_t trialId = 0; // the trial written, or the live one found unchanged (0 for unchanged history)
    int submissionsWritten = 0;
};

/// Files trial (with outcome and submissions) in one transaction. trial.origin must identify the content;
/// trial.archived files it as history. A skill arm is linked to the live solo of its source DSL, whatever
/// sourceTrialId it carries. Errors come from the store.
Result<FiledTrial> fileTrial(Store& store, TrialRecord trial, const TrialOutcome& outcome,
                             std::vector<SubmissionRecord> submissions);

} // namespace mkb
