package main

import (
	"errors"
	"strings"

	"github.com/pacpfl/pacpfl/internal/flagvalue"
	"github.com/pacpfl/pacpfl/option"
)

// Checks of flag values (package flagvalue's), as usage errors.

func checkSeeds(seeds int, base uint64) error { return asUsage(flagvalue.CheckSeeds(seeds, base)) }

func checkNames(flagName string, names, known []string) error {
	return asUsage(flagvalue.CheckNames(flagName, names, known))
}

func checkThreads(flagName string, n int) error { return asUsage(flagvalue.CheckThreads(flagName, n)) }

// fieldUsage is err, if not nil, as a usage error; an
// *option.FieldError's message names the fields by their flags (flag gives
// a field's flag without the dashes).
func fieldUsage(err error, flag func(field string) string) error {
	return asUsage(flagNames(err, flag))
}

// flagNamed is an error whose *option.FieldError is worded with flags;
// errors.As and errors.Is see the error it words.
type flagNamed struct {
	error
	text string
}

func (e flagNamed) Error() string { return e.text }
func (e flagNamed) Unwrap() error { return e.error }

// flagNames is err with the message of its *option.FieldError, if it has
// one whose fields all have a flag, naming them by their flags (flag gives
// a field's flag without the dashes, "" for none); the text err wraps it
// in stays, the FieldError's scope goes.
func flagNames(err error, flag func(field string) string) error {
	var fe *option.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	names := make([]string, len(fe.Fields))
	for i, f := range fe.Fields {
		if names[i] = flag(f); names[i] == "" {
			return err
		}
		names[i] = "--" + names[i]
	}
	return flagNamed{err, strings.Replace(err.Error(), fe.Error(), fe.Message(names...), 1)}
}

// libraryFlags are the flags of the option fields that the FieldErrors of
// packages rpc (ServerSettings, ServerAuth, ClientAuth, ClientConfig and
// WriteCerts's parameters), predict (Override, FileOptions), clienteval,
// train (CSVSource, BNNOptions) and fl (GPInference, PACPFLOptions' Beta)
// name: a field name means one flag in all of them.
var libraryFlags = map[string]string{
	"Listen": "listen", "Wait": "wait", "RoundTimeout": "round-timeout", "MaxPayload": "max-payload",
	"Limits.MaxUnauth": "max-unregistered", "Limits.MaxUnauthPerHost": "max-unregistered-per-host",
	"Checkpoint": "checkpoint", "CheckpointEvery": "checkpoint-every", "Resume": "resume", "Quorum": "quorum",
	"MaxNormFactor": "max-norm-factor", "Insecure": "insecure", "CertFile": "tls-cert", "KeyFile": "tls-key",
	"ClientCA": "client-ca", "TokenDir": "tokens", "CAFile": "ca", "TokenFile": "token-file",
	"MaxClasses": "max-classes", "dir": "out", "hosts": "hosts", "days": "days", "clients": "clients",
	"Mode": "gp-inference", "Inducing": "inducing", "Model": "model", "Data": "data",
	"ContextColumn": "context-column", "Params": "params", "InitSeed": "init-seed", "DF": "df", "SigmaP": "sigma-p",
	"Inference.Mode": "gp-inference", "Inference.Inducing": "inducing", "Hidden": "hidden", "Samples": "samples",
	"Classes": "classes", "SigmaMu": "sigma-mu", "SigmaOmega": "sigma-omega", "Arch": "arch", "Image": "image",
	"Spec.ClientColumn": "client-column", "Spec.TargetColumn": "target-column",
	"Federate.TestFraction": "test-fraction", "Spec.Task": "task", "Model.Samples": "samples",
	"Options.SigmaMu": "sigma-mu", "Options.SigmaOmega": "sigma-omega", "Options.Bounds.WeightDraws": "weight-draws",
	"Beta": "beta", "ID": "client",
}

// libraryFlag is the flag of a library option field (libraryFlags).
func libraryFlag(field string) string { return libraryFlags[field] }

// asUsage is err, if not nil, as a usage error (exit status 2).
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}
