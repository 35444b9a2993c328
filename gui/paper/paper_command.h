// The two headless verbs of mkb-workbench, --export-chart and --build-paper: their arguments as parsed by main.cpp,
// run to an exit code with one line on stderr for each failure.
#pragma once

#include <QString>
#include <QStringList>

namespace mkb::gui::paper {

/// Exit codes, as the CLI's: 2 a bad command line or manifest, 3 an output that cannot be written, 4 no store.
inline constexpr int kExitUsage = 2;
inline constexpr int kExitOutput = 3;
inline constexpr int kExitStore = 4;

struct PaperCommandLine {
    QString chartKind; // --export-chart
    QString model;
    QString direction;
    QString family;
    QString preset;
    QString size;
    QString font;
    int dpi = 0;
    QString format;
    QString output;
    QString project;  // the positional PROJECT (the default store when empty)
    QString manifest; // --build-paper
    QString store;    // --store
    QStringList commandLine;
    QString commit;
    QString version;
};

int runExportChart(const PaperCommandLine& command);
int runBuildPaper(const PaperCommandLine& command);

} // namespace mkb::gui::paper
