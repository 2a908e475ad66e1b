package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/refill/refill/adapters"
)

// These tests run the real refill binary as a subprocess and kill or
// interrupt it, then check the DuckDB file and the ledger.

var (
	binOnce sync.Once
	binDir  string // removed by TestMain
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds refill once per test run, as the Makefile does.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the refill binary; skipped with -short")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "refill-bin-")
		if err != nil {
			binErr = err
			return
		}
		binDir, binPath = dir, filepath.Join(dir, "refill")
		// The Makefile's linker flags, which stamp the version.
		ldflags, err := exec.Command("make", "-s", "-C", "../..", "ldflags").Output()
		if err != nil {
			binErr = fmt.Errorf("make ldflags: %v", err)
			return
		}
		out, err := exec.Command("go", "build", "-tags", "minicore_disabled", "-ldflags", strings.TrimSpace(string(ldflags)), "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

const crashDays = 65

// crashEvents is the seed of crashProject's source: perDay rows (d, i,
// v) on each of crashDays days from 2024-01-01.
func crashEvents(perDay int) string {
	var b strings.Builder
	b.WriteString("d,i,v\n")
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for day := 0; day < crashDays; day++ {
		for i := 0; i < perDay; i++ {
			fmt.Fprintf(&b, "%s,%d,%d\n", start.AddDate(0, 0, day).Format("2006-01-02"), i, day*100+i+1)
		}
	}
	return b.String()
}

// crashProject writes a project with one daily model over crashDays days of
// a seeded source. The model multiplies v by var k, so each k is a new
// version of every partition; var work adds CPU time per partition.
func crashProject(t *testing.T) string {
	dir := t.TempDir()
	write(t, dir, "refill.yml", "targets:\n  dev: {adapter: duckdb, path: warehouse.duckdb}\nvars: {k: 1, work: 1}\n")
	write(t, dir, "models/m.sql", `/* refill
partition_by: d
grain: day
start: 2024-01-01
*/
SELECT e.d, e.i, e.v * {{ var("k") }} AS v
FROM {{ source("src.events") }} AS e
WHERE e.d >= {{ start }} AND e.d < {{ end }}
  AND (SELECT count(*) FROM range({{ var("work") }})) > 0`)
	write(t, dir, "seeds/src/events.csv", crashEvents(40))
	mustRefill(t, dir, "seed")
	return dir
}

const crashNow = "--now=2024-03-20" // after the last of the 65 days

// dayState reads each day's row count and sum of v.
func dayState(t *testing.T, dir string) map[string][2]int64 {
	out := map[string][2]int64{}
	for _, r := range queryRows(t, dir, `SELECT strftime(d, '%Y-%m-%d'), count(*), sum(v) FROM main.m GROUP BY d`) {
		out[r[0].(string)] = [2]int64{r[1].(int64), toInt(r[2])}
	}
	return out
}

// toInt reads a DuckDB integer (sum returns HUGEINT) from database/sql.
func toInt(v any) int64 { return adapters.Int(adapters.Normalize(v)) }

// baseSums returns each day's sum of v at k = 1.
func baseSums(t *testing.T, dir string) map[string]int64 {
	out := map[string]int64{}
	for _, r := range queryRows(t, dir, `SELECT strftime(d, '%Y-%m-%d'), sum(v) FROM src.events GROUP BY d`) {
		out[r[0].(string)] = toInt(r[1])
	}
	return out
}

// states returns the status of every partition of m as refill reports it
// for version k.
func states(t *testing.T, dir string, k int, work string) map[string]string {
	return partitionStates(t, dir, "m", crashNow, "--var", fmt.Sprintf("k=%d", k), "--var", "work="+work)
}

// partitionStates runs refill status on one model and returns the state of
// each of its partitions.
func partitionStates(t *testing.T, dir string, args ...string) map[string]string {
	r := mustRefill(t, dir, append(append([]string{"status"}, args...), "--output", "json")...)
	var st struct {
		Models []struct {
			Partitions []struct{ Partition, State string }
		}
	}
	if err := jsonUnmarshal(r.stdout, &st); err != nil || len(st.Models) != 1 {
		t.Fatalf("status: %v\n%s", err, r.stdout)
	}
	out := map[string]string{}
	for _, p := range st.Models[0].Partitions {
		out[p.Partition] = p.State
	}
	return out
}

func TestCrashSafety(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := crashProject(t)
	base := baseSums(t, dir)
	const workN = "2000000"
	work := "--var=work=" + workN
	run := func(k int) *exec.Cmd {
		return exec.Command(bin, "--project", dir, "run", crashNow, "--var", fmt.Sprintf("k=%d", k), work, "--concurrency", "2", "--retry-delay", "10ms")
	}
	started := time.Now()
	if out, err := run(1).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	full := time.Since(started)
	version := map[string]int64{} // the k each day's data was computed with
	for d := range base {
		version[d] = 1
	}
	rng := rand.New(rand.NewPCG(7, 11))
	trials, mixed := 12, 0
	for trial := 0; trial < trials; trial++ {
		k := trial + 2
		// Killed once a random number of partitions have finished, and a
		// random part of a partition's time later: mid-run, at any
		// statement, however loaded the machine (a kill timed from the
		// first run's length landed before the first partition or after
		// the last when the machine's load changed).
		p := startRun(t, bin, "--project", dir, "run", crashNow, "--var", fmt.Sprintf("k=%d", k), work, "--concurrency", "2", "--retry-delay", "10ms")
		waitFor(t, p.lines, "ok", 1+rng.IntN(crashDays-2))
		time.Sleep(time.Duration(float64(full) / crashDays * rng.Float64()))
		p.signal(syscall.SIGKILL)
		p.wait()

		rows := dayState(t, dir)
		st := states(t, dir, k, workN)
		newDays := 0
		for d, b := range base {
			got := rows[d]
			if got[0] != 40 {
				t.Fatalf("trial %d: %s has %d rows, want 40 (half-written or duplicated)", trial, d, got[0])
			}
			switch got[1] {
			case int64(k) * b:
				newDays++
				if st[d] != "done" {
					t.Errorf("trial %d: %s holds new data but the ledger says %s", trial, d, st[d])
				}
				version[d] = int64(k)
			case version[d] * b:
				if st[d] == "done" {
					t.Errorf("trial %d: the ledger says %s is done with the new version, but it holds version %d", trial, d, version[d])
				}
			default:
				t.Fatalf("trial %d: %s sums to %d: neither version %d (%d) nor %d (%d)", trial, d, got[1], version[d], version[d]*b, k, int64(k)*b)
			}
		}
		if newDays > 0 && newDays < len(base) {
			mixed++
		}
		// A rerun completes the rest, with no duplicates.
		if o, err := run(k).CombinedOutput(); err != nil {
			t.Fatalf("trial %d: rerun: %v\n%s", trial, err, o)
		}
		for d, got := range dayState(t, dir) {
			if got[0] != 40 || got[1] != int64(k)*base[d] {
				t.Fatalf("trial %d: after the rerun %s = %v, want 40 rows summing to %d", trial, d, got, int64(k)*base[d])
			}
			version[d] = int64(k)
		}
		for d, s := range states(t, dir, k, workN) {
			if s != "done" {
				t.Errorf("trial %d: after the rerun %s is %s", trial, d, s)
			}
		}
	}
	// Most kills must land mid-run for the test to mean anything.
	if mixed < trials/4 {
		t.Errorf("only %d of %d kills landed mid-run (a full run takes %s)", mixed, trials, full)
	}
	t.Logf("%d trials, %d killed mid-run; a full run of %d partitions takes %s", trials, mixed, crashDays, full)
}

// proc is the refill binary running in the background.
type proc struct {
	cmd   *exec.Cmd
	lines <-chan string // its output, line by line; closed once it exited
	out   *lockedBuffer // all of its output so far
	done  chan struct{} // closed once it exited
	code  int           // its exit code, once done (-1: killed by a signal)
}

// startRun starts the binary and returns it; its output is read as it
// comes, whether or not the test reads lines.
func startRun(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	pr, pw := io.Pipe()
	lines := make(chan string, 1<<16)
	p := &proc{cmd: exec.Command(bin, args...), lines: lines, out: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout = io.MultiWriter(pw, p.out)
	p.cmd.Stderr = p.cmd.Stdout
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, pr) // a line too long to scan: keep the binary writing
		close(lines)
	}()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		pw.Close()
		close(p.done)
	}()
	return p
}

