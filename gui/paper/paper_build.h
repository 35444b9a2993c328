// The paper manifest (figures and tables to regenerate) and the one command that rebuilds them all, with a
// provenance file saying which data, code, grader and device they came from.
#pragma once

#include "core/util/result.h"
#include "gui/paper/headless_export.h"

#include <QString>
#include <QStringList>
#include <vector>

namespace mkb::gui::paper {

/// One table: `mkb report` arguments (without --store, --format and --output), the format and the file.
struct TableRequest {
    QStringList arguments;
    QString format; // md, csv, latex or json
    QString output;
};

/// A parsed manifest; every path is absolute (the manifest's relative paths resolved against its folder).
struct PaperManifest {
    QString folder;
    QString store;      // empty when the manifest names none (then --store must)
    QString provenance; // default: <folder>/provenance.json
    std::vector<FigureRequest> figures;
    std::vector<TableRequest> tables;
};

/// Reads a manifest (JSON, through the depth-bounded reader). An error names the entry ("figure 2 (fig/x.pdf)")
/// and what is wrong with it.
Result<PaperManifest> readPaperManifest(const QString& path);

struct PaperBuildOptions {
    QString storeOverride; // --store; replaces the manifest's store
    QString projectCommit; // generated/mkb/commit.h's kGitCommit
    QString version;
    QStringList commandLine; // as typed, for the provenance file
};

/// What a build wrote, in manifest order, tables first.
struct PaperBuildSummary {
    QStringList written;
    QString provenance;
};

/// Regenerates every table (writeReportTable: what `mkb report` writes) and figure of the manifest, in this process,
/// and writes the provenance file; stops at the first entry that fails, naming it.
Result<PaperBuildSummary> buildPaper(const PaperManifest& manifest, const PaperBuildOptions& options);

} // namespace mkb::gui::paper
