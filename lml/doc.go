// Package lml is the client model: the GP prior with deep mean and deep kernel,
// its exact log marginal likelihood and gradient, and predictive distributions.
package lml
