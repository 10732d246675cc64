package hostile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The sampler sees a child process's memory grow, and VmHWM keeps the
// peak after the memory is gone.
func TestSampleRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	// A child (this test binary) that holds 200 MB, then gives it back.
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAllocate$")
	cmd.Env = append(os.Environ(), "HOSTILE_HELPER_ALLOCATE=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.ENOEXEC) {
			// The test binary runs under an emulator (GOARCH=arm64 with
			// qemu-aarch64-static): it cannot start itself as a child.
			t.Skipf("cannot re-execute the test binary: %v", err)
		}
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(out)
	next := func(want string) {
		t.Helper()
		for lines.Scan() {
			if lines.Text() == want {
				return
			}
		}
		t.Fatalf("the child did not say %q", want)
	}
	s := SampleRSS(cmd.Process.Pid, 10*time.Millisecond)
	next("held")
	time.Sleep(100 * time.Millisecond)
	if r := s.Report(); r.PeakRSS < 200<<20 || r.Samples < 2 || r.Err != nil {
		t.Fatalf("while the child holds 200 MB: %v, %v", r, r.Err)
	}
	next("freed")
	time.Sleep(100 * time.Millisecond)
	if r := s.Report(); r.LastRSS > 100<<20 || r.PeakRSS < 200<<20 || r.HWM < 190<<20 {
		t.Fatalf("after the child freed its memory: %v", r)
	}
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	waitFor(t, func() bool { return s.Report().Err != nil })
	r := s.Stop()
	t.Log(r)
	if _, err := ReadMemStatus(cmd.Process.Pid); err == nil {
		t.Fatal("ReadMemStatus of an exited process")
	}
	m, err := ReadMemStatus(os.Getpid())
	if err != nil || m.RSS <= 0 || m.HWM < m.RSS {
		t.Fatalf("own memory %+v, %v", m, err)
	}
}

// TestHelperAllocate is TestSampleRSS's child process.
func TestHelperAllocate(t *testing.T) {
	if os.Getenv("HOSTILE_HELPER_ALLOCATE") == "" {
		t.Skip("the child process of TestSampleRSS")
	}
	b, err := syscall.Mmap(-1, 0, 200<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	fmt.Println("held")
	time.Sleep(300 * time.Millisecond)
	if err := syscall.Munmap(b); err != nil {
		t.Fatal(err)
	}
	fmt.Println("freed")
	time.Sleep(10 * time.Second) // until killed
}

// AnalyzeLog finds a forged error message in a log written as the server
// writes its own, and nothing in a clean one.
func TestAnalyzeLog(t *testing.T) {
	var buf bytes.Buffer
	l := log.New(&buf, "pacpfl server: ", log.LstdFlags|log.Lmicroseconds)
	l.Printf("listening on 127.0.0.1:7070 (TLS), waiting for 2 clients")
	l.Printf("client 0 joined from 127.0.0.1:40000 (1 of 2)")
	clean := AnalyzeLog(buf.Bytes(), "pacpfl server: ", "FORGED")
	if clean != (LogStats{Lines: 2, Bytes: buf.Len(), LongestLine: clean.LongestLine}) {
		t.Fatalf("clean log: %+v", clean)
	}
	msg := ForgedMessage(4096, "pacpfl server: ", "FORGED", time.Now())
	if len(msg) != 4096 || !strings.Contains(msg, "\n") || !strings.Contains(msg, "\x1b[") {
		t.Fatalf("forged message of %d bytes: %q", len(msg), msg[:100])
	}
	l.Printf("client 1 failed in round 3: %s", msg)
	s := AnalyzeLog(buf.Bytes(), "pacpfl server: ", "FORGED")
	t.Logf("%+v", s)
	forged := strings.Count(msg, "\n")
	if s.Lines != 2+1+forged || s.Forged < forged-1 || s.ControlLines < forged-1 || s.Escapes < 3*forged ||
		s.Unprefixed != 0 {
		t.Fatalf("forged log: %+v (%d forged lines)", s, forged)
	}
	// A line that does not start with the prefix.
	if s := AnalyzeLog([]byte("pacpfl server: a\ncontinued\n"), "pacpfl server: ", ""); s.Unprefixed != 1 ||
		s.Lines != 2 {
		t.Fatalf("%+v", s)
	}
	for _, c := range []struct {
		s    string
		want bool
	}{{"plain\ttab", false}, {"é ünïcode", false}, {"bell\a", true}, {"cr\r", true}, {"del\x7f", true},
		{"c1 \u009b", true}} {
		if HasControl([]byte(c.s)) != c.want {
			t.Errorf("HasControl(%q) = %v", c.s, !c.want)
		}
	}
}
