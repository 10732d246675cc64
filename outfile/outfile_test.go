//go:build linux

package outfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noTemps fails if a temporary file of the output writer is left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".*.tmp*"))
	require.NoError(t, err)
	assert.Empty(t, m, "temporary files left behind")
}

// A regular file is replaced whole; a replaced file keeps its mode, a new one
// gets 0666 minus the umask.
func TestOutputRegularFileModes(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)

	fresh := filepath.Join(dir, "new.json")
	require.NoError(t, Write(io.Discard, "--json", fresh, []byte("{}\n")))
	st, err := os.Stat(fresh)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o640), st.Mode().Perm(), "new file: 0666 &^ umask 027")

	kept := filepath.Join(dir, "kept.json")
	require.NoError(t, os.WriteFile(kept, []byte("old contents, longer than the new ones\n"), 0o600))
	require.NoError(t, os.Chmod(kept, 0o604))
	require.NoError(t, Write(io.Discard, "--json", kept, []byte("new\n")))
	b, _ := os.ReadFile(kept)
	assert.Equal(t, "new\n", string(b))
	st, _ = os.Stat(kept)
	assert.Equal(t, fs.FileMode(0o604), st.Mode().Perm(), "a replaced file keeps its mode")
	noTemps(t, dir)
}

// A symlink is followed: its target gets the data, the link stays a link,
// also when the target does not exist yet or lies in another directory.
func TestOutputFollowsSymlinks(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	target := filepath.Join(other, "target.json")
	require.NoError(t, os.WriteFile(target, []byte("stale\n"), 0o644))
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(target, link))
	chain := filepath.Join(dir, "chain.json")
	require.NoError(t, os.Symlink("link.json", chain)) // relative, to a link

	require.NoError(t, Write(io.Discard, "--json", chain, []byte("fresh\n")))
	for _, l := range []string{link, chain} {
		st, err := os.Lstat(l)
		require.NoError(t, err)
		assert.NotZero(t, st.Mode()&fs.ModeSymlink, "%s is still a link", l)
	}
	b, _ := os.ReadFile(target)
	assert.Equal(t, "fresh\n", string(b))

	dangling := filepath.Join(dir, "dangling.json")
	newTarget := filepath.Join(other, "created.json")
	require.NoError(t, os.Symlink(newTarget, dangling))
	require.NoError(t, Write(io.Discard, "--json", dangling, []byte("made\n")))
	b, err := os.ReadFile(newTarget)
	require.NoError(t, err)
	assert.Equal(t, "made\n", string(b))
	st, _ := os.Lstat(dangling)
	assert.NotZero(t, st.Mode()&fs.ModeSymlink)
	noTemps(t, dir)
	noTemps(t, other)

	loop := filepath.Join(dir, "loop")
	require.NoError(t, os.Symlink(loop, loop))
	err = Check("--json", loop)
	var ue *BadPathError
	assert.True(t, errors.As(err, &ue), "a symlink loop is a bad path: %v", err)
}

