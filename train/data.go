package train

import (
	"fmt"

	"github.com/pacpfl/pacpfl/data"
)

// LabelsError refuses a classification target whose labels are mostly
// distinct: more than half as many as the rows, most seen once. It is most
// likely a regression target.
type LabelsError struct {
	Source, Target string
	Labels, Rows   int
}

func (e *LabelsError) Error() string {
	return fmt.Sprintf("%s: the target %q has %d distinct labels among %d rows, most of them seen once: "+
		"is it a regression target?", e.Source, e.Target, e.Labels, e.Rows)
}

// ReadData reads the CSV file path as spec describes and federates it as
// fc says: the data of a run on a user's file. Records.Dropped counts the
// rows dropped for a missing value; the records are returned also when
// their federation fails, so that the caller can say what was dropped.
func ReadData(path string, spec data.CSVSpec, fc data.FederateConfig) (*data.Records, *data.Federated, error) {
	rec, err := data.ReadCSVFile(path, spec)
	if err != nil {
		return nil, nil, err
	}
	if spec.Task == data.Classification && len(rec.Classes) > rec.Rows()/2 {
		return nil, nil, &LabelsError{Source: path, Target: rec.Target, Labels: len(rec.Classes), Rows: rec.Rows()}
	}
	fed, err := rec.Federate(fc)
	if err != nil {
		return rec, nil, err
	}
	return rec, fed, nil
}
