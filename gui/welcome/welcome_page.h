// The page an empty project opens on: what the workbench is for and the first steps (open the example project,
// grade a kernel, start a run, import MetaKernelBench results) with the recent projects.
#pragma once

#include <QStringList>
#include <QWidget>

class QListWidget;
class QPushButton;

namespace mkb::gui {

class WelcomePage : public QWidget {
    Q_OBJECT
public:
    explicit WelcomePage(QWidget* parent = nullptr);

    /// Lists these project files under "Recent projects" (most recent first); an empty list hides the section.
    void setRecentProjects(const QStringList& paths);

    QPushButton* openExampleButton() const { return openExample_; }
    QPushButton* openKbxExampleButton() const { return openKbxExample_; }
    QPushButton* gradeKernelButton() const { return gradeKernel_; }
    QPushButton* startRunButton() const { return startRun_; }
    QPushButton* importResultsButton() const { return importResults_; }
    QListWidget* recentProjectsList() const { return recent_; }

signals:
    void openExampleRequested();
    /// The second example: KernelBench-X's corpus regraded on an H200.
    void openKbxExampleRequested();
    void gradeKernelRequested();
    void startRunRequested();
    void importResultsRequested();
    void recentProjectRequested(const QString& path);

private:
    QPushButton* openExample_ = nullptr;
    QPushButton* openKbxExample_ = nullptr;
    QPushButton* gradeKernel_ = nullptr;
    QPushButton* startRun_ = nullptr;
    QPushButton* importResults_ = nullptr;
    QListWidget* recent_ = nullptr;
    QWidget* recentSection_ = nullptr;
};

} // namespace mkb::gui
