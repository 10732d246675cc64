// Package predict makes predictions with a trained pacpfl model (a model
// file: pacpfl train --data FILE.csv --save, package modelfile). It is
// what pacpfl predict and pacpfl plot predictive run, and what train
// --data evaluates its clients with, so the three agree bit for bit.
//
// A model holds the k particles of the hyper-posterior and, for every
// existing client, its training rows. Predicting for a client personalises
// each particle on the client's rows — the rows the model stored for it
// and any context rows, the rows of the file marked as its own labelled
// data (a client the model never saw has only those) — and mixes the
// particles' posterior predictives with weights from their marginal
// likelihoods on those rows:
//
//   - GP clients (regression): each particle's GP posterior at the
//     client's temperature β(m) (the likelihood raised to β(m)/m, m the
//     client's rows), conditioned with the model's GP inference: the exact
//     GP or the sparse predictive through M inducing inputs (fl.GPInference;
//     SetInferenceMode and SetInducing override the file's). The result is
//     a Gaussian mixture (Output.Mixture), summarised per point in the
//     data's units by its mean, standard deviation and 2.5 % and 97.5 %
//     quantiles (Summary).
//   - BNN clients (classification): each particle's BNN posterior, found by
//     SVGD from a random stream of the model's seed and the client's ID;
//     the result is the class probabilities (Output.Probs).
//
// Typical use:
//
//	p, err := predict.Load("sites.model")
//	...
//	rec, err := p.ReadCSV("sites.csv", "split") // "split" marks the context rows
//	...
//	res, err := p.Predict(rec)
//	...
//	err = res.WriteCSV(os.Stdout)
//
// PredictClients is the lower level: clients given as standardised
// conditioning rows and inputs (ScaleX, ScaleY), one Output each.
//
// # Determinism and concurrency
//
// Predict and PredictClients spread the clients over GOMAXPROCS worker
// goroutines, each with its own single-threaded predictor. A client's
// result is computed by one worker from the model and that client's rows
// alone (a BNN client's random stream comes from the model's seed and its
// ID), and is written to its own slot, so the results are bit-identical
// whatever the number of workers and whichever worker takes which client.
// A client's prediction does not depend on the other clients predicted
// with it either.
//
// A Predictor may be used by several goroutines at once to predict: the
// predicting methods read it and share no scratch space. SetInferenceMode
// and SetInducing change it, and must not run at the same time as any
// other method.
//
// # Errors
//
// Errors that come from the caller's choices rather than from the data or
// the computation have types: an M above a sparse client's conditioning
// rows is an InducingError (matching fl.ErrTooManyInducing; Requested
// says whether SetInducing set that M or the model file did), a client
// with no rows to be personalised on a NoContextError, and overriding the
// GP inference of a BNN model ErrNotGP. An inconsistent model file wraps
// modelfile.ErrMalformed.
package predict
