package fl

// InducingFor returns the M inducing inputs (M×d, row-major) that a client
// with inputs X (m×d, row-major) gets, in training and in prediction: rows
// of X chosen by k-means++ seeding (lml.SelectInducing) seeded with
// gi.Seed XOR the FNV-64a hash of X's float64 bits (little-endian, row by
// row). Anything that must use the same Z as the federation outside package
// fl (pacpfl predict on a saved model, pacpfl gp eval) calls this. M is not
// checked against gi: use Plan for the M of a client.
func (gi GPInference) InducingFor(X []float64, d, M int) ([]float64, error) {
	return gi.inducingFor(X, d, M)
}
