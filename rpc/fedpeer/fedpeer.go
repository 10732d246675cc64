// Package fedpeer runs a round-based peer method (methods.Networked:
// FedAvg, FedProx, FedAvg+FT, pFedBayes, FedVI and its FedAvg) across
// processes over package rpc: pacpfl server --method and pacpfl client
// --method. The server's method is the in-process one with the client
// processes in place of its clients, so its result is the in-process
// result; each client process builds only its own data and its own client.
// Client ids: the existing clients are 0..n−1, the new ones n..n+n_new−1
// (they only evaluate). This package starts no goroutines of its own.
package fedpeer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/fl/fedavg"
	"github.com/pacpfl/pacpfl/harness"
	"github.com/pacpfl/pacpfl/methods"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/rpc"
)

// Kind is the model kind a method's server and clients register with, and
// the length of its global vector, for classes classes: a server and a
// client of different methods, networks or settings (a fingerprint of
// every exported setting of m) do not train together.
func Kind(m methods.Networked, classes int) (kind string, dim int, err error) {
	if dim, err = m.Dim(classes); err != nil {
		return "", 0, err
	}
	return fmt.Sprintf("%s dim=%d classes=%d settings=%s", m.Name(), dim, classes, Fingerprint(m)), dim, nil
}

// Fingerprint is a short hash of v's exported data (numbers, strings,
// booleans, and the structs, slices, arrays, maps and pointers holding
// them), in field order: the same settings give the same fingerprint in
// every process. Functions, channels and unexported fields (hooks and run
// state) are left out.
func Fingerprint(v any) string {
	h := sha256.New()
	fingerprint(h, reflect.ValueOf(v))
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func fingerprint(w io.Writer, v reflect.Value) {
	switch v.Kind() {
	case reflect.Invalid, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		fmt.Fprint(w, "-")
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			fmt.Fprint(w, "nil")
			return
		}
		fingerprint(w, v.Elem())
	case reflect.Struct:
		t := v.Type()
		fmt.Fprint(w, "{")
		for i := range v.NumField() {
			if f := t.Field(i); f.IsExported() {
				fmt.Fprintf(w, "%s:", f.Name)
				fingerprint(w, v.Field(i))
				fmt.Fprint(w, ";")
			}
		}
		fmt.Fprint(w, "}")
	case reflect.Slice, reflect.Array:
		fmt.Fprintf(w, "[%d:", v.Len())
		for i := range v.Len() {
			fingerprint(w, v.Index(i))
			fmt.Fprint(w, ",")
		}
		fmt.Fprint(w, "]")
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		fmt.Fprint(w, "map[")
		for _, k := range keys {
			fingerprint(w, k)
			fmt.Fprint(w, ":")
			fingerprint(w, v.MapIndex(k))
			fmt.Fprint(w, ",")
		}
		fmt.Fprint(w, "]")
	case reflect.Float32, reflect.Float64:
		fmt.Fprintf(w, "%x", math.Float64bits(v.Float()))
	default:
		fmt.Fprintf(w, "%v", v)
	}
}

// Server is the coordinator's view of ds for method m: every client,
// existing and new (unless the method scores none), with the DataHash of
// its training data, so that a client process started with other data
// settings is refused.
func Server(m methods.Networked, ds *data.Dataset) (rpc.ServerConfig, error) {
	kind, dim, err := Kind(m, ds.Classes)
	if err != nil {
		return rpc.ServerConfig{}, err
	}
	var h [][]byte
	groups := [][]data.ClientData{ds.Existing, ds.New}
	if m.Traits().NoNewClients {
		groups = groups[:1]
	}
	for _, g := range groups {
		for i := range g {
			h = append(h, rpc.DataHash(&g[i]))
		}
	}
	return rpc.ServerConfig{Clients: len(h), ModelKind: kind, Dim: dim, DataHashes: h,
		DataHint: "check --seed and the split flags"}, nil
}

// Method is m served by setup: its Run waits for the client processes of
// ds, trains with them (resuming from and saving setup's checkpoint) and
// returns the in-process run's result; log gets the server's log lines.
// A signal (ctx done) ends the run after the round under way with an
// *rpc.Interrupted, the state saved.
func Method(setup *rpc.ServerSetup, m methods.Networked, log func(string, ...any)) harness.Method {
	return &served{setup: setup, m: m, log: log}
}

type served struct {
	setup *rpc.ServerSetup
	m     methods.Networked
	log   func(string, ...any)
}

func (s *served) Name() string { return s.m.Name() }

