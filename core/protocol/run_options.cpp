// The table of `mkb run`'s options: names, kinds, defaults (the grading ones from GradeSettings), ranges and help.
#include "core/protocol/run_options.h"

#include "core/vocabulary/grade_settings.h"

namespace mkb {
namespace {

BoundOptionTable<RunOptions> buildRunOptionTable() {
    const GradeSettings grading;
    using R = RunOptions;
    return {
        {textOption("model", "NAME", "the model's name in the store").isRequired(), &R::model},
        {textOption("driver", "KIND", "reference, command or chat").isRequired(), &R::driver},
        {pathOption("driver-config", "FILE", "the driver's settings, a JSON object (never put secrets in it)"),
         &R::driverConfig},
        {textOption("problems", "GLOB",
                    "problems to include: a shell glob over \"family/NN_slug\", \"pNN\", \"NN_slug\" or the family, "
                    "e.g. \"*\", \"p0[1-3]\", \"attention/*\"")
             .isRequired(),
         &R::problems},
        {textOption("dsls", "A,B[,C...]",
                    "the DSL pair, or more DSLs: every pair of them is run, pair after pair, each DSL's solos shared "
                    "(e.g. triton,cuda,numba,pallas: 12 directions)")
             .isRequired(),
         &R::dsls},
        {integerOption("replicates", "N", "replicates per cell").withDefault(1).within(1, 100).isAlwaysWritten(),
         &R::replicates},
        {pathOption("suite", "DIR", "a suite root").defaultSaid("the shipped problems/").isRepeatable(), &R::suites},
        {pathOption("dsl-dir", "DIR", "an extra folder of DSL descriptors, searched first").isRepeatable(),
         &R::dslDirs},
        {textOption("device", "DEV", "cuda:N or cpu").defaultSaid("cuda:0"), &R::device},
        {textOption("devices", "LIST",
                    "grade on several devices at once instead: \"all\" (every visible GPU) or a comma list such as "
                    "cuda:0,cuda:2 (cpu:0,cpu:1 are test devices that grade on the CPU); one grader server per "
                    "device, each under its own lock, gradings to the least-loaded, a cell's re-timing whole on one "
                    "device, and each verdict records its device; a device whose server dies or whose device fails "
                    "leaves the rotation (one note line) and its gradings run on the others; when every device is "
                    "lost the run stops (exit 5) keeping what finished; not with --device"),
         &R::devices},
        {pathOption("python", "PATH", "the grader's interpreter").defaultSaid("$MKB_PYTHON, else python3"), &R::python},
        {pathOption("store", "PATH", "the project store").defaultSaid("$MKB_STORE, else the user's data folder"),
         &R::store},
        {pathOption("workspaces", "DIR", "where attempt workspaces go")
             .defaultSaid("beside the store, <store>.attempts/"),
         &R::workspaces},
        {numberOption("wall-clock", "S", "wall-clock seconds per attempt (grading waits included)")
             .withDefault(2400)
             .above(0)
             .isAlwaysWritten(),
         &R::wallClockSeconds},
        {integerOption("submissions", "N", "feedback submissions per attempt")
             .withDefault(10)
             .within(0, 10000)
             .isAlwaysWritten(),
         &R::submissions},
        {integerOption("max-kernel-bytes", "N", "kernel.py size limit")
             .withDefault(grading.maxKernelBytes)
             .within(1, 1 << 30)
             .isAlwaysWritten(),
         &R::maxKernelBytes},
        {numberOption("grade-timeout", "S", "bound of one evaluation, in seconds")
             .withDefault(grading.timeoutS)
             .above(0)
             .isAlwaysWritten(),
         &R::gradeTimeoutSeconds},
        // Each grading re-checks GradeSettings::recheckDraws of its timing draws: fewer draws than that cannot grade.
        {integerOption("timing-draws", "N",
                       "timing draws per evaluation (each grading re-checks " + std::to_string(grading.recheckDraws) +
                           " of them)")
             .withDefault(grading.timingDraws)
             .within(grading.recheckDraws, 100000)
             .isAlwaysWritten(),
         &R::timingDraws},
        {textOption("boundary", "B",
                    "the implementation boundary graded and stated in the prompt: mkb (MetaKernelBench's rule, eager "
                    "PyTorch may finish what a DSL kernel began) or strict (all arithmetic in the DSL); a trial "
                    "graded under another boundary (legacy included) is stale (docs/guide/boundaries.md)")
             .withDefault(grading.boundary)
             .isAlwaysWritten(),
         &R::boundary},
        {integerOption("concurrency", "N", "attempts in flight at once; grading is serialised per GPU")
             .withDefault(2)
             .within(1, 64)
             .isAlwaysWritten(),
         &R::concurrency},
        {flagOption("rerun-stale", "archive stale trials and run them again"), &R::rerunStale},
        {flagOption("no-retime",
                    "skip the paired re-timing of cells (on by default: as soon as a cell's three arms are final, "
                    "while other attempts still run, a cell whose base and skill passed has its kernels timed "
                    "together on --device under its GPU lock, docs/metrics.md; cells already re-timed of the same "
                    "kernels, device and grader are kept; mkb retime does the same for existing stores); on --device "
                    "cpu (a test device) it stops at 20..200 rounds or 10 s instead of 100..2000 rounds or 60 s"),
         &R::noRetime},
        {flagOption("dry-run", "print the plan (with the grader's fingerprint) and stop; nothing is written"),
         &R::dryRun},
        {choiceOption("progress", "MODE",
                      "text (lines on stderr) or json (one JSON object per event on stdout: plan, trial_started, "
                      "submission, trial_finished, retimed, run_finished)",
                      {"text", "json"})
             .withDefault("text"),
         &R::progress},
        {textOption("only", "COORD",
                    "run only this trial of the plan, e.g. p01_r1_solo_triton (mkb run-shard runs one trial per "
                    "Slurm job this way)")
             .isRepeatable(),
         &R::only},
        {choiceOption("executor", "KIND",
                      "local, or slurm: submit the runnable trials as Slurm job arrays, one GPU each, and merge what "
                      "the jobs write into --store (docs/guide/cluster.md); no re-timing",
                      {"local", "slurm"})
             .withDefault("local"),
         &R::executor},
        {pathOption("shared", "DIR",
                    "slurm: a folder this host and every node see at the same path (batches, shards, logs)"),
         &R::shared},
        {textOption("partition", "P", "slurm: the partition the jobs go to").defaultSaid("the cluster's default"),
         &R::partition},
        {textOption("slurm-args", "\"...\"",
                    "slurm: more sbatch options, as shell words (e.g. \"--account=lab --qos=high\")"),
         &R::slurmArgs},
        {textOption("slurm-gpu", "OPTION",
                    "slurm: how a job asks for its GPU, an sbatch option (none where there is no GRES)")
             .defaultSaid("--gres=gpu:1"),
         &R::slurmGpu},
        {integerOption("slurm-time", "MIN", "slurm: a job's time limit in minutes")
             .within(1, 60 * 24 * 365)
             .defaultSaid("wall clock + grade timeout + 10 min"),
         &R::slurmTimeMinutes},
        {numberOption("slurm-poll", "S", "slurm: seconds between looks at the queue and the shard folder")
             .withDefault(5)
             .above(0),
         &R::slurmPollSeconds},
    };
}

} // namespace

const BoundOptionTable<RunOptions>& runOptionTable() {
    static const BoundOptionTable<RunOptions> table = buildRunOptionTable();
    return table;
}

const OptionTable& runOptionDeclarations() {
    static const OptionTable declarations = declarationsOf(runOptionTable());
    return declarations;
}

const RunOptions& runOptionDefaults() {
    static const RunOptions defaults = optionDefaults(runOptionTable());
    return defaults;
}

Result<RunOptions> parseRunOptions(const std::vector<std::string>& args) {
    Result<ParsedOptions> parsed = parseOptions(runOptionDeclarations(), args);
    if (!parsed) {
        return parsed.error();
    }
    return optionsFrom(runOptionTable(), *parsed);
}

std::vector<std::string> runArguments(const RunOptions& options) {
    return optionArguments(runOptionTable(), options);
}

const std::vector<std::string>& slurmOnlyRunOptions() {
    static const std::vector<std::string> names = {"shared",    "partition",  "slurm-args",
                                                   "slurm-gpu", "slurm-time", "slurm-poll"};
    return names;
}

} // namespace mkb
