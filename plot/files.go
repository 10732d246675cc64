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

// MetricError is the error of a metric that a report has no values of.
type MetricError struct {
	Metric, Path string
	Have         []string // the metrics the report has
}

func (e *MetricError) Error() string {
	return fmt.Sprintf("%q: %s has per-client values of %s", e.Metric, e.Path, strings.Join(e.Have, ", "))
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

// SweepFile draws metric ("rsmse" or "ce") of the sweep report at path
// (ReadSweep, Sweep); the errors of the figure name the file.
func SweepFile(path, metric, format string) ([]byte, Drawn, error) {
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
