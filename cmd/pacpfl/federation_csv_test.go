package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// writeSiteFiles writes the rows of the first n sites of examples/sites.csv
// as one pooled file and one file per site (each with the header), and
// returns the pooled file's path and the per-site paths.
func writeSiteFiles(t *testing.T, dir string, n int) (string, []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "sites.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	header := lines[0]
	var order []string
	rows := map[string][]string{}
	pooled := []string{header}
	for _, l := range lines[1:] {
		site, _, _ := strings.Cut(l, ",")
		if _, ok := rows[site]; !ok {
			if len(order) == n {
				continue
			}
			order = append(order, site)
		}
		rows[site] = append(rows[site], l)
		pooled = append(pooled, l)
	}
	write := func(name string, ls []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var own []string
	for _, s := range order {
		own = append(own, write(s+".csv", append([]string{header}, rows[s]...)))
	}
	return write("pooled.csv", pooled), own
}

// Each client process reads only its own CSV file; the server reads the
// pooled file to standardise, evaluate and report: the report is
// bit-identical to pacpfl train --data on the pooled file. A client with
// another client's file is refused, naming the flags to check.
func TestServerClientsOwnCSVMatchTrain(t *testing.T) {
	dir := t.TempDir()
	pooled, own := writeSiteFiles(t, dir, 4)
	cols := []string{"--client-column", "site", "--target-column", "load", "--features", "temperature",
		"--test-fraction", "0.3", "--seed", "7"}
	train := []string{"--new-clients", "site04", "--rounds", "4", "--k", "2", "--batch", "6", "-c", "2",
		"--bound-samples", "0", "--quiet"}
	errOut := ownCSVMatchesTrain(t, dir, pooled, own[:3], cols, train)
	if !strings.Contains(errOut, `0 = "site01", 1 = "site02", 2 = "site03"`) {
		t.Errorf("server log lacks the client ids:\n%s", errOut)
	}
	// Clients 0 and 1 swapped their files: both are refused.
	code, errOut, codes, errs := runOwnCSV(t, "1s", filepath.Join(dir, "swapped.json"),
		[]string{own[1], own[0], own[2]},
		append(append([]string{"--data", pooled}, train...), cols...), cols)
	if code == exitOK {
		t.Errorf("server with swapped client files: exit 0")
	}
	for i := range 2 {
		if codes[i] != exitError || !strings.Contains(errs[i], "training data differ") ||
			!strings.Contains(errs[i], "--client index") {
			t.Errorf("client %d with another's file: exit %d: %s", i, codes[i], errs[i])
		}
	}
}

// Classification (BNN clients) from own files, one of which lacks a class
// of the pooled file: the client maps its labels to the server's classes
// and learns dφ from their number; the report equals train's.
func TestServerClientsOwnCSVClassification(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	header := "site,x,z,label"
	pooled := []string{header}
	var own []string
	for c := range 4 {
		lines := []string{header}
		for range 18 {
			x, z := 4*rng.Float64()-2, rng.NormFloat64()
			label := "b"
			switch {
			case x+0.3*z < -0.7 && c != 1: // client 1 holds no "a": its "b" is its class 0
				label = "a"
			case x+0.3*z > 0.7:
				label = "c"
			}
			l := fmt.Sprintf("s%d,%.4f,%.4f,%s", c, x, z, label)
			lines, pooled = append(lines, l), append(pooled, l)
		}
		p := filepath.Join(dir, fmt.Sprintf("s%d.csv", c))
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		own = append(own, p)
	}
	path := filepath.Join(dir, "pooled.csv")
	if err := os.WriteFile(path, []byte(strings.Join(pooled, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cols := []string{"--client-column", "site", "--target-column", "label", "--task", "classification", "--seed", "4",
		"--hidden", "4", "--samples", "2"}
	train := []string{"--new-clients", "s3", "--rounds", "3", "--k", "2", "--posterior-particles", "2",
		"--posterior-steps", "3",
		"--bound-samples", "0", "--quiet"}
	ownCSVMatchesTrain(t, dir, path, own[:3], cols, train)
	// A client file with a class the server's file lacks is refused.
	odd := filepath.Join(dir, "odd.csv")
	b, _ := os.ReadFile(own[0])
	os.WriteFile(odd, []byte(strings.Replace(string(b), ",b\n", ",zebra\n", 1)), 0o644)
	_, _, codes, errs := runOwnCSV(t, "1s", filepath.Join(dir, "odd.json"), []string{odd, own[1], own[2]},
		append(append([]string{"--data", path}, train...), cols...), cols)
	if codes[0] == exitOK || !strings.Contains(errs[0], "training data differ") {
		t.Errorf("client with an unknown class: exit %d: %s", codes[0], errs[0])
	}
}

// ownCSVMatchesTrain runs train on the pooled file, then a server on it with
// one client process per own file, and compares the reports; it returns
// the server's log.
func ownCSVMatchesTrain(t *testing.T, dir, pooled string, own, cols, train []string) string {
	t.Helper()
	flags := append(append([]string{"--data", pooled}, train...), cols...)
	trainJSON, serverJSON := filepath.Join(dir, "train.json"), filepath.Join(dir, "server.json")
	if code, _, errOut := runCLI(append([]string{"train", "--json", trainJSON}, flags...)...); code != exitOK {
		t.Fatalf("train: exit %d: %s", code, errOut)
	}
	code, errOut, codes, errs := runOwnCSV(t, "20s", serverJSON, own, flags, cols)
	if code != exitOK {
		t.Fatalf("server: exit %d: %s", code, errOut)
	}
	for i := range codes {
		if codes[i] != exitOK {
			t.Errorf("client %d: exit %d: %s", i, codes[i], errs[i])
		}
	}
	want, got := readTimelessReport(t, trainJSON), readTimelessReport(t, serverJSON)
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if string(wb) != string(gb) {
		t.Errorf("server report differs from train's:\n%s\n%s", gb, wb)
	}
	return errOut
}

// runOwnCSV runs a plaintext server with flags and a client per file
// (client I reads files[I]); wait bounds the server's wait and the
// clients' retries.
func runOwnCSV(t *testing.T, wait, serverJSON string, files, flags, cols []string) (int, string, []int, []string) {
	t.Helper()
	addr := freeAddr(t)
	var wg sync.WaitGroup
	var code int
	var errOut string
	wg.Add(1)
	go func() {
		defer wg.Done()
		code, _, errOut = runCLI(append(
			[]string{"server", "--listen", addr, "--insecure", "--wait", wait, "--json", serverJSON}, flags...)...)
	}()
	codes, errs := make([]int, len(files)), make([]string, len(files))
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"client", "--server", addr, "--insecure", "--client", fmt.Sprint(i), "--data", f,
				"--give-up", wait}, cols...)
			codes[i], _, errs[i] = runCLI(args...)
		}()
	}
	wg.Wait()
	return code, errOut, codes, errs
}

