// Package fedscore scores a federated method's models on a group of
// clients over the cores: the evaluation step fedavg and pfedbayes share.
// It lies apart from fedrun so that package fl, whose server runs on
// fedrun, is not among fedrun's imports.
package fedscore

import (
	"fmt"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/internal/fedrun"
)

// Score evaluates a group of clients over the cores: predict returns
// client i's class probabilities on its test rows (len(YTest)×classes),
// scored for accuracy and calibration (fl.EvaluateClassification).
func Score[T any](pool *fedrun.Pool[T], clients []data.ClientData, classes int,
	predict func(v T, i int) ([]float64, error)) (fl.ClassGroupMetrics, error) {
	preds := make([]fl.ClassPrediction, len(clients))
	err := fedrun.Each(pool, len(clients), func(v T, i int) error {
		p, err := predict(v, i)
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		preds[i] = fl.ClassPrediction{Probs: p}
		return nil
	})
	if err != nil {
		return fl.ClassGroupMetrics{}, err
	}
	return fl.EvaluateClassification(preds, clients, classes)
}
