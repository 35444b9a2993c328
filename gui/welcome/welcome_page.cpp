// WelcomePage: four first steps as large buttons with a line each saying what they do, and the recent projects.
#include "gui/welcome/welcome_page.h"

#include <QDir>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace mkb::gui {

namespace {

QPushButton* stepButton(QGridLayout* grid, int row, const QString& title, const QString& explanation,
                        const QString& name, QWidget* parent) {
    auto* button = new QPushButton(title, parent);
    button->setObjectName(name);
    button->setMinimumHeight(36);
    button->setMinimumWidth(220);
    auto* label = new QLabel(explanation, parent);
    label->setWordWrap(true);
    grid->addWidget(button, row, 0);
    grid->addWidget(label, row, 1);
    return button;
}

} // namespace

WelcomePage::WelcomePage(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("welcomePage"));
    auto* heading = new QLabel(tr("<h2>Welcome to MetaKernelBench Workbench</h2>"), this);
    auto* purpose = new QLabel(tr("The workbench measures how far a skill written while solving a GPU kernel in one "
                                  "kernel language helps an agent solve the same problem in another: it grades "
                                  "kernels, runs models over problem suites, keeps every trial in this project and "
                                  "shows the transfer. This project has no trials yet; start here:"),
                               this);
    purpose->setWordWrap(true);

    auto* grid = new QGridLayout;
    grid->setHorizontalSpacing(16);
    grid->setVerticalSpacing(10);
    openExample_ = stepButton(grid, 0, tr("Open the example project"),
                              tr("A real run of the reference solutions (not a model) on the CPU fixture suite: "
                                 "every view and chart with data in it."),
                              QStringLiteral("welcomeOpenExample"), this);
    openKbxExample_ = stepButton(grid, 1, tr("Open the KernelBench-X example"),
                                 tr("KernelBench-X's public corpus of LLM-written Triton kernels, graded again on an "
                                    "NVIDIA H200: their verdicts beside ours, and each refinement step's claimed "
                                    "speedup against paired timing (Comparisons ▸ Transitions)."),
                                 QStringLiteral("welcomeOpenKbxExample"), this);
    gradeKernel_ = stepButton(grid, 2, tr("Grade a kernel"),
                              tr("Pick a problem in the Problems view and grade a kernel file against it."),
                              QStringLiteral("welcomeGradeKernel"), this);
    startRun_ = stepButton(grid, 3, tr("Start a run"),
                           tr("Run a model (or the reference driver) over problems and kernel languages in the Runs "
                              "view; the trials land in this project."),
                           QStringLiteral("welcomeStartRun"), this);
    importResults_ = stepButton(grid, 4, tr("Import MetaKernelBench results…"),
                                tr("Bring a MetaKernelBench results folder into this project (File ▸ Import, "
                                   "Ctrl+I, or drop the folder on the window)."),
                                QStringLiteral("welcomeImportResults"), this);
    grid->setColumnStretch(1, 1);

    recentSection_ = new QWidget(this);
    auto* recentLayout = new QVBoxLayout(recentSection_);
    recentLayout->setContentsMargins(0, 12, 0, 0);
    recentLayout->addWidget(new QLabel(tr("<b>Recent projects</b> (double-click to open)"), recentSection_));
    recent_ = new QListWidget(recentSection_);
    recent_->setObjectName(QStringLiteral("welcomeRecentProjects"));
    recent_->setMaximumHeight(160);
    recentLayout->addWidget(recent_);

    auto* column = new QVBoxLayout;
    column->addWidget(heading);
    column->addWidget(purpose);
    column->addSpacing(12);
    column->addLayout(grid);
    column->addWidget(recentSection_);
    column->addStretch(1);
    auto* frame = new QWidget(this);
    frame->setLayout(column);
    frame->setMaximumWidth(820);
    auto* outer = new QHBoxLayout(this);
    outer->addStretch(1);
    outer->addWidget(frame, 4);
    outer->addStretch(1);

    connect(openExample_, &QPushButton::clicked, this, &WelcomePage::openExampleRequested);
    connect(openKbxExample_, &QPushButton::clicked, this, &WelcomePage::openKbxExampleRequested);
    connect(gradeKernel_, &QPushButton::clicked, this, &WelcomePage::gradeKernelRequested);
    connect(startRun_, &QPushButton::clicked, this, &WelcomePage::startRunRequested);
    connect(importResults_, &QPushButton::clicked, this, &WelcomePage::importResultsRequested);
    connect(recent_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { emit recentProjectRequested(item->data(Qt::UserRole).toString()); });
    setRecentProjects({});
}

void WelcomePage::setRecentProjects(const QStringList& paths) {
    recent_->clear();
    for (const QString& path : paths) {
        auto* item = new QListWidgetItem(
            QStringLiteral("%1 — %2").arg(QFileInfo(path).fileName(), QDir::toNativeSeparators(QFileInfo(path).path())),
            recent_);
        item->setData(Qt::UserRole, path);
        item->setToolTip(path);
    }
    recentSection_->setVisible(!paths.isEmpty());
}

} // namespace mkb::gui
