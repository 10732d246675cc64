package linalg

import (
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/pacpfl/pacpfl/asm"
)

// DefaultBackend is the backend used when none is named.
const DefaultBackend = "native"

// knownBackends lists every backend pacpfl knows, compiled in or not, in the
// order they are reported.
var knownBackends = []string{"native", "gonum", "openblas"}

// registry holds the backends compiled into this binary.
var registry = map[string]func() blas.Float64{
	"gonum": func() blas.Float64 { return gonum.Implementation{} },
}

// notCompiled explains how to get a known backend that this build lacks.
var notCompiled = map[string]string{}

func register(name string, f func() blas.Float64) { registry[name] = f }

// Backend returns the BLAS implementation with the given name ("" means
// DefaultBackend). An unknown name, or one not compiled into this binary, is
// an error saying what is available; so is an unusable PACPFL_SIMD setting.
func Backend(name string) (blas.Float64, error) {
	if name == "" {
		name = DefaultBackend
	}
	if err := asm.ConfigError(); err != nil {
		return nil, err
	}
	if f, ok := registry[name]; ok {
		return f(), nil
	}
	if why, ok := notCompiled[name]; ok {
		return nil, fmt.Errorf("linalg: backend %q is not compiled into this binary: %s", name, why)
	}
	return nil, fmt.Errorf("linalg: unknown BLAS backend %q (valid: %s)", name, strings.Join(knownBackends, ", "))
}

// Backends returns the names of the backends compiled into this binary.
func Backends() []string {
	var names []string
	for _, n := range knownBackends {
		if _, ok := registry[n]; ok {
			names = append(names, n)
		}
	}
	var extra []string
	for n := range registry {
		if !contains(knownBackends, n) {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return append(names, extra...)
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
