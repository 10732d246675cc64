package rpc

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/pacpfl/pacpfl/fl"
)

// stateMagic starts a client's state file; the SHA-256 of the body and the
// gob-encoded body (stateBody) follow.
const stateMagic = "pacpfl client state 1\n"

// snapshot is a stateful client's state after round Round's update (−1:
// the state it starts from).
type snapshot struct {
	Round int
	State []float64
}

type stateBody struct {
	ID        int
	Kind      string // the model kind the client registers
	Cur, Prev *snapshot
}

// clientState keeps a stateful client's state at the last two updates it
// made, in memory and (with a path) in its file: the server may not have
// accepted the last one (it was late, or the server restarted from an
// earlier checkpoint), and then the client goes back to the one before.
type clientState struct {
	path      string
	id        int
	kind      string
	client    fl.StatefulClient
	cur, prev *snapshot
}

// newClientState takes the client's state as it starts, or restores the
// one saved in path by an earlier run of the same client.
func newClientState(path string, id int, kind string, c fl.StatefulClient) (*clientState, error) {
	cs := &clientState{path: path, id: id, kind: kind, client: c, cur: &snapshot{Round: -1, State: c.AppendState(nil)}}
	if path == "" {
		return cs, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cs, nil
	}
	if err != nil {
		return nil, err
	}
	body, err := decodeState(b, id, kind)
	if err != nil {
		return nil, fmt.Errorf("client state %s: %w", path, err)
	}
	if err := c.SetState(body.Cur.State); err != nil {
		return nil, fmt.Errorf("client state %s: %w", path, err)
	}
	cs.cur, cs.prev = body.Cur, body.Prev
	return cs, nil
}

func decodeState(b []byte, id int, kind string) (*stateBody, error) {
	if !bytes.HasPrefix(b, []byte(stateMagic)) || len(b) < len(stateMagic)+sha256.Size {
		return nil, errors.New("not a pacpfl client state file")
	}
	b = b[len(stateMagic):]
	if sum := sha256.Sum256(b[sha256.Size:]); !bytes.Equal(sum[:], b[:sha256.Size]) {
		return nil, errors.New("corrupted (checksum mismatch)")
	}
	var body stateBody
	if err := gob.NewDecoder(bytes.NewReader(b[sha256.Size:])).Decode(&body); err != nil {
		return nil, err
	}
	switch {
	case body.ID != id || body.Kind != kind:
		return nil, fmt.Errorf("written by client %d with model \"%s\", not client %d with %q", body.ID,
			Clean(body.Kind, 64), id, kind)
	case body.Cur == nil || body.Cur.Round < -1 || body.Prev != nil && body.Prev.Round >= body.Cur.Round:
		return nil, errors.New("its rounds are out of order")
	}
	for _, s := range []*snapshot{body.Cur, body.Prev} {
		if s == nil {
			continue
		}
		for _, v := range s.State {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errors.New("it holds a non-finite value")
			}
		}
	}
	return &body, nil
}

// at makes the client's state the one after round r's update, going back
// one update if need be; a state the client no longer has is an error.
func (cs *clientState) at(r int) error {
	switch {
	case cs.cur.Round == r:
		return nil
	case cs.prev != nil && cs.prev.Round == r:
		if err := cs.client.SetState(cs.prev.State); err != nil {
			return err
		}
		cs.cur, cs.prev = cs.prev, nil
		return cs.save()
	}
	have := fmt.Sprint(cs.cur.Round + 1)
	if cs.prev != nil {
		have = fmt.Sprintf("%d or %d", cs.prev.Round+1, cs.cur.Round+1)
	}
	hint := ""
	if cs.path != "" {
		hint = fmt.Sprintf(" (%s from another run? remove it to start afresh)", cs.path)
	}
	return fmt.Errorf("client state mismatch: this client's state is after round %s, the server's after round %d "+
		"(0: the start); it cannot take part in this run%s", have, r+1, hint)
}

// fitted records the state after round r's update and saves it before the
// update is sent, so that the server never accepts an update whose state
// the client could lose.
func (cs *clientState) fitted(r int) error {
	cur, prev := cs.cur, cs.prev
	cs.prev, cs.cur = cs.cur, &snapshot{Round: r, State: cs.client.AppendState(nil)}
	if err := cs.save(); err != nil {
		cs.cur, cs.prev = cur, prev
		return err
	}
	return nil
}

// failed puts back the state before an update that failed half-way.
func (cs *clientState) failed() error { return cs.client.SetState(cs.cur.State) }

func (cs *clientState) save() error {
	if cs.path == "" {
		return nil
	}
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(stateBody{ID: cs.id, Kind: cs.kind, Cur: cs.cur, Prev: cs.prev}); err != nil {
		return err
	}
	sum := sha256.Sum256(body.Bytes())
	out := append(append([]byte(stateMagic), sum[:]...), body.Bytes()...)
	if err := writeSecret(cs.path, out); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(cs.path))
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	return err
}