// Devices, pipes and /proc/self/fd links are written in place: never
// replaced, never truncated (a file a shell redirected to keeps what was
// written before), and a write error is reported.
func TestOutputWritesThroughDevicesAndPipes(t *testing.T) {
	require.NoError(t, Write(io.Discard, "--json", "/dev/null", []byte("x\n")))
	st, err := os.Lstat("/dev/null")
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&fs.ModeCharDevice, "/dev/null is still a device")

	if _, err := os.Stat("/dev/full"); err == nil {
		err := Write(io.Discard, "--json", "/dev/full", []byte("x\n"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no space left")
		assert.Contains(t, err.Error(), "/dev/full")
		st, _ := os.Lstat("/dev/full")
		assert.NotZero(t, st.Mode()&fs.ModeCharDevice)
	}

	// A pipe through /proc/self/fd/N and through /dev/fd/N (a link among
	// the directories), as --json /dev/stdout is when stdout is piped.
	for _, prefix := range []string{"/proc/self/fd/", "/dev/fd/"} {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		path := fmt.Sprintf("%s%d", prefix, w.Fd())
		require.NoError(t, Check("--json", path))
		require.NoError(t, Write(io.Discard, "--json", path, []byte("through the pipe\n")))
		w.Close()
		b, _ := io.ReadAll(r)
		r.Close()
		assert.Equal(t, "through the pipe\n", string(b), prefix)
	}

	// A named pipe.
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	require.NoError(t, Write(io.Discard, "--json", fifo, []byte("fifo\n")))
	assert.Equal(t, "fifo\n", <-got)
	st, _ = os.Lstat(fifo)
	assert.NotZero(t, st.Mode()&fs.ModeNamedPipe, "the FIFO is still a FIFO")

	// The file behind a redirected stdout: appended to, same inode.
	redirected := filepath.Join(t.TempDir(), "out.txt")
	f, err := os.OpenFile(redirected, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString("text report\n")
	require.NoError(t, err)
	before, _ := os.Stat(redirected)
	require.NoError(t, Write(io.Discard, "--json", fmt.Sprintf("/proc/self/fd/%d", f.Fd()), []byte("{}\n")))
	b, _ := os.ReadFile(redirected)
	assert.Equal(t, "text report\n{}\n", string(b))
	after, _ := os.Stat(redirected)
	assert.True(t, os.SameFile(before, after), "the redirected file was replaced")
}

// "-" is stdout; bad destinations are *BadPathError naming the user's
// path, not a temporary file.
func TestOutputStdoutAndBadPaths(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, "--json", "-", []byte("{}\n")))
	assert.Equal(t, "{}\n", buf.String())

	dir := t.TempDir()
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing", "x.json"), "does not exist"},
		{dir, "is a directory"},
		{"", "empty file name"},
	} {
		err := Check("--json", c.path)
		var ue *BadPathError
		require.True(t, errors.As(err, &ue), "%q: %v", c.path, err)
		assert.Contains(t, err.Error(), c.want)
		assert.NotContains(t, err.Error(), ".tmp")
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o500))
		err := Check("--json", filepath.Join(ro, "x.json"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "permission denied")
		assert.NotContains(t, err.Error(), ".tmp")
	}
}

// A secret is written whole with mode 0600 whatever the umask, also over a
// file of another mode; never to a device, a pipe or standard output.
func TestWriteSecretModes(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	p := filepath.Join(dir, "key")
	require.NoError(t, os.WriteFile(p, []byte("old, longer contents\n"), 0o644))
	require.NoError(t, WriteSecret("", p, []byte("secret\n")))
	b, _ := os.ReadFile(p)
	assert.Equal(t, "secret\n", string(b))
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), st.Mode().Perm())
	noTemps(t, dir)
	for _, bad := range []string{"-", "/dev/null"} {
		var bp *BadPathError
		err := WriteSecret("--out", bad, []byte("x"))
		assert.True(t, errors.As(err, &bp), "%s: %v", bad, err)
	}
}

// A write stopped by context.Canceled is an *InterruptedError that says
// whether the destination was left as it was, and matches the context's
// error.
func TestWriteStreamInterrupted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.csv")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	stop := func(w io.Writer) error {
		_, _ = w.Write([]byte("partial"))
		return fmt.Errorf("generating: %w", context.Canceled)
	}
	var buf bytes.Buffer
	for _, c := range []struct {
		path     string
		replaced bool
	}{{path, true}, {filepath.Join(dir, "new.csv"), true}, {"-", false}} {
		err := WriteStream(&buf, "--out", c.path, stop)
		var ie *InterruptedError
		require.ErrorAs(t, err, &ie, c.path)
		assert.Equal(t, InterruptedError{Path: c.path, Replaced: c.replaced}, *ie)
		assert.ErrorIs(t, err, context.Canceled)
	}
	old, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(old), "left as it was")
	assert.NoFileExists(t, filepath.Join(dir, "new.csv"))
	noTemps(t, dir)
}
