// Package data holds pacpfl's data sets in one place: the federated
// containers (a Dataset of existing and new clients, each a ClientData), the
// synthetic Polynomial regression set, the IDX reader (ReadIDX), image pools
// (Images; FashionMNIST loads Debian's dataset-fashion-mnist) and their
// federated splits (Labels5, the pFedBayes protocol; Dirichlet), and users'
// own data: ReadCSV reads a CSV file of per-client rows into Records, and
// Records.Federate makes a Dataset of them (held-out new clients, a
// per-client train/test split, standardisation kept as a Scaling).
//
// Conventions shared by every data set, so that the federated loop is the
// same for regression and classification:
//   - inputs are row-major, one sample per row of D float64 values
//     (images: D = 784 for 28×28, pixel/255 in [0, 1], row by row);
//   - targets are float64 in Y: real values for regression, the class index
//     0..C−1 (an exact small integer) for classification, where
//     Dataset.Classes = C (0 for regression);
//   - randomness comes from math/rand/v2 PCG streams selected by StreamID
//     from (seed, purpose tag, indices), so every result is a pure function
//     of its configuration, independent of GOMAXPROCS and scheduling.
//
// Errors: a configuration that cannot be met (too few images of a label for
// the split, a non-positive Dirichlet α, no clients) is refused with the
// numbers involved; a missing, truncated or corrupt IDX file is an error
// naming the file and the problem (ErrIDXMagic and friends can be matched
// with errors.Is), and a missing Fashion-MNIST says which Debian package or
// flag provides it. Constructed Datasets are plain values: safe to read from
// many goroutines, not to modify concurrently.
package data
