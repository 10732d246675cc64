// Package blobs makes the tiny synthetic classification sets of the
// federated methods' tests (data.Blobs).
package blobs

import "github.com/pacpfl/pacpfl/data"

// Dataset is data.Blobs(clients, m, mTest, seed).
func Dataset(clients, m, mTest int, seed uint64) *data.Dataset {
	return data.Blobs(clients, m, mTest, seed)
}