// signal sends sig to the binary.
func (p *proc) signal(sig os.Signal) { p.cmd.Process.Signal(sig) }

// wait waits for the binary to exit and returns its exit code.
func (p *proc) wait() int {
	<-p.done
	return p.code
}

// lockedBuffer is a buffer that the binary's output and the test share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor reads lines until one starts with prefix n times.
func waitFor(t *testing.T, lines <-chan string, prefix string, n int) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for n > 0 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended before %d lines starting %q", n, prefix)
			}
			if strings.HasPrefix(l, prefix) {
				n--
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %q", prefix)
		}
	}
}

func TestInterruptFinishesInFlightWork(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := crashProject(t)
	base := baseSums(t, dir)
	mustRefill(t, dir, "run", crashNow)
	p := startRun(t, bin, "--project", dir, "run", crashNow, "--var", "k=2", "--var", "work=20000000", "--concurrency", "2")
	waitFor(t, p.lines, "ok", 5)
	p.signal(syscall.SIGINT)
	out := p.out
	if code := p.wait(); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, out)
	}
	if !strings.Contains(out.String(), "Interrupted") {
		t.Errorf("no interruption summary:\n%s", out)
	}
	rows := dayState(t, dir)
	st := states(t, dir, 2, "20000000")
	done := 0
	for d, b := range base {
		got := rows[d]
		isNew := got[1] == 2*b
		if got[0] != 40 || (!isNew && got[1] != b) {
			t.Fatalf("%s = %v: not entirely old or new", d, got)
		}
		if isNew != (st[d] == "done") {
			t.Errorf("%s: new data %v, ledger %s", d, isNew, st[d])
		}
		if isNew {
			done++
		}
	}
	if done < 5 || done == crashDays {
		t.Errorf("%d partitions done after the interrupt: want the finished ones only", done)
	}
	if n := query(t, dir, `SELECT count(*) FROM refill.leases`); n != int64(0) {
		t.Errorf("%v leases left after an interrupted run", n)
	}
	if s := query(t, dir, `SELECT status FROM refill.runs ORDER BY started_at DESC LIMIT 1`); s != "interrupted" {
		t.Errorf("last run is %v, want interrupted", s)
	}
	// A second signal aborts at once; transactions keep partitions whole.
	p = startRun(t, bin, "--project", dir, "run", crashNow, "--var", "k=3", "--var", "work=20000000", "--concurrency", "2")
	waitFor(t, p.lines, "ok", 2)
	p.signal(syscall.SIGINT)
	time.Sleep(20 * time.Millisecond)
	p.signal(syscall.SIGINT)
	out = p.out
	if code := p.wait(); code != exitInterrupted {
		t.Fatalf("second signal: exit %d, want %d\n%s", code, exitInterrupted, out)
	}
	for d, got := range dayState(t, dir) {
		if got[0] != 40 || (got[1] != base[d] && got[1] != 2*base[d] && got[1] != 3*base[d]) {
			t.Fatalf("after an abort %s = %v", d, got)
		}
	}
	mustRefill(t, dir, "run", crashNow, "--var", "k=3", "--var", "work=20000000")
	for d, got := range dayState(t, dir) {
		if got[1] != 3*base[d] {
			t.Errorf("the rerun left %s at %v", d, got)
		}
	}
}

