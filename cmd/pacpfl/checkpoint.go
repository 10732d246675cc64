package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pacpfl/pacpfl/fl"
)

// The server's checkpoint: DIR/server.ckpt, written atomically (temporary
// file, fsync, rename) with mode 0600 (it holds the DP noise state, as
// secret as the noise). Layout: a magic line, the SHA-256 of the body, the
// gob-encoded body (the configuration hash and fl.State).

const (
	checkpointName  = "server.ckpt"
	checkpointMagic = "pacpfl checkpoint 1\n"
)

type checkpointBody struct {
	ConfigHash string
	State      fl.State
}

// serverOnlyFlags do not change the training result: they may differ
// between a run and its resumption. Every other flag is in the hash: the
// quorum, the round deadline and the update filters decide which updates
// enter a round.
var serverOnlyFlags = map[string]bool{
	"listen": true, "tls-cert": true, "tls-key": true, "tokens": true, "client-ca": true, "insecure": true,
	"wait": true, "max-payload": true, "quiet": true, "json": true, "checkpoint": true, "checkpoint-every": true,
	"resume": true, "save": true, "max-unregistered": true, "max-unregistered-per-host": true,
}

// configHash is the SHA-256 of every training flag's value (given or
// default), in name order.
func configHash(fs *flag.FlagSet) string {
	h := sha256.New()
	fs.VisitAll(func(f *flag.Flag) {
		if !serverOnlyFlags[f.Name] {
			fmt.Fprintf(h, "%s=%s\n", f.Name, f.Value.String())
		}
	})
	return hex.EncodeToString(h.Sum(nil))
}

func saveCheckpoint(dir, hash string, st *fl.State) error {
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(checkpointBody{ConfigHash: hash, State: *st}); err != nil {
		return err
	}
	sum := sha256.Sum256(body.Bytes())
	out := append([]byte(checkpointMagic), sum[:]...)
	out = append(out, body.Bytes()...)
	if err := writeSecret("--checkpoint", filepath.Join(dir, checkpointName), out); err != nil {
		return err
	}
	// The rename is durable once the directory is synced.
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	return err
}

// loadCheckpoint reads DIR's checkpoint and refuses a corrupted one or one
// of another configuration.
func loadCheckpoint(dir, hash string) (*fl.State, error) {
	path := filepath.Join(dir, checkpointName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("--resume: no checkpoint %s", path)
	}
	if err != nil {
		return nil, usagef("--resume: %v", err)
	}
	if !bytes.HasPrefix(b, []byte(checkpointMagic)) || len(b) < len(checkpointMagic)+sha256.Size {
		return nil, usagef("--resume: %s is not a pacpfl checkpoint", path)
	}
	b = b[len(checkpointMagic):]
	body := b[sha256.Size:]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], b[:sha256.Size]) {
		return nil, usagef("--resume: checkpoint %s is corrupted (checksum mismatch)", path)
	}
	var cb checkpointBody
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&cb); err != nil {
		return nil, usagef("--resume: checkpoint %s: %v", path, err)
	}
	if cb.ConfigHash != hash {
		return nil, usagef("--resume: checkpoint %s is from another configuration (hash %.12s…, this run %.12s…): use the flags of the run that wrote it", path, cb.ConfigHash, hash)
	}
	return &cb.State, nil
}
