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
	im, err := x.bf.images()
	if err != nil {
		return fail(stderr, "client", err)
	}
	c.o.Client, err = x.peerClient(im, *c.id, stateFile)
	if errors.As(err, new(*option.FieldError)) {
		err = asUsage(err)
	}
	if err != nil {
		return fail(stderr, "client", libError(err))
	}
	return c.participate(stderr)
}

// peerClient is the configuration of client process id: an existing client
// builds only its own share of the split, a new one the split.
func (x *fmnistExperiment) peerClient(im *data.Images, id int, stateFile string) (rpc.ClientConfig, error) {
	f, bf := &x.f, &x.bf
	meta := &data.Dataset{Name: im.Name, D: im.D(), Classes: im.Classes} // the methods' settings need no rows
	ms, err := x.newMethods(meta)
	var nm methods.Networked
	if err == nil {
		nm, err = fedpeer.Networked(ms)
	}
	if err != nil {
		return rpc.ClientConfig{}, err
	}
	if n := bf.imageSplit(f).Existing(im.Classes); id >= 0 && id < n {
		own, err := bf.client(im, f, x.seedBase, id)
		if err != nil {
			return rpc.ClientConfig{}, err
		}
		return fedpeer.Client(nm, fedpeer.ClientOptions{ID: id, Existing: n, Data: own, Classes: im.Classes,
			Seed: x.seedBase, StateFile: stateFile})
	}
	ds, err := bf.dataset(im, f, x.seedBase)
	if err != nil {
		return rpc.ClientConfig{}, err
	}
	return fedpeer.ClientOf(nm, ds, id, x.seedBase, stateFile)
}