func TestConcurrentRunsOnOneWarehouse(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := crashProject(t)
	a := startRun(t, bin, "--project", dir, "run", crashNow, "--var", "work=20000000", "--concurrency", "1")
	waitFor(t, a.lines, "ok", 1)
	var out bytes.Buffer
	b := exec.Command(bin, "--project", dir, "run", crashNow)
	b.Stdout, b.Stderr = &out, &out
	b.Run()
	if code := b.ProcessState.ExitCode(); code != exitLocked {
		t.Fatalf("second run: exit %d, want %d\n%s", code, exitLocked, out.String())
	}
	if msg := out.String(); !strings.Contains(msg, "locked by refill run (pid") || !strings.Contains(msg, "since") {
		t.Errorf("the message does not name the holder and when it started:\n%s", msg)
	}
	// DuckDB admits no reader either while the file is written.
	if r := refill(t, dir, "status", crashNow); r.code != exitLocked || !strings.Contains(r.stderr, "locked by refill run") {
		t.Errorf("status during a run: exit %d\n%s", r.code, r.stderr)
	}
	// With --wait the second run waits for the first, then finds nothing to do.
	var wout bytes.Buffer
	w := exec.Command(bin, "--project", dir, "run", crashNow, "--var", "work=20000000", "--wait", "2m")
	w.Stdout, w.Stderr = &wout, &wout
	if err := w.Run(); err != nil {
		t.Fatalf("waiting run: %v\n%s", err, wout.String())
	}
	if code := a.wait(); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, a.out)
	}
	if !strings.Contains(wout.String(), "Nothing to do") {
		t.Errorf("the waiting run did work the first one did:\n%s", wout.String())
	}
	base := baseSums(t, dir)
	for d, got := range dayState(t, dir) {
		if got[0] != 40 || got[1] != base[d] {
			t.Errorf("%s = %v", d, got)
		}
	}
}
