// Package outfile is the one writer of every file pacpfl writes (reports,
// models, predictions, checkpoints, secrets), so that nothing is left
// half-written:
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
// Check runs before any work, so a run of hours does not end in "no such
// directory"; Write resolves the path again when the data are ready. Every
// function takes the name under which the caller knows the path (a flag such
// as "--json", or "") and puts it in its messages, which name the user's path, never
// a temporary one. An error about the path itself (no such directory, a
// directory, a secret to a pipe) is a *BadPathError: the caller's input is
// wrong, not the run.
package outfile

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
)

// BadPathError is a path that cannot be written as asked: bad input.
type BadPathError struct{ msg string }

func (e *BadPathError) Error() string { return e.msg }

func badPathf(format string, a ...any) error { return &BadPathError{fmt.Sprintf(format, a...)} }

// named is path as messages show it: after the caller's name for it, if
// any.
func named(flag, path string) string {
	if flag == "" {
		return path
	}
	return flag + " " + path
}

// Kind is how a path is written.
type Kind int

const (
	Stdout  Kind = iota // "-"
	Replace             // regular file or new path: temporary file + rename
	Through             // device, pipe, socket, /dev or /proc: written in place
)

// Dest is a resolved destination.
type Dest struct {
	Kind   Kind        // how it is written
	path   string      // as given
	target string      // Replace: the file to replace, symlinks followed
	mode   fs.FileMode // Replace: the mode of an existing target
	exists bool        // Replace: the target exists
}

// maxSymlinks bounds the links followed, as the kernel's ELOOP limit does.
const maxSymlinks = 40

// Resolve classifies path. Its errors are *BadPathError naming flag and
// path.
func Resolve(flag, path string) (*Dest, error) {
	if path == "-" {
		return &Dest{Kind: Stdout, path: path}, nil
	}
	if path == "" {
		return nil, badPathf("%s: empty file name (use - for standard output)", flag)
	}
	d := &Dest{path: path, target: path}
	system := false
	for i := 0; ; i++ {
		if i == maxSymlinks {
			return nil, badPathf("%s: too many levels of symbolic links", named(flag, path))
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
			return nil, badPathf("%s: %v", named(flag, path), Cause(err))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		link, err := os.Readlink(d.target)
		if err != nil {
			return nil, badPathf("%s: %v", named(flag, path), Cause(err))
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(d.target), link)
		}
		d.target = link
	}
	fi, err := os.Stat(d.target)
	switch {
	case err == nil && fi.IsDir():
		return nil, badPathf("%s is a directory", named(flag, path))
	case err == nil && (system || !fi.Mode().IsRegular()):
		d.Kind = Through
		return d, nil
	case err == nil:
		d.Kind, d.exists, d.mode = Replace, true, fi.Mode().Perm()
		return d, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, badPathf("%s: %v", named(flag, path), Cause(err))
	}
	if system {
		return nil, badPathf("%s: no such file (files under /proc are not created)", named(flag, path))
	}
	dir := filepath.Dir(d.target)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, badPathf("%s: directory %s does not exist", named(flag, path), dir)
	case err != nil:
		return nil, badPathf("%s: %v", named(flag, path), Cause(err))
	case !st.IsDir():
		return nil, badPathf("%s: %s is not a directory", named(flag, path), dir)
	}
	d.Kind = Replace
	return d, nil
}

// inProc reports whether path lies under /proc.
func inProc(path string) bool {
	abs, err := filepath.Abs(path)
	return err == nil && (abs == "/proc" || strings.HasPrefix(abs, "/proc/"))
}

// Cause is the cause of a file-system error without the path it carries
// (the messages name the user's path, not a temporary one).
func Cause(err error) error {
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

// Check verifies, before any work, that path can be written: it
// resolves it and, for a file to replace, creates and removes a temporary
// file beside it.
func Check(flag, path string) error {
	d, err := Resolve(flag, path)
	if err != nil || d.Kind != Replace {
		return err
	}
	f, err := createTemp(d.target, 0o600)
	if err != nil {
		return badPathf("%s: cannot create a file in %s: %v", named(flag, path), filepath.Dir(d.target), Cause(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Write writes data to path ("-": stdout) as the package doc says. A
// failure other than a *BadPathError is an error naming flag and path: the
// command ran, its result could not be stored.
func Write(stdout io.Writer, flag, path string, data []byte) error {
	return WriteStream(stdout, flag, path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// InterruptedError is WriteStream's error when write stops with
// context.Canceled; it matches context.Canceled (errors.Is).
type InterruptedError struct {
	Path string // as given
	// Replaced: the destination is a file that is left as it was (else
	// what was written so far went through).
	Replaced bool
}

// Error says what became of the destination.
func (e *InterruptedError) Error() string {
	if e.Replaced {
		return fmt.Sprintf("interrupted; %s not replaced", e.Path)
	}
	return "interrupted; the output is incomplete"
}

// Unwrap is context.Canceled, which stopped the write.
func (e *InterruptedError) Unwrap() error { return context.Canceled }

// WriteStream is Write for data produced as they are written:
// write produces them into the destination, which is replaced atomically
// (a temporary file beside it, synced, renamed over it) or written through
// (standard output, devices, pipes) as Write does. If write fails,
// the temporary file is removed and the destination left as it was; if
// it stops with context.Canceled, the error is an *InterruptedError.
func WriteStream(stdout io.Writer, flag, path string, write func(io.Writer) error) error {
	d, err := Resolve(flag, path)
	if err != nil {
		return err
	}
	failed := func(err error) error {
		if errors.Is(err, context.Canceled) {
			return &InterruptedError{Path: path, Replaced: d.Kind == Replace}
		}
		return fmt.Errorf("writing %s: %w", named(flag, path), Cause(err))
	}
	switch d.Kind {
	case Stdout:
		if err := write(stdout); err != nil {
			return failed(err)
		}
		return nil
	case Through:
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
	perm, chmod := fs.FileMode(0o666), fs.FileMode(0)
	if d.exists {
		chmod = d.mode
	}
	if err := replace(d.target, perm, chmod, write); err != nil {
		return failed(err)
	}
	return nil
}

// replace writes target through a temporary file beside it, created with
// perm (before the umask) and then set to chmod unless that is 0, synced
// and renamed over target; on failure the temporary file is removed and
// target left as it was.
func replace(target string, perm, chmod fs.FileMode, write func(io.Writer) error) error {
	f, err := createTemp(target, perm)
	if err != nil {
		return err
	}
	tmp := f.Name()
	if chmod != 0 {
		err = f.Chmod(chmod)
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
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
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

// WriteSecret writes a secret (a key, a token) to path atomically, like
// Write, but always with mode 0600, also when it replaces a file, and
// only to a regular file: never to standard output, a device or a pipe.
func WriteSecret(flag, path string, data []byte) error {
	d, err := Resolve(flag, path)
	if err != nil {
		return err
	}
	if d.Kind != Replace {
		return badPathf("%s: secrets are written to regular files only", named(flag, path))
	}
	// 0600 whatever the umask, also over a file of another mode.
	err = replace(d.target, 0o600, 0o600, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", named(flag, path), Cause(err))
	}
	return nil
}
