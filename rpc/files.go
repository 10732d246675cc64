package rpc

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/option"
	"github.com/pacpfl/pacpfl/outfile"
)

// ConfigError is a setting the caller gave that cannot work (a missing or
// unreadable file, options that exclude each other, an address that does
// not parse): the caller's input, not a failure of the run.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// configErrorf is a ConfigError with a formatted message.
func configErrorf(format string, a ...any) error { return &ConfigError{fmt.Errorf(format, a...)} }

// fieldErrorf is a ConfigError of fields of the options value the caller
// gave: an *option.FieldError (option.Format) whose message a front end
// renders with its own names for the fields, such as its flags.
func fieldErrorf(fields []string, format string, a ...any) error {
	return &ConfigError{option.Format("", fields, format, a...)}
}

// PrivateDir makes dir with mode 0700 when it is missing and create is
// set, and refuses a path that is not a directory: where secrets (keys,
// tokens, a checkpoint) go. Its errors start with dir.
func PrivateDir(dir string, create bool) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
		if err := os.Mkdir(dir, 0o700); err != nil {
			return configErrorf("%s: %v", dir, outfile.Cause(err))
		}
	case err != nil:
		return configErrorf("%s: %v", dir, outfile.Cause(err))
	case !st.IsDir():
		return configErrorf("%s is not a directory", dir)
	}
	return nil
}

// writeSecret writes data to path with outfile.WriteSecret (atomically,
// mode 0600, regular files only); a path it refuses is a ConfigError.
func writeSecret(path string, data []byte) error {
	err := outfile.WriteSecret("", path, data)
	var bp *outfile.BadPathError
	if errors.As(err, &bp) {
		return &ConfigError{err}
	}
	return err
}

// WriteFiles writes c into dir, which must exist (PrivateDir): ca.pem,
// server.pem and server.key, and for every client I its certificate and
// key, client-I.pem and client-I.key, and a fresh token, client-I.token
// (TokenFileName; NewToken). Every file is written atomically with mode
// 0600: the keys and tokens are secrets, and one mode for all leaves none
// exposed by mistake.
func (c *Certs) WriteFiles(dir string) error {
	write := func(name string, data []byte) error { return writeSecret(filepath.Join(dir, name), data) }
	for _, f := range []struct {
		name string
		data []byte
	}{{"ca.pem", c.CA}, {"server.pem", c.ServerCert}, {"server.key", c.ServerKey}} {
		if err := write(f.name, f.data); err != nil {
			return err
		}
	}
	for i := range c.ClientCert {
		if err := write(TokenFileName(i), EncodeToken(NewToken())); err != nil {
			return err
		}
		if err := write(fmt.Sprintf("client-%d.pem", i), c.ClientCert[i]); err != nil {
			return err
		}
		if err := write(fmt.Sprintf("client-%d.key", i), c.ClientKey[i]); err != nil {
			return err
		}
	}
	return nil
}

// CheckpointFile is the name of a server's checkpoint in its directory.
const CheckpointFile = "server.ckpt"

// checkpointMagic starts a checkpoint file; the SHA-256 of the body and the
// gob-encoded body (checkpointBody) follow.
const checkpointMagic = "pacpfl checkpoint 1\n"

type checkpointBody struct {
	ConfigHash string
	State      fl.State
	// Round is a peer method's server state (FederateRounds); State is
	// then empty.
	Round *fl.RoundState
}

// Checkpoint is a server's checkpoint, Dir/server.ckpt: the state of the
// training loop (fl.State, with the DP noise's state, as secret as the
// noise) and the hash of the configuration that wrote it, so that a run
// is resumed only with the settings that decide its result. Pass Save as
// FederateOptions.Save and Load's state as FederateOptions.Resume.
type Checkpoint struct {
	Dir        string
	ConfigHash string
}

// Path is the checkpoint file's path.
func (c Checkpoint) Path() string { return filepath.Join(c.Dir, CheckpointFile) }

