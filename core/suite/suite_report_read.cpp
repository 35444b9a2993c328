// Reading a suite report back for rendering: the heading facts loadEarlierSuiteReport read, each problem through
// checkFromReport.
#include "core/suite/suite_report_read.h"

#include "core/catalog/catalog.h"
#include "core/suite/suite_resume.h"

namespace mkb {

Result<SuiteCheckReport> readSuiteReport(const std::filesystem::path& reportPath,
                                         const std::filesystem::path& suiteRoot) {
    auto earlier = loadEarlierSuiteReport(reportPath, "report");
    if (!earlier) {
        return makeError(earlier.error().message);
    }
    SuiteCheckReport report;
    report.dsls = earlier->dsls;
    report.gradings = earlier->gradings;
    report.flakiness = earlier->flakiness;
    report.device = earlier->device;
    report.deviceName = earlier->deviceName;
    report.graderFingerprint = earlier->graderFingerprint;
    report.boundary = earlier->boundary;
    report.peaksJson = earlier->peaksJson;
    report.peaksNote = earlier->peaksNote;
    report.date = earlier->date;
    report.command = earlier->command;
    report.commandWords = earlier->commandWords;
    report.storePath = earlier->storePath;
    report.suiteRoot = earlier->suiteRoot.empty() ? suiteRoot : std::filesystem::path(earlier->suiteRoot);
    report.eagerTargetMs = earlier->eagerTargetMs.value_or(report.eagerTargetMs);
    report.drawsPerGrading = earlier->drawsPerGrading.value_or(report.drawsPerGrading);
    report.catalogIssues = earlier->catalogIssues;
    report.unchecked = earlier->unchecked;
    report.validateOnly = earlier->validateOnly;

    const Catalog catalog = loadCatalog({suiteRoot});
    for (const std::string& name : earlier->names) {
        const Problem* problem = catalog.find(name);
        if (!problem) {
            return makeError(reportPath.string() + ": " + name + " is not a problem of " + suiteRoot.string() +
                             " (the report was made for another suite, or the problem was removed)");
        }
        auto check = checkFromReport(*earlier, *problem);
        if (!check) {
            return makeError(reportPath.string() + ": " + name + ": " + check.error().message +
                             " since the report was made; check it again (mkb suite check --resume " +
                             reportPath.string() + ")");
        }
        report.problems.push_back(std::move(check).value());
    }
    return report;
}

} // namespace mkb
