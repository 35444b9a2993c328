// The Runs view: a form that launches `mkb run` for this project (here or on Slurm), the live trial table (with each
// trial's Slurm job and its state for a Slurm run) and log of the run being followed, Cancel and Resume; on opening a
// project it finds a run still going there and follows it again.
#pragma once

#include "gui/common/job_runner.h"
#include "gui/runs/run_request.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTableView;

namespace mkb {
struct ProgressEvent;
}

namespace mkb::gui {

class RunSession;
class RunTrialsModel;
struct LiveRun;

class RunsView : public QWidget {
    Q_OBJECT
public:
    explicit RunsView(QWidget* parent = nullptr);
    ~RunsView() override;

    /// The project whose runs are launched and followed; looks for a run still going there and follows it, else
    /// shows the last run the workbench started there (replayed from its progress file). Returns whether it
    /// reattached to a live run the workbench started; a run started elsewhere is looked up in the store off the
    /// GUI thread and announced by reattached().
    bool setStorePath(const QString& storePath);
    QString storePath() const { return storePath_; }

    RunRequest request() const;
    void setRequest(const RunRequest& request);

    /// Starts the form's run; "" on success, else the one-line reason (also shown in the view).
    QString startRun();
    bool cancelRun();
    QString resumeRun();

    RunSession* session() const { return session_; }
    RunTrialsModel* trialsModel() const { return model_; }
    QTableView* trialsTable() const { return table_; }
    QPlainTextEdit* logPane() const { return log_; }
    QLabel* statusLabel() const { return status_; }
    /// One line per `note` event of the followed run (a device that left the rotation); hidden while there is none.
    QLabel* notesLabel() const { return notes_; }
    QLineEdit* devicesEdit() const { return devicesEdit_; }
    /// Why the Devices field cannot be graded on (core's message), or what it means; Start waits for a valid list.
    QLabel* devicesNote() const { return devicesNote_; }
    QPushButton* startButton() const { return startButton_; }
    QPushButton* cancelButton() const { return cancelButton_; }
    QPushButton* resumeButton() const { return resumeButton_; }

    /// Splitter sizes and the trial table's header, for the window's saved layout.
    QByteArray saveLayout() const;
    bool restoreLayout(const QByteArray& layout);

signals:
    /// The followed run ended (trials were written: views showing project data should reload).
    void runEnded(int exitCode, const QString& status);
    /// Reattached to a run that was still going when the project was opened.
    void reattached(qint64 pid);

private:
    QWidget* buildForm();
    void driverChosen();
    void executorChosen();
    void devicesChanged();
    void clearNotes();
    void updateJobColumns();
    void followLiveRun(const LiveRun& live);
    void takeEvent(const ProgressEvent& event);
    void runEndedHere(int exitCode, const QString& status, const QString& message);
    void updateButtons();
    void appendLog(const QString& text);

    QString storePath_;
    RunSession* session_;
    RunTrialsModel* model_;

    QLineEdit* modelEdit_ = nullptr;
    QComboBox* driverCombo_ = nullptr;
    QPlainTextEdit* driverSettings_ = nullptr;
    QLineEdit* problemsEdit_ = nullptr;
    QComboBox* dslACombo_ = nullptr;
    QComboBox* dslBCombo_ = nullptr;
    QSpinBox* replicatesSpin_ = nullptr;
    QDoubleSpinBox* wallClockSpin_ = nullptr;
    QSpinBox* submissionsSpin_ = nullptr;
    QSpinBox* maxBytesSpin_ = nullptr;
    QSpinBox* concurrencySpin_ = nullptr;
    QDoubleSpinBox* gradeTimeoutSpin_ = nullptr;
    QSpinBox* timingDrawsSpin_ = nullptr;
    QLineEdit* deviceEdit_ = nullptr;
    QLineEdit* devicesEdit_ = nullptr;
    QPushButton* allDevicesButton_ = nullptr;
    QLabel* devicesNote_ = nullptr;
    QString devicesProblem_; // runDevicesProblem of the Devices field; Start is disabled while it is not ""
    QLineEdit* pythonEdit_ = nullptr;
    QLineEdit* suitesEdit_ = nullptr;
    QLineEdit* dslDirsEdit_ = nullptr;
    QCheckBox* rerunStaleCheck_ = nullptr;
    QComboBox* boundaryCombo_ = nullptr;
    QComboBox* executorCombo_ = nullptr;
    QLineEdit* partitionEdit_ = nullptr;
    QLineEdit* sharedEdit_ = nullptr;

    QPushButton* startButton_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    QPushButton* resumeButton_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* notes_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QTableView* table_ = nullptr;
    QPlainTextEdit* log_ = nullptr;
    QSplitter* splitter_ = nullptr;
    QSplitter* rightSplitter_ = nullptr;
    bool replayingLastRun_ = false; // showing the project's last, finished run: its end is no news
    JobRunner storeLookups_{this};  // looks for a run started outside the workbench; a newer run supersedes it
};

} // namespace mkb::gui
