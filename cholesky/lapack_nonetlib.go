//go:build !netlib

package cholesky

func init() {
	lapackNotCompiled["openblas"] = "build with -tags netlib and CGO_LDFLAGS='-lopenblas -llapacke' " +
		"(Debian: apt-get install libopenblas-dev liblapacke-dev)"
}
