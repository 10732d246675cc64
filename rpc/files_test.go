package rpc

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/fl"
	"github.com/pacpfl/pacpfl/option"
)

// isConfigError reports whether err is a ConfigError whose text holds want.
func isConfigError(err error, want string) bool {
	var ce *ConfigError
	return errors.As(err, &ce) && strings.Contains(err.Error(), want)
}

// isFieldError reports whether err is a ConfigError of an
// *option.FieldError naming fields.
func isFieldError(err error, fields ...string) bool {
	var ce *ConfigError
	var fe *option.FieldError
	return errors.As(err, &ce) && errors.As(err, &fe) && reflect.DeepEqual(fe.Fields, fields)
}

// A checkpoint reads back what was saved, with mode 0600; a checkpoint of
// another configuration, a corrupted, a foreign and a missing one are
// refused.
func TestCheckpointSaveLoad(t *testing.T) {
	dir := t.TempDir()
	ck := Checkpoint{Dir: dir, ConfigHash: "abc"}
	st := &fl.State{Round: 3, K: 2, Dim: 2, Particles: []float64{1, 2, 3, 4}, MeanLML: []float64{-1, -2, -3},
		Optimizer: "sgd", Noise: []byte{7}}
	if err := ck.Save(st); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(ck.Path())
	if err != nil || fi.Mode().Perm() != 0o600 || filepath.Base(ck.Path()) != CheckpointFile {
		t.Fatalf("checkpoint %s: %v, %v", ck.Path(), fi, err)
	}
	got, err := ck.Load()
	if err != nil || !reflect.DeepEqual(got, st) {
		t.Fatalf("Load: %+v, %v; want %+v", got, err, st)
	}
	if _, err := (Checkpoint{Dir: dir, ConfigHash: "abd"}).Load(); !isConfigError(err, "another configuration") {
		t.Errorf("other configuration: %v", err)
	}
	b, _ := os.ReadFile(ck.Path())
	b[len(b)-3] ^= 1
	os.WriteFile(ck.Path(), b, 0o600)
	if _, err := ck.Load(); !isConfigError(err, "corrupted") {
		t.Errorf("flipped byte: %v", err)
	}
	os.WriteFile(ck.Path(), []byte("hello"), 0o600)
	if _, err := ck.Load(); !isConfigError(err, "not a pacpfl checkpoint") {
		t.Errorf("foreign file: %v", err)
	}
	os.Remove(ck.Path())
	if _, err := ck.Load(); !isConfigError(err, "no checkpoint") {
		t.Errorf("missing: %v", err)
	}
}

// WriteCerts writes every file with mode 0600 into a directory it makes
// with mode 0700; the tokens differ and the certificates make working
// credentials; bad settings are refused before anything is written.
func TestWriteCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	hosts, err := WriteCerts(dir, " 127.0.0.1, localhost,", 1, 2)
	if err != nil || !reflect.DeepEqual(hosts, []string{"127.0.0.1", "localhost"}) {
		t.Fatalf("WriteCerts: %v, %v", hosts, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("directory: %v, %v", fi, err)
	}
	names := []string{"ca.pem", "server.pem", "server.key", "client-0.token", "client-0.pem", "client-0.key",
		"client-1.token", "client-1.pem", "client-1.key"}
	files := map[string][]byte{}
	for _, n := range names {
		p := filepath.Join(dir, n)
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v", n, fi, err)
		}
		files[n], _ = os.ReadFile(p)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(names) {
		t.Errorf("%d files in %s, want %d (a temporary file left?)", len(entries), dir, len(names))
	}
	toks, err := ReadTokenDir(dir, 2)
	if err != nil || string(toks[0]) == string(toks[1]) {
		t.Errorf("tokens: %v", err)
	}
	c := &Certs{CA: files["ca.pem"], ServerCert: files["server.pem"], ServerKey: files["server.key"]}
	if _, _, err := TLSFromCerts(c, "localhost"); err != nil {
		t.Errorf("credentials from the files: %v", err)
	}
	if _, err := ServerTLS(filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key"),
		filepath.Join(dir, "ca.pem")); err != nil {
		t.Errorf("ServerTLS: %v", err)
	}
	// Rewriting replaces the files, still 0600.
	os.Chmod(filepath.Join(dir, "ca.pem"), 0o644)
	if _, err := WriteCerts(dir, "localhost", 1, 1); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "ca.pem")); fi.Mode().Perm() != 0o600 {
		t.Errorf("a replaced file has mode %v", fi.Mode().Perm())
	}
	file := filepath.Join(dir, "ca.pem")
	for _, c := range []struct {
		dir, hosts string
		days, n    int
		want       string // the parameter at fault
	}{
		{"", "localhost", 1, 1, "dir"},
		{dir, "localhost", 1, 0, "clients"},
		{dir, "localhost", 0, 1, "days"},
		{dir, " , ", 1, 1, "hosts"},
		{file, "localhost", 1, 1, "dir"},
	} {
		if _, err := WriteCerts(c.dir, c.hosts, c.days, c.n); !isFieldError(err, c.want) {
			t.Errorf("WriteCerts(%q, %q, %d, %d): %v; want a ConfigError naming %q", c.dir, c.hosts, c.days, c.n, err,
				c.want)
		}
	}
	if err := writeSecret(dir, []byte("x")); !isConfigError(err, "is a directory") {
		t.Errorf("secret written over a directory: %v", err)
	}
}

