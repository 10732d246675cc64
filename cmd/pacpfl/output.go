package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pacpfl/pacpfl/report"
)

// The one writer of every file the CLI writes (--json FILE and friends).
//
//   - "-" is standard output.
//   - A regular file, or a path that does not exist yet, is replaced
//     atomically: the data go to a temporary file beside it, which is synced
//     and renamed over it, so a reader sees the old file or the whole new one,
//     and an interrupted run leaves neither a half-written file nor the
//     temporary one. A symbolic link is followed to its target, which is
//     replaced; the link stays a link. A new file gets the mode 0666 minus the
//     umask (as the shell's > would); a replaced file keeps its mode.
//   - Anything else that can be written — a character device (/dev/null,
//     /dev/full, /dev/tty), a pipe, a socket — and every path reached
//     through /proc (/dev/stdout links to /proc/self/fd/1, which may name a
//     pipe or the file a shell redirected to) is written in place,
//     appending, never replaced.
//
// checkOutput runs before any work, so a run of hours does not end in "no
// such directory"; writeOutput resolves the path again when the data are
// ready.

// outputKind is how a path is written.
type outputKind int

const (
	outStdout  outputKind = iota // "-"
	outReplace                   // regular file or new path: temporary file + rename
	outThrough                   // device, pipe, socket, /dev or /proc: written in place
)

// outputDest is a resolved destination.
type outputDest struct {
	kind   outputKind
	path   string      // as given
	target string      // outReplace: the file to replace, symlinks followed
	mode   fs.FileMode // outReplace: the mode of an existing target
	exists bool        // outReplace: the target exists
}

// maxSymlinks bounds the links followed, as the kernel's ELOOP limit does.
const maxSymlinks = 40

// resolveOutput classifies path. Its errors are usage errors naming flag and
// path, never an internal temporary name.
func resolveOutput(flag, path string) (*outputDest, error) {
	if path == "-" {
		return &outputDest{kind: outStdout, path: path}, nil
	}
	if path == "" {
		return nil, usagef("%s: empty file name (use - for standard output)", flag)
	}
	d := &outputDest{path: path, target: path}
	system := false
	for i := 0; ; i++ {
		if i == maxSymlinks {
			return nil, usagef("%s %s: too many levels of symbolic links", flag, path)
		}
		// Links among the directories first (/dev/fd is /proc/self/fd).
		if dir, err := filepath.EvalSymlinks(filepath.Dir(d.target)); err == nil {
			d.target = filepath.Join(dir, filepath.Base(d.target))
		}
		if inProc(d.target) {
			// /proc/self/fd/N is a "magic" link: what it names (a pipe,
			// a deleted file, the file a shell redirected to) is opened
			// through it, never resolved to the text it reads as.
			system = true
			break
		}
		fi, err := os.Lstat(d.target)
		if errors.Is(err, fs.ErrNotExist) {
			break // a new file at d.target
		}
		if err != nil {
			return nil, usagef("%s %s: %v", flag, path, pathErr(err))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		link, err := os.Readlink(d.target)
		if err != nil {
			return nil, usagef("%s %s: %v", flag, path, pathErr(err))
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(d.target), link)
		}
		d.target = link
	}
	fi, err := os.Stat(d.target)
	switch {
	case err == nil && fi.IsDir():
		return nil, usagef("%s %s is a directory", flag, path)
	case err == nil && (system || !fi.Mode().IsRegular()):
		d.kind = outThrough
		return d, nil
	case err == nil:
		d.kind, d.exists, d.mode = outReplace, true, fi.Mode().Perm()
		return d, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s %s: %v", flag, path, pathErr(err))
	}
	if system {
		return nil, usagef("%s %s: no such file (files under /proc are not created)", flag, path)
	}
	dir := filepath.Dir(d.target)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s %s: directory %s does not exist", flag, path, dir)
	case err != nil:
		return nil, usagef("%s %s: %v", flag, path, pathErr(err))
	case !st.IsDir():
		return nil, usagef("%s %s: %s is not a directory", flag, path, dir)
	}
	d.kind = outReplace
	return d, nil
}