func (s *served) Run(ctx context.Context, ds *data.Dataset, seed uint64, obs harness.Observer) (*fl.MethodResult,
	error) {
	sc, err := Server(s.m, ds)
	if err != nil {
		return nil, err
	}
	tr := s.m.Traits()
	return s.setup.FederateRounds(ctx, rpc.PeerRun{Server: sc, Rounds: s.m.Rounds(), EveryRound: tr.Stateful,
		NoCheckpoint: tr.NoCheckpoint, VariableDim: tr.VariableDim, Log: s.log,
		Run: func(clients func() ([]fl.RoundClient, error), ck fl.RoundCheckpoint, d rpc.Drops) (*fl.MethodResult,
			error) {
			// Every client joins before the method's clock starts.
			rc, err := clients()
			if err != nil {
				return nil, err
			}
			rm := s.m.Remote(methods.Remote{Checkpoint: ck, Drops: fedavg.Drops(d),
				Clients: func(ne, nn int) (ex, nw []fl.RoundClient, err error) {
					if len(rc) != ne+nn {
						return nil, nil, fmt.Errorf("fedpeer: %d clients for %d existing and %d new", len(rc), ne, nn)
					}
					if nn == 0 {
						return rc, nil, nil
					}
					return rc[:ne], rc[ne:], nil
				}})
			// The rounds stop on a signal through the checkpoint (saved
			// first), not through the method's own cancellation.
			return rm.Run(context.WithoutCancel(ctx), ds, seed, obs)
		}})
}

// ClientOptions are one client process's.
type ClientOptions struct {
	// ID is the client's id: existing clients 0..Existing−1, new ones
	// from Existing on.
	ID, Existing int
	// Data is the client's own data (data.ImageSplit.Client), Classes the
	// data set's number of classes.
	Data    *data.ClientData
	Classes int
	// Seed is the run's seed (the server's).
	Seed uint64
	// StateFile keeps a stateful client's state across restarts ("":
	// in memory).
	StateFile string
}

// Client is the rpc.ClientConfig of a client process of method m.
func Client(m methods.Networked, o ClientOptions) (rpc.ClientConfig, error) {
	if o.ID < 0 || o.Existing < 1 || o.Data == nil {
		return rpc.ClientConfig{}, fmt.Errorf("fedpeer: client %d of %d existing clients, data %v", o.ID, o.Existing,
			o.Data != nil)
	}
	kind, dim, err := Kind(m, o.Classes)
	if err != nil {
		return rpc.ClientConfig{}, err
	}
	group, index := methods.GroupExisting, o.ID
	if o.ID >= o.Existing {
		group, index = methods.GroupNew, o.ID-o.Existing
	}
	rc, err := m.Client(o.Data, o.Classes, o.Seed, group, index)
	if err != nil {
		return rpc.ClientConfig{}, err
	}
	return rpc.ClientConfig{ID: o.ID, ModelKind: kind, Dim: dim, DataSize: o.Data.M(), DataHash: rpc.DataHash(o.Data),
		StateFile: o.StateFile, NewRound: func() (fl.RoundClient, error) { return rc, nil },
		VariableDim: m.Traits().VariableDim}, nil
}

// Networked is the one method of ms (methods.New's), which must run
// across processes.
func Networked(ms []harness.Method) (methods.Networked, error) {
	if len(ms) != 1 {
		return nil, fmt.Errorf("fedpeer: %d methods for one server", len(ms))
	}
	nm, ok := ms[0].(methods.Networked)
	if !ok {
		return nil, fmt.Errorf("fedpeer: %s cannot run across processes", ms[0].Name())
	}
	return nm, nil
}

// ClientOf is the rpc.ClientConfig of client process id of method m on the
// split ds (existing clients first, then new ones), which keeps only its
// own client's data. An id out of range is an *option.FieldError of "ID".
func ClientOf(m methods.Networked, ds *data.Dataset, id int, seed uint64, stateFile string) (rpc.ClientConfig,
	error) {
	n, nn := len(ds.Existing), len(ds.New)
	if m.Traits().NoNewClients {
		nn = 0
	}
	if id < 0 || id >= n+nn {
		return rpc.ClientConfig{}, option.Format("", []string{"ID"}, "%s %d: want 0 ≤ I < %d (%d existing, then %d "+
			"new clients)", id, n+nn, n, nn)
	}
	own := &ds.Existing[min(id, n-1)]
	if id >= n {
		own = &ds.New[id-n]
	}
	return Client(m, ClientOptions{ID: id, Existing: n, Data: own, Classes: ds.Classes, Seed: seed,
		StateFile: stateFile})
}
