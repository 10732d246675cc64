package fedtrain

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/data"
	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/rpc"
	"github.com/pacpfl/pacpfl/train"
)

func polynomial(t *testing.T) *data.Dataset {
	t.Helper()
	c := data.DefaultPolynomial()
	c.Existing, c.New, c.Extra, c.Seed = 3, 0, 0, 2
	ds, err := data.Polynomial(c)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// The coordinator of a GP job expects its clients' data and model: one
// data hash per existing client, the GP model of the job's inference and
// β, and the job's loop configuration.
func TestServerRunGP(t *testing.T) {
	ds := polynomial(t)
	o := fl.DefaultPACPFLOptions()
	inf := fl.GPInference{Mode: fl.InferenceExact}
	job := &train.Job{GP: &train.GPJob{Data: ds, Options: o, Inference: inf}}
	var out *train.Outcome
	r, err := serverRun(context.Background(), job, &out)
	if err != nil {
		t.Fatal(err)
	}
	sc := r.Server
	if sc.Clients != 3 || len(sc.DataHashes) != 3 || sc.ModelKind != rpc.GPKind(inf) ||
		sc.Dim != fl.NewGPModel(ds.D).Dim() || sc.Beta != o.Beta.String() || r.Train != job.Config() {
		t.Fatalf("server %+v", r)
	}
	for i := range ds.Existing {
		if string(sc.DataHashes[i]) != string(rpc.DataHash(&ds.Existing[i])) {
			t.Fatalf("client %d: data hash differs", i)
		}
	}
}

// A server refuses a job whose loop the settings make invalid (an unknown
// robust aggregation) with a ConfigError, before it listens.
func TestServeRefusesBadSettings(t *testing.T) {
	ds := polynomial(t)
	job := &train.Job{GP: &train.GPJob{Data: ds, Options: fl.DefaultPACPFLOptions(),
		Inference: fl.GPInference{Mode: fl.InferenceExact}}}
	st := rpc.ServerSettings{Listen: "127.0.0.1:0", Auth: rpc.ServerAuth{Insecure: true}, MaxPayload: 1 << 20,
		Limits: rpc.Limits{MaxUnauth: 1, MaxUnauthPerHost: 1}, CheckpointEvery: 1, Wait: time.Second,
		Robust: fl.Robust{Rule: "foo"}}
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	setup, err := st.Open("hash")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = Serve(ctx, setup, job, nil)
	var ce *rpc.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `unknown robust aggregation "foo"`) {
		t.Fatalf("error %v, want a ConfigError about the aggregation", err)
	}
}
