package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxFileSize bounds a report read into memory: no report written by
// pacpfl comes near it, and a reader handed the wrong file (a data set, a
// disk image) should say so rather than fill the memory.
const maxFileSize = 1 << 30

// ReadFile decodes the JSON report at path into v. Its errors name the file
// and tell a file that is too large, one that is not JSON and one whose
// JSON does not fit v apart.
func ReadFile(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxFileSize {
		return fmt.Errorf("%s: larger than %s: not a pacpfl report", path, byteSize(maxFileSize))
	}
	if err := json.Unmarshal(b, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s: not valid JSON (byte %d: %v)", path, se.Offset, err)
		}
		return fmt.Errorf("%s: not a pacpfl report of this kind: %v", path, err)
	}
	return nil
}

// byteSize is n in MiB or KiB.
func byteSize(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