// inProc reports whether path lies under /proc.
func inProc(path string) bool {
	abs, err := filepath.Abs(path)
	return err == nil && (abs == "/proc" || strings.HasPrefix(abs, "/proc/"))
}

// pathErr is the cause of a file-system error without the path it carries
// (the messages name the user's path, not a temporary one).
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// checkOutput verifies, before any work, that path can be written: it
// resolves it and, for a file to replace, creates and removes a temporary
// file beside it.
func checkOutput(flag, path string) error {
	d, err := resolveOutput(flag, path)
	if err != nil || d.kind != outReplace {
		return err
	}
	f, err := createTemp(d.target, 0o600)
	if err != nil {
		return usagef("%s %s: cannot create a file in %s: %v", flag, path, filepath.Dir(d.target), pathErr(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// writeOutput writes data to path ("-": stdout) as the comment above says.
// A failure is an error naming flag and path (exit status 1: the command
// ran, its result could not be stored).
func writeOutput(stdout io.Writer, flag, path string, data []byte) error {
	return writeOutputStream(stdout, flag, path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeOutputStream is writeOutput for data produced as they are written:
// write produces them into the destination, which is replaced atomically
// (a temporary file beside it, synced, renamed over it) or written through
// (standard output, devices, pipes) as writeOutput does. If write fails,
// the temporary file is removed and the destination left as it was.
func writeOutputStream(stdout io.Writer, flag, path string, write func(io.Writer) error) error {
	d, err := resolveOutput(flag, path)
	if err != nil {
		return err
	}
	failed := func(err error) error {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("writing %s %s: %w", flag, path, pathErr(err))
	}
	switch d.kind {
	case outStdout:
		if err := write(stdout); err != nil {
			return failed(err)
		}
		return nil
	case outThrough:
		f, err := os.OpenFile(d.target, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return failed(err)
		}
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return failed(err)
		}
		return nil
	}
	// A new file: 0666, which the kernel masks with the umask; a replaced
	// one keeps its mode.
	f, err := createTemp(d.target, 0o666)
	if err != nil {
		return failed(err)
	}
	tmp := f.Name()
	if d.exists {
		err = f.Chmod(d.mode)
	}
	if err == nil {
		err = write(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, d.target)
	}
	if err != nil {
		os.Remove(tmp)
		return failed(err)
	}
	return nil
}

// createTemp creates a new file beside target, named after it, with perm
// (before the umask). Unlike os.CreateTemp it does not force 0600: the
// file's mode is the one the result will have.
func createTemp(target string, perm fs.FileMode) (*os.File, error) {
	dir, base := filepath.Split(target)
	for range 100 {
		name := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64()%1e12, 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, errors.New("could not pick a temporary file name")
}

// checkedWriter remembers the first write error (a full disk, a closed
// pipe), so that a command whose output was lost does not exit 0.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// writeSecret writes a secret (a key, a token) to path atomically, like
// writeOutput, but always with mode 0600, also when it replaces a file, and
// only to a regular file: never to standard output, a device or a pipe.
func writeSecret(flag, path string, data []byte) error {
	d, err := resolveOutput(flag, path)
	if err != nil {
		return err
	}
	if d.kind != outReplace {
		return usagef("%s %s: secrets are written to regular files only", flag, path)
	}
	fail := func(err error) error { return fmt.Errorf("writing %s %s: %w", flag, path, pathErr(err)) }
	f, err := createTemp(d.target, 0o600)
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	err = f.Chmod(0o600) // whatever the umask
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, d.target)
	}
	if err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	return nil
}

// writeJSON writes v, indented, to path ("-": stdout) with writeOutput,
// every NaN and ±Inf as null (report.Marshal).
func writeJSON(stdout io.Writer, path string, v any) error {
	data, err := report.Marshal(v, true)
	if err != nil {
		return err
	}
	return writeOutput(stdout, "--json", path, append(data, '\n'))
}

// jsonLine writes v as one compact JSON line (report.Marshal).
func jsonLine(w io.Writer, v any) error {
	data, err := report.Marshal(v, false)
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
