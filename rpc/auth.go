package rpc

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// TokenBytes is the length of a client's secret token.
const TokenBytes = 32

// NewToken returns a fresh random secret token.
func NewToken() []byte {
	t := make([]byte, TokenBytes)
	rand.Read(t) // never fails (crypto/rand, Go ≥ 1.24)
	return t
}

// EncodeToken is the text form of a token file: hex and a newline.
func EncodeToken(t []byte) []byte { return []byte(hex.EncodeToString(t) + "\n") }

// ParseToken reads the text form of a token.
func ParseToken(b []byte) ([]byte, error) {
	t, err := hex.DecodeString(string(bytes.TrimSpace(b)))
	if err != nil || len(t) != TokenBytes {
		return nil, fmt.Errorf("not a token (want %d hexadecimal digits)", 2*TokenBytes)
	}
	return t, nil
}

// ReadTokenFile reads one client's token file, refusing a file others can
// read.
func ReadTokenFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("token file %s has mode %04o: others can read it (chmod 600)", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ParseToken(b)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return t, nil
}

// TokenFileName is the name of client i's token in a tokens directory.
func TokenFileName(i int) string { return fmt.Sprintf("client-%d.token", i) }

// ReadTokenDir reads the tokens of clients 0..n-1 from dir; two clients
// sharing a token is an error (the server could not tell them apart).
func ReadTokenDir(dir string, n int) ([][]byte, error) {
	toks := make([][]byte, n)
	seen := map[string]int{}
	for i := range toks {
		t, err := ReadTokenFile(filepath.Join(dir, TokenFileName(i)))
		if err != nil {
			return nil, err
		}
		if j, dup := seen[string(t)]; dup {
			return nil, fmt.Errorf("clients %d and %d have the same token", j, i)
		}
		seen[string(t)] = i
		toks[i] = t
	}
	return toks, nil
}

// registerMAC is HMAC-SHA256(token, "pacpfl-register" || nonce || id).
// The token itself never crosses the wire, and a fresh nonce per session
// makes a recorded registration useless on another session.
func registerMAC(token, nonce []byte, id uint32) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("pacpfl-register"))
	m.Write(nonce)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(id))
	m.Write(b[:])
	return m.Sum(nil)
}

var errBadCredential = errors.New("authentication failed: wrong token for this client id")

// checkMAC verifies a registration in constant time.
func checkMAC(token, nonce []byte, id uint32, mac []byte) error {
	if !hmac.Equal(registerMAC(token, nonce, id), mac) {
		return errBadCredential
	}
	return nil
}