// Save writes st atomically with mode 0600, and syncs the directory so that
// the new file survives a crash.
func (c Checkpoint) Save(st *fl.State) error {
	return c.save(checkpointBody{ConfigHash: c.ConfigHash, State: *st})
}

// SaveRound is Save for a peer method's server state.
func (c Checkpoint) SaveRound(st *fl.RoundState) error {
	return c.save(checkpointBody{ConfigHash: c.ConfigHash, Round: st})
}

func (c Checkpoint) save(cb checkpointBody) error {
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(cb); err != nil {
		return err
	}
	sum := sha256.Sum256(body.Bytes())
	out := append([]byte(checkpointMagic), sum[:]...)
	if err := writeSecret(c.Path(), append(out, body.Bytes()...)); err != nil {
		return err
	}
	d, err := os.Open(c.Dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	return err
}

// Load reads the checkpoint, refusing (with a ConfigError naming the file)
// a missing, foreign or corrupted one, one of another configuration and a
// peer method's.
func (c Checkpoint) Load() (*fl.State, error) {
	cb, err := c.load()
	if err != nil {
		return nil, err
	}
	if cb.Round != nil {
		return nil, configErrorf("checkpoint %s is a peer method's, not PAC-PFL's", c.Path())
	}
	return &cb.State, nil
}

// LoadRound is Load for a peer method's server state.
func (c Checkpoint) LoadRound() (*fl.RoundState, error) {
	cb, err := c.load()
	if err != nil {
		return nil, err
	}
	if cb.Round == nil {
		return nil, configErrorf("checkpoint %s is PAC-PFL's, not a peer method's", c.Path())
	}
	return cb.Round, nil
}

func (c Checkpoint) load() (*checkpointBody, error) {
	path := c.Path()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, configErrorf("no checkpoint %s", path)
	}
	if err != nil {
		return nil, &ConfigError{err}
	}
	if !bytes.HasPrefix(b, []byte(checkpointMagic)) || len(b) < len(checkpointMagic)+sha256.Size {
		return nil, configErrorf("%s is not a pacpfl checkpoint", path)
	}
	b = b[len(checkpointMagic):]
	body := b[sha256.Size:]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], b[:sha256.Size]) {
		return nil, configErrorf("checkpoint %s is corrupted (checksum mismatch)", path)
	}
	var cb checkpointBody
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&cb); err != nil {
		return nil, configErrorf("checkpoint %s: %v", path, err)
	}
	if cb.ConfigHash != c.ConfigHash {
		return nil, configErrorf("checkpoint %s is from another configuration (hash %.12s…, this run %.12s…): "+
			"use the flags of the run that wrote it", path, cb.ConfigHash, c.ConfigHash)
	}
	return &cb, nil
}

// WriteCerts writes the files of a test federation into dir, made with
// mode 0700 if missing (PrivateDir): a fresh CA, a certificate for the
// server at hosts (comma-separated IP addresses and DNS names), and the
// certificates, keys and tokens of clients clients (Certs.WriteFiles), all
// valid for days days. It returns the host names. Bad settings are
// ConfigErrors whose FieldErrors name the parameters ("dir", "hosts",
// "days", "clients").
func WriteCerts(dir, hosts string, days, clients int) ([]string, error) {
	switch {
	case dir == "":
		return nil, fieldErrorf([]string{"dir"}, "%s DIR is required")
	case clients < 1 || clients > 100_000:
		return nil, fieldErrorf([]string{"clients"}, "%s %d: want 1 to 100000", clients)
	case days < 1:
		return nil, fieldErrorf([]string{"days"}, "%s %d must be ≥ 1", days)
	}
	if err := PrivateDir(dir, true); err != nil {
		return nil, fieldErrorf([]string{"dir"}, "%s %v", err)
	}
	var hs []string
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hs = append(hs, h)
		}
	}
	c, err := GenerateCerts(hs, time.Duration(days)*24*time.Hour, clients)
	if err != nil {
		return nil, fieldErrorf([]string{"hosts"}, "%s %q: %v", hosts, err)
	}
	return hs, c.WriteFiles(dir)
}