// The server's settings are checked before any work, and the credentials
// of server and client refuse what nobody could authenticate with.
func TestServerSettingsAndAuth(t *testing.T) {
	ok := ServerSettings{Listen: "127.0.0.1:0", MaxPayload: 1, Limits: Limits{MaxUnauth: 1, MaxUnauthPerHost: 1},
		CheckpointEvery: 1}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	for _, c := range []struct {
		edit func(*ServerSettings)
		want []string // the fields at fault
	}{
		{func(s *ServerSettings) { s.Listen = "" }, []string{"Listen"}},
		{func(s *ServerSettings) { s.Wait = -time.Second }, []string{"Wait", "RoundTimeout", "MaxPayload"}},
		{func(s *ServerSettings) { s.Limits.MaxUnauthPerHost = 0 },
			[]string{"Limits.MaxUnauth", "Limits.MaxUnauthPerHost"}},
		{func(s *ServerSettings) { s.Resume = true }, []string{"CheckpointEvery", "Resume", "Checkpoint"}},
		{func(s *ServerSettings) { s.MaxNormFactor = 2 }, []string{"Quorum", "MaxNormFactor"}},
		{func(s *ServerSettings) { s.Checkpoint = file }, []string{"Checkpoint"}},
		{func(s *ServerSettings) { s.Checkpoint, s.Resume = file+"x", true }, []string{"Checkpoint"}},
	} {
		s := ok
		c.edit(&s)
		if err := s.Check(); !isFieldError(err, c.want...) {
			t.Errorf("%+v: %v; want a ConfigError naming %q", s, err, c.want)
		}
	}
	if _, err := (&ServerSettings{}).Open("hash"); !isFieldError(err, "Listen") {
		t.Errorf("Open of unchecked settings: %v", err)
	}
	s := ok
	s.Checkpoint = filepath.Join(t.TempDir(), "new")
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.Checkpoint); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("checkpoint directory: %v, %v", fi, err)
	}
	if _, err := (ServerAuth{Insecure: true, ClientCA: file}).Credentials("127.0.0.1:1"); !isFieldError(err,
		"Insecure", "CertFile", "KeyFile", "ClientCA") {
		t.Errorf("insecure with a CA: %v", err)
	}
	if _, err := (ServerAuth{Insecure: true}).Credentials("10.1.2.3:1"); !isFieldError(err, "Insecure") {
		t.Errorf("insecure off loopback: %v", err)
	}
	if _, err := (ServerAuth{CertFile: file}).Credentials("127.0.0.1:1"); !isFieldError(err, "CertFile", "KeyFile",
		"Insecure") {
		t.Errorf("TLS without a key: %v", err)
	}
	if toks, err := (ServerAuth{Insecure: true}).Tokens(3); toks != nil || err != nil {
		t.Errorf("no token directory: %v, %v", toks, err)
	}
	if _, err := (ServerAuth{TokenDir: t.TempDir()}).Tokens(1); !isFieldError(err, "TokenDir") {
		t.Errorf("empty token directory: %v", err)
	}
	if _, _, err := (ClientAuth{Insecure: true, KeyFile: file}).Credentials("127.0.0.1:1"); !isFieldError(err,
		"Insecure", "CertFile", "KeyFile") {
		t.Errorf("insecure client with a key: %v", err)
	}
	for auth, want := range map[ClientAuth][]string{
		{CertFile: file}:               {"CertFile", "KeyFile"},
		{}:                             {"CAFile", "Insecure"},
		{CAFile: file}:                 {"CAFile"}, // no certificate in it
		{CAFile: file + "x"}:           {"CAFile"},
		{Insecure: true, CAFile: file}: nil,
	} {
		_, _, err := auth.Credentials("127.0.0.1:1")
		if want == nil && err != nil || want != nil && !isFieldError(err, want...) {
			t.Errorf("%+v: %v; want a ConfigError naming %q", auth, err, want)
		}
	}
	if _, tok, err := (ClientAuth{Insecure: true}).Credentials("127.0.0.1:1"); tok != nil || err != nil {
		t.Errorf("insecure client: %v, %v", tok, err)
	}
	if _, _, err := (ClientAuth{Insecure: true, TokenFile: file}).Credentials("127.0.0.1:1"); !isFieldError(err,
		"TokenFile") {
		t.Errorf("empty token file: %v", err)
	}
	err := Participate(t.Context(), ParticipateOptions{Server: "10.0.0.1:1", Auth: ClientAuth{Insecure: true}})
	if !isFieldError(err, "Insecure") {
		t.Errorf("Participate off loopback: %v", err)
	}
}
