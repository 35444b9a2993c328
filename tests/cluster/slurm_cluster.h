// A private single-node Slurm cluster for tests: munged, slurmctld and slurmd started on localhost with a key,
// socket, ports, spool and state folders of their own, and stopped again by pid (also when a test fails).
#pragma once

#include "support/process_signals.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>

#include <csignal>
#include <memory>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace mkbtest {

class SlurmCluster {
public:
    SlurmCluster() = default;
    SlurmCluster(const SlurmCluster&) = delete;
    SlurmCluster& operator=(const SlurmCluster&) = delete;
    ~SlurmCluster() { stop(); }

    /// Why the cluster cannot run here ("" when it can): the programs are missing, or we are not root.
    static QString missingPrerequisite() {
        for (const char* program : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel"}) {
            if (QStandardPaths::findExecutable(program).isEmpty() &&
                QStandardPaths::findExecutable(program, {"/usr/sbin", "/sbin"}).isEmpty()) {
                return QString("%1 is not installed (packaging/install-deps.sh installs slurm-wlm and munge)")
                    .arg(program);
            }
        }
        if (::geteuid() != 0) {
            return "slurmd must run as root to start jobs; run this test as root";
        }
        return {};
    }

    /// Starts the three daemons and waits until the node is idle. On failure, why says what and the logs.
    bool start(QString& why) {
        if (!dir_.isValid()) {
            why = "no temporary folder";
            return false;
        }
        const QString root = dir_.path();
        for (const char* sub : {"munge", "state", "spool", "log"}) {
            QDir().mkpath(root + "/" + sub);
        }
        QFile key(root + "/munge/munge.key");
        if (!key.open(QIODevice::WriteOnly)) {
            why = "cannot write the munge key";
            return false;
        }
        QFile random("/dev/urandom");
        random.open(QIODevice::ReadOnly);
        key.write(random.read(1024));
        key.close();
        QFile::setPermissions(key.fileName(), QFile::ReadOwner);
        QFile::setPermissions(root + "/munge", QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        const QString socket = root + "/munge/socket";
        munged_.start(findProgram("munged"),
                      {"-F", "-f", "--socket=" + socket, "--key-file=" + key.fileName(),
                       "--log-file=" + root + "/log/munged.log", "--pid-file=" + root + "/munge/munged.pid",
                       "--seed-file=" + root + "/munge/munged.seed"});
        if (!munged_.waitForStarted(10000) || !waitFor([&]() { return QFile::exists(socket); }, 10000)) {
            why = "munged did not start: " + QString::fromUtf8(munged_.readAllStandardError());
            return false;
        }
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        const QString hostName = QString::fromUtf8(host).section('.', 0, 0);
        const int controllerPort = freePort();
        const int nodePort = freePort();
        QFile conf(root + "/slurm.conf");
        if (!conf.open(QIODevice::WriteOnly)) {
            why = "cannot write slurm.conf";
            return false;
        }
        conf.write(QString("# Written by the test: a one-node cluster of its own, no cgroups, no systemd, no "
                           "accounting.\n"
                           "ClusterName=mkbtest\nSlurmctldHost=%1(127.0.0.1)\nSlurmctldPort=%2\nSlurmdPort=%3\n"
                           "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=%4\n"
                           "SlurmUser=root\nSlurmdUser=root\nStateSaveLocation=%5/state\nSlurmdSpoolDir=%5/spool\n"
                           "SlurmctldPidFile=%5/slurmctld.pid\nSlurmdPidFile=%5/slurmd.pid\n"
                           "SlurmctldLogFile=%5/log/slurmctld.log\nSlurmdLogFile=%5/log/slurmd.log\n"
                           "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                           "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
                           "JobCompType=jobcomp/none\nSwitchType=switch/none\nMpiDefault=none\n"
                           "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
                           "SlurmdParameters=config_overrides\nReturnToService=2\nMinJobAge=600\nKillWait=2\n"
                           "InactiveLimit=0\nWaittime=0\n"
                           "NodeName=mkbnode NodeAddr=127.0.0.1 NodeHostname=%1 CPUs=2 RealMemory=1000 "
                           "State=UNKNOWN\n"
                           "PartitionName=debug Nodes=mkbnode Default=YES MaxTime=INFINITE State=UP\n")
                       .arg(hostName)
                       .arg(controllerPort)
                       .arg(nodePort)
                       .arg(socket, root)
                       .toUtf8());
        conf.close();
        confPath_ = conf.fileName();
        environment_ = QProcessEnvironment::systemEnvironment();
        environment_.insert("SLURM_CONF", confPath_);
        controller_.setProcessEnvironment(environment_);
        node_.setProcessEnvironment(environment_);
        controller_.setProcessChannelMode(QProcess::MergedChannels);
        node_.setProcessChannelMode(QProcess::MergedChannels);
        controller_.start(findProgram("slurmctld"), {"-D", "-i", "-f", confPath_});
        if (!controller_.waitForStarted(10000)) {
            why = "slurmctld did not start";
            return false;
        }
        node_.start(findProgram("slurmd"), {"-D", "-N", "mkbnode", "-f", confPath_});
        if (!node_.waitForStarted(10000)) {
            why = "slurmd did not start";
            return false;
        }
        if (!waitFor([&]() { return slurm({"sinfo", "-h", "-o", "%T"}).trimmed() == "idle"; }, 60000)) {
            why = "the node never became idle: sinfo says '" + slurm({"sinfo", "-h", "-o", "%T"}).trimmed() +
                  "'; slurmctld: " + QString::fromUtf8(controller_.readAll()).right(1500) +
                  "; slurmd: " + QString::fromUtf8(node_.readAll()).right(1500);
            return false;
        }
        return true;
    }

    /// Cancels every job of the cluster, waits for them to end, then stops slurmd, slurmctld and munged by pid.
    void stop() {
        if (controller_.state() == QProcess::Running) {
            slurm({"scancel", "--partition=debug"});
            waitFor([&]() { return slurm({"squeue", "-h", "-o", "%i"}).trimmed().isEmpty(); }, 20000);
        }
        for (QProcess* daemon : {&node_, &controller_, &munged_}) {
            if (signalIfRunning(*daemon, SIGTERM) && !daemon->waitForFinished(15000)) {
                signalIfRunning(*daemon, SIGKILL);
                daemon->waitForFinished(5000);
            }
        }
    }

    /// Runs a Slurm client command against this cluster and returns its stdout.
    QString slurm(const QStringList& command) const {
        QProcess process;
        process.setProcessEnvironment(environment_);
        process.start(command.front(), command.mid(1));
        if (!process.waitForFinished(30000)) {
            signalIfRunning(process, SIGKILL);
            process.waitForFinished();
            return {};
        }
        return QString::fromUtf8(process.readAllStandardOutput());
    }

    /// The environment a client of this cluster needs (SLURM_CONF).
    QProcessEnvironment environment() const { return environment_; }
    QString confPath() const { return confPath_; }
    QString logs() const { return readLog("log/slurmctld.log") + "\n" + readLog("log/slurmd.log"); }

private:
    static QString findProgram(const char* name) {
        QString found = QStandardPaths::findExecutable(name);
        return found.isEmpty() ? QStandardPaths::findExecutable(name, {"/usr/sbin", "/sbin"}) : found;
    }
    template <typename Condition>
    static bool waitFor(Condition condition, int timeoutMs) {
        for (int waited = 0; waited < timeoutMs; waited += 200) {
            if (condition()) {
                return true;
            }
            QThread::msleep(200);
        }
        return condition();
    }
    static int freePort() {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = 0;
        socklen_t length = sizeof address;
        int port = 0;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
            port = ntohs(address.sin_port);
        }
        ::close(fd);
        return port;
    }
    QString readLog(const char* name) const {
        QFile file(dir_.path() + "/" + name);
        return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()).right(3000) : QString();
    }

    QTemporaryDir dir_{QDir::tempPath() + "/mkbslurm-XXXXXX"};
    QString confPath_;
    QProcessEnvironment environment_;
    QProcess munged_;
    QProcess controller_;
    QProcess node_;
};

} // namespace mkbtest
