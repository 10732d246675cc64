package report

// Results is what every experiment report (Experiment, FMNIST) has in
// common, to be read from either: the data set, the seeds and each method's
// per-client values. pacpfl plot experiment draws it.
type Results struct {
	Dataset string                   `json:"dataset"`
	Seeds   []uint64                 `json:"seeds"`
	Methods map[string]MethodResults `json:"methods"`
}

// MethodResults is a method's part of Results.
type MethodResults struct {
	PerClient PerClient `json:"per_client"`
}
