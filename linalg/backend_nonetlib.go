//go:build !netlib

package linalg

func init() {
	notCompiled["openblas"] = "build with -tags netlib and CGO_LDFLAGS='-lopenblas -llapacke' " +
		"(Debian: apt-get install libopenblas-dev liblapacke-dev)"
}
