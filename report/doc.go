// Package report holds the --json reports of pacpfl: the types that train,
// experiment and the other commands write and that plot reads back, the
// encoder that writes them and the reader.
//
// The report types are one schema for both sides. Train and BNNTrain are
// the reports of a training run (both with their certificates,
// Certification: the test-set ones always, the PAC-Bayes one of GP clients
// when asked), and TrainText its text: short by default, every term with
// Explain. Experiment (regression) and FMNIST (classification on
// Fashion-MNIST) are those of a comparison of methods over several seeds, and Results is what every experiment report has in
// common, so that a reader of per-client values needs no copy of either.
// Sweep is the report of PAC-PFL at several settings (k or ε), written by
// the sweep experiments and read by plot sweep.
// Constructors (NewTrain, NewExperiment, NewClassMethod, …) build them from
// the library's results.
//
// NaN rule: a figure that is undefined — a group without clients, the
// confidence interval of one seed, the calibration error of a point
// predictor, a bound that is +Inf — is NaN or ±Inf in memory and null in
// the file. Marshal writes every non-finite float as null at any depth,
// where encoding/json would refuse the whole report; Float, the type of the
// figures, also reads null back as NaN, so that a reader never mistakes an
// undefined figure for 0. ReadFile reads a report with a size limit and
// errors that say which file is wrong and how.
package report
