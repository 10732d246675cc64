package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacpfl/pacpfl/asm"
	"github.com/pacpfl/pacpfl/asm/asmtest"
	"github.com/pacpfl/pacpfl/bench"
	"github.com/pacpfl/pacpfl/internal/emulated"
	"github.com/pacpfl/pacpfl/linalg"
)

// runCLI runs the CLI in-process and returns status, stdout, stderr.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	st := run(args, &out, &errb)
	return st, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	st, out, errs := runCLI("version")
	require.Equal(t, 0, st, errs)
	assert.Contains(t, out, "pacpfl "+Version)
	assert.Contains(t, out, "chosen "+asm.Current().String())
	assert.Contains(t, out, "detected "+asm.Detected().String())
	for _, b := range linalg.Backends() {
		assert.Contains(t, out, b)
	}
	assert.Contains(t, out, "gonum")
}

func TestVersionReportsForcedLevel(t *testing.T) {
	asmtest.ForEachLevel(t, func(t *testing.T, l asm.Level) {
		require.NoError(t, asm.Configure(l.String()))
		st, out, _ := runCLI("version")
		require.Equal(t, 0, st)
		assert.Contains(t, out, "chosen "+l.String())
	})
}

func TestBadSIMDEnvironmentIsAStartupError(t *testing.T) {
	defer asm.Configure("")
	// What init does with PACPFL_SIMD=bogus, replayed in-process.
	err := asm.Configure("bogus")
	require.Error(t, err)
	restore := setConfigErrForTest(err)
	defer restore()
	st, out, errs := runCLI("version")
	assert.Equal(t, exitUsage, st)
	assert.Empty(t, out)
	assert.Contains(t, errs, "bogus")
	assert.Contains(t, errs, asm.EnvVar)
}

func TestUnknownSubcommandAndBadFlag(t *testing.T) {
	st, out, errs := runCLI("frobnicate")
	assert.Equal(t, exitUsage, st)
	assert.Empty(t, out)
	assert.Contains(t, errs, `unknown subcommand "frobnicate"`)
	assert.Contains(t, errs, "pacpfl help")

	st, _, errs = runCLI("version", "--no-such-flag")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "no-such-flag")

	st, _, errs = runCLI("version", "extra")
	assert.Equal(t, exitUsage, st)
	assert.Contains(t, errs, "unexpected argument")

	st, _, _ = runCLI()
	assert.Equal(t, exitUsage, st)
}

func TestHelpListsEverySubcommand(t *testing.T) {
	st, out, _ := runCLI("help")
	require.Equal(t, 0, st)
	for _, name := range commands.Names() {
		c, _ := commands.Lookup(name)
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), name+" ") {
				line = l
			}
		}
		assert.Contains(t, line, c.Summary, "help line for %s", name)
	}
	st, _, _ = runCLI("help", "nope")
	assert.Equal(t, exitUsage, st)
	st, _, _ = runCLI("version", "-h")
	assert.Equal(t, 0, st)
}

func setConfigErrForTest(err error) (restore func()) {
	old := configError
	configError = func() error { return err }
	return func() { configError = old }
}

// A bad PACPFL_CPU_GHZ is a start-up error naming the variable (exit 2), as
// a bad PACPFL_SIMD is: it would make every "% of peak" wrong.
func TestBadClockEnvironmentIsAStartupError(t *testing.T) {
	for _, v := range []string{"junk", "Inf", "0", "-1", "NaN", "1e300"} {
		t.Setenv(bench.GHzEnvVar, v)
		st, _, errOut := runCLI("version")
		assert.Equal(t, exitUsage, st, "PACPFL_CPU_GHZ=%q", v)
		assert.Contains(t, errOut, "PACPFL_CPU_GHZ", "PACPFL_CPU_GHZ=%q", v)
	}
}

// skipIfRepeat skips a long end-to-end run where it would only repeat the
// default build's: what it checks is the CLI's logic, which depends neither
// on the architecture nor on the kernels. make test runs it natively in the
// default build; its repeats would be
//   - under a user-mode emulator (CI's arm64 step under qemu), whose arm64
//     kernels have their own tests;
//   - with -tags purego, whose pure-Go kernels are checked against the
//     assembly in package asm and reach the CLI in TestGolden at the generic
//     level in every build;
//   - with -tags netlib, which adds OpenBLAS as a backend the CLI does not
//     use unless asked (linalg.DefaultBackend is native).
func skipIfRepeat(t *testing.T) {
	t.Helper()
	if altBuild {
		t.Skip("end-to-end run of the CLI's logic; it runs in the default build")
	}
	if emulated.Is() {
		t.Skip("architecture-independent end-to-end run; skipped under emulation (it runs natively)")
	}
}
