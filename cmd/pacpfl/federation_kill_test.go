package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pacpfl/pacpfl/rpc"
)

// asMainEnv makes the test binary run as pacpfl itself (TestMain): the
// tests start it as a separate process to kill it.
const asMainEnv = "PACPFL_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// startPacpfl starts the test binary as `pacpfl args...` in its own
// process; it is killed at the end of the test if still running.
func startPacpfl(t *testing.T, stderr *bytes.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	cmd.Stderr = stderr
	if err := cmd.Start(); errors.Is(err, syscall.ENOEXEC) {
		t.Skipf("the test binary cannot run as a process here (GOARCH %s under an emulator?): %v", runtime.GOARCH, err)
	} else if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// A server process killed with SIGKILL after a checkpoint and restarted
// with --resume ends with the report of an uninterrupted run (pacpfl train,
// which an uninterrupted networked run equals to the bit), figure for
// figure. The clients (in this process) reconnect by themselves.
func TestServerSIGKILLResume(t *testing.T) {
	dir := t.TempDir()
	ckpt, out := filepath.Join(dir, "ckpt"), filepath.Join(dir, "resumed.json")
	const rounds = 300
	flags := []string{"--clients", "3", "--new-clients", "1", "--rounds", strconv.Itoa(rounds), "--k", "2", "-c", "2",
		"--batch", "4",
		"--bound-samples", "0", "--bound-trained-samples", "0", "--seed", "9", "--quiet"}
	trainJSON := filepath.Join(dir, "train.json")
	if code, _, errOut := runCLI(append([]string{"train", "--json", trainJSON}, flags...)...); code != exitOK {
		t.Fatalf("train: exit %d: %s", code, errOut)
	}
	addr := freeAddr(t)
	server := append([]string{"server", "--listen", addr, "--insecure", "--wait", "30s", "--checkpoint", ckpt,
		"--checkpoint-every", "5"}, flags...)
	var log1 bytes.Buffer
	first := startPacpfl(t, &log1, append(server, "--json", filepath.Join(dir, "first.json"))...)
	var wg sync.WaitGroup
	codes, errs := make([]int, 3), make([]string, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, errs[i] = runCLI("client", "--server", addr, "--insecure", "--client", fmt.Sprint(i),
				"--clients", "3", "--seed", "9", "--give-up", "30s")
		}()
	}
	// SIGKILL as soon as the first checkpoint is on disk.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(ckpt, rpc.CheckpointFile)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after 30 s; server log:\n%s", log1.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	if ws, ok := first.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() ||
		ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the first server was not killed by SIGKILL (%v): it finished first?\n%s", first.ProcessState,
			log1.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "first.json")); err == nil {
		t.Fatal("the killed server wrote a report")
	}
	var log2 bytes.Buffer
	second := startPacpfl(t, &log2, append(server, "--resume", "--json", out)...)
	err := second.Wait()
	wg.Wait()
	if err != nil {
		t.Fatalf("resumed server: %v\n%s", err, log2.String())
	}
	for i := range codes {
		if codes[i] != exitOK {
			t.Errorf("client %d: exit %d: %s", i, codes[i], errs[i])
		}
	}
	m := regexp.MustCompile(`resuming from .* after round (\d+)`).FindStringSubmatch(log2.String())
	if m == nil {
		t.Fatalf("the second server did not resume:\n%s", log2.String())
	}
	if r, _ := strconv.Atoi(m[1]); r < 5 || r >= rounds {
		t.Fatalf("resumed after round %d: not mid-run", r)
	}
	want, got := readTimelessReport(t, trainJSON), readTimelessReport(t, out)
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if !bytes.Equal(wb, gb) {
		t.Errorf("report of the killed and resumed run differs from the uninterrupted one:\n%s\n%s", gb, wb)
	}
}
