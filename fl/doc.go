// Package fl is the federated loop of PAC-PFL (server, client updates,
// differential privacy), its baselines, data sets, metrics and PAC-Bayesian
// bounds.
package fl
