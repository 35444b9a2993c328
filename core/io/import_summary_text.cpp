// Wording of ImportSummary: the one place that counts an import in words.
#include "core/io/import_summary_text.h"

namespace mkb {

std::string importCountsText(const ImportSummary& summary) {
    return std::to_string(summary.models) + " model(s): " + std::to_string(summary.trialsImported) + " new trial(s), " +
           std::to_string(summary.trialsReplaced) + " replaced, " + std::to_string(summary.trialsUnchanged) +
           " unchanged, " + std::to_string(summary.submissionsImported) + " submission(s), " +
           std::to_string(summary.invocationsImported) + " invocation(s); " + std::to_string(summary.issues.size()) +
           " issue(s)";
}

std::string importOutcomeText(const ImportSummary& summary) {
    if (!summary.cancelled) {
        return importCountsText(summary);
    }
    const int handled = summary.trialsImported + summary.trialsUnchanged + summary.trialsReplaced;
    return "cancelled after " + std::to_string(handled) + " of " + std::to_string(summary.trialsTotal) + " trial(s) (" +
           importCountsText(summary) + "); importing the folder again completes it";
}

} // namespace mkb
