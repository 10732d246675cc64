package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/internal/cli"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/rpc"
	"github.com/pacpfl/pacpfl/rpc/fedpeer"
)

// pacpfl server/client --method M: a peer method of experiment fmnist
// across processes (package rpc/fedpeer), with experiment fmnist's data,
// network and method flags and one seed (--seed).

// registerMethod registers --method (parsed before the flags: it chooses
// them).
func registerMethod(fs *flag.FlagSet) *string {
	return fs.String("method", fl.MethodPACPFL, "the method: pacpfl (PAC-PFL, the flags of pacpfl train) or a peer "+
		"method on Fashion-MNIST, "+strings.Join(methods.NetworkedMethods, ", ")+" (the flags of pacpfl experiment "+
		"fmnist, one --seed; server and clients give the same)")
}

// peerMethodArg is --method's value among args when it is not pacpfl.
func peerMethodArg(args []string) (string, bool) {
	v, ok := cli.FlagValue(args, "method")
	return v, ok && v != fl.MethodPACPFL
}

// parsePeer parses and checks the flags of a peer method's server or
// client: experiment fmnist's with one seed, the command's own (add).
func parsePeer(cmd, method string, args []string, stderr io.Writer,
	add func(fs *flag.FlagSet)) (x *fmnistExperiment, fs *flag.FlagSet, status int, ok bool) {
	fs, x = newFlagSet(cmd, stderr), newFMNIST()
	add(fs)
	x.register(fs, true)
	registerMethod(fs)
	if st, ok := parseFlags(fs, args, false); !ok {
		return nil, nil, st, false
	}
	if !slices.Contains(methods.NetworkedMethods, method) {
		return nil, nil, fail(stderr, cmd, usagef("--method %q: want pacpfl or one of %s", method,
			strings.Join(methods.NetworkedMethods, ", "))), false
	}
	x.methods = stringList{method}
	if err := x.check(fs); err != nil {
		return nil, nil, fail(stderr, cmd, err), false
	}
	return x, fs, exitOK, true
}

func runPeerServer(method string, args []string, stdout, stderr io.Writer) int {
	sf := &serverFlags{}
	x, fs, st, ok := parsePeer("server", method, args, stderr, sf.add)
	if !ok {
		return st
	}
	x.quiet, x.jsonPath = sf.quiet, sf.jsonPath
	if x.jsonPath != "" {
		if err := checkOutput("--json", x.jsonPath); err != nil {
			return fail(stderr, "server", err)
		}
	}
	setup, err := sf.st.Open(configHash(fs))
	if err != nil {
		return fail(stderr, "server", libError(err))
	}
	log := rpc.NewLog(stderr, "pacpfl server: ")
	x.wrap = func(ms []harness.Method) ([]harness.Method, error) {
		nm, err := fedpeer.Networked(ms)
		if err != nil {
			return nil, err
		}
		return []harness.Method{fedpeer.Method(setup, nm, log)}, nil
	}
	return x.run("server", stdout, stderr)
}

func runPeerClient(method string, args []string, stderr io.Writer) int {
	var c clientFlags
	var stateFile string
	x, _, st, ok := parsePeer("client", method, args, stderr, func(fs *flag.FlagSet) {
		c.add(fs)
		fs.StringVar(&stateFile, "state-file", "", "`FILE` where a client that keeps state between rounds "+
			"(pfedbayes) saves it after every update; a restarted client resumes from it (default: in memory)")
	})
	if !ok {
		return st
	}
	if err := c.check(0); err != nil {
		return fail(stderr, "client", err)
	}
	f, bf := &x.f, &x.bf
	im, err := bf.images()
	var ds *data.Dataset
	if err == nil {
		ds, err = bf.dataset(im, f, x.seedBase) // the client keeps its own part
	}
	var ms []harness.Method
	if err == nil {
		ms, err = x.newMethods(ds)
	}
	if err != nil {
		return fail(stderr, "client", err)
	}
	nm, err := fedpeer.Networked(ms)
	if err == nil {
		c.o.Client, err = fedpeer.ClientOf(nm, ds, *c.id, x.seedBase, stateFile)
	}
	if errors.As(err, new(*option.FieldError)) {
		err = asUsage(err)
	}
	if err != nil {
		return fail(stderr, "client", libError(err))
	}
	return c.participate(stderr)
}
