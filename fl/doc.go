// Package fl is the federated loop of PAC-PFL (server, client updates,
// differential privacy), its baselines, metrics and PAC-Bayesian bounds. The
// data sets it runs on live in package data.
package fl
