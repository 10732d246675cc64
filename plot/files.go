package plot

import (
	"fmt"
	"slices"
	"strings"
)

// Drawn says what a figure of a report file shows, for the message of the
// command that drew it.
type Drawn struct {
	// What is the drawn series in words ("mean client LML of 60 rounds",
	// "per-client rsmse of 3 method(s)", "rsmse at 4 values of k").
	What string
	// Notes are remarks on what was left out, one line each.
	Notes []string
}

// MetricError is the error of a metric that a figure cannot draw: one the
// report at Path has no values of (Have lists those it has), or, with
// Want set, one the figure does not draw at all.
type MetricError struct {
	Metric, Path string
	Have         []string // the metrics the report has
	Want         string   // the metrics the figure draws, in words
}

func (e *MetricError) Error() string {
	if e.Want != "" {
		return fmt.Sprintf("%q: want %s", e.Metric, e.Want)
	}
	return fmt.Sprintf("%q: %s has per-client values of %s", e.Metric, e.Path, strings.Join(e.Have, ", "))
}

// ReportFigure is a figure of a JSON report file (pacpfl plot training,
// experiment or sweep).
type ReportFigure struct {
	// Metric is the metric drawn by default and MetricHelp the choice of
	// metrics in words; an empty MetricHelp: the figure has no choice.
	Metric, MetricHelp string
	// Draw draws the report at path in format (Format); a metric it
	// cannot draw is a *MetricError.
	Draw func(path, metric, format string) ([]byte, Drawn, error)
}

// ReportFigures returns the figures of report files by name: training
// (TrainingFile), experiment (ExperimentFile) and sweep (SweepFile).
func ReportFigures() map[string]ReportFigure {
	return map[string]ReportFigure{
		"training": {Draw: func(path, _, format string) ([]byte, Drawn, error) { return TrainingFile(path, format) }},
		"experiment": {MetricHelp: "the per-client metric: rsmse or ce (regression), accuracy or ce (fmnist); " +
			"default rsmse or accuracy",
			Draw: ExperimentFile},
		"sweep": {Metric: "rsmse", MetricHelp: "the metric: rsmse or ce", Draw: SweepFile},
	}
}

// TrainingFile draws the train report at path (ReadTrain, Training).
func TrainingFile(path, format string) ([]byte, Drawn, error) {
	tr, err := ReadTrain(path)
	if err != nil {
		return nil, Drawn{}, err
	}
	img, rounds, err := Training(tr, format)
	return img, Drawn{What: fmt.Sprintf("mean client LML of %d rounds", rounds)}, err
}

// ExperimentFile draws metric of the experiment report at path
// (ReadResults, Experiment); "" is DefaultMetric. A metric the report has
// no values of is a *MetricError; the errors of the figure name the file.
func ExperimentFile(path, metric, format string) ([]byte, Drawn, error) {
	r, err := ReadResults(path)
	if err != nil {
		return nil, Drawn{}, err
	}
	metrics := ExperimentMetrics(r)
	if metric == "" {
		metric = DefaultMetric(metrics)
	} else if !slices.Contains(metrics, metric) {
		return nil, Drawn{}, &MetricError{Metric: metric, Path: path, Have: metrics}
	}
	img, skipped, err := Experiment(r, metric, format)
	if err != nil {
		return nil, Drawn{}, fmt.Errorf("%s: %w", path, err)
	}
	d := Drawn{What: fmt.Sprintf("per-client %s of %d method(s)", metric, len(r.Methods)-len(skipped))}
	for _, s := range skipped {
		d.Notes = append(d.Notes, fmt.Sprintf("note: %s has no per-client %s "+
			"(a point predictor has no calibration error): not drawn", s, metric))
	}
	return img, d, nil
}

// SweepFile draws metric ("rsmse" or "ce"; another is a *MetricError) of
// the sweep report at path (ReadSweep, Sweep); the errors of the figure
// name the file.
func SweepFile(path, metric, format string) ([]byte, Drawn, error) {
	if metric != "rsmse" && metric != "ce" {
		return nil, Drawn{}, &MetricError{Metric: metric, Want: "rsmse or ce"}
	}
	s, err := ReadSweep(path)
	if err != nil {
		return nil, Drawn{}, err
	}
	img, info, err := Sweep(s, metric, format)
	if err != nil {
		return nil, Drawn{}, fmt.Errorf("%s: %w", path, err)
	}
	return img, Drawn{What: fmt.Sprintf("%s at %d values of %s", metric, info.Levels, info.Param)}, nil
}
