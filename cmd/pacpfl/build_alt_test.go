//go:build purego || netlib

package main

// altBuild: this test binary is one of make test's extra builds (purego,
// netlib) of code whose default build make test also runs.
const altBuild = true