// Bad client files are refused before connecting, naming the file.
func TestClientOwnCSVBadFiles(t *testing.T) {
	dir := t.TempDir()
	pooled, _ := writeSiteFiles(t, dir, 2)
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("site,temperature,load\nsite01,12.5,60\nsite01,warm,61\n"), 0o644)
	short := filepath.Join(dir, "short.csv")
	os.WriteFile(short, []byte("site,temperature,load\nsite01,12.5,60\n"), 0o644)
	noTarget := filepath.Join(dir, "notarget.csv")
	os.WriteFile(noTarget, []byte("site,temperature\nsite01,12.5\nsite01,13\n"), 0o644)
	missing := filepath.Join(dir, "missing.csv")
	cols := []string{"--client-column", "site", "--target-column", "load", "--features", "temperature"}
	cases := []struct {
		file  string
		extra []string
		want  []string
	}{
		{pooled, nil, []string{pooled, "rows of 2 clients", `"site01", "site02"`}},
		{bad, nil, []string{bad, ":3", "warm"}},
		{short, nil, []string{short, "1 training row"}},
		{noTarget, nil, []string{noTarget, "load"}},
		{missing, nil, []string{missing}},
	}
	for _, c := range cases {
		args := append(append([]string{"client", "--server", "127.0.0.1:1", "--insecure", "--client", "0", "--data",
			c.file, "--give-up", "1s"}, cols...), c.extra...)
		code, _, errOut := runCLI(args...)
		if code == exitOK {
			t.Errorf("%s %v: exit 0", c.file, c.extra)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s %v: stderr %q lacks %q", c.file, c.extra, errOut, w)
			}
		}
	}
}

// A Fashion-MNIST client builds only its own split; an index beyond the
// split's existing clients is refused before connecting.
func TestClientFMNISTIndexOutOfRange(t *testing.T) {
	dir := writeFakeFMNIST(t, 140)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--client", "10"}, "10 existing clients"},
		{[]string{"--client", "3", "--partition", "dirichlet", "--clients", "3"}, "3 existing clients"},
	} {
		args := append([]string{"client", "--server", "127.0.0.1:1", "--insecure", "--model", "bnn", "--data-dir", dir,
			"--max-images", "1200", "--give-up", "1s"}, c.args...)
		code, _, errOut := runCLI(args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "--client") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", c.args, code, errOut, c.want)
		}
	}
}
