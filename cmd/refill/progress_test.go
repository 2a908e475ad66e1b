package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/runner"
)

func TestProgress(t *testing.T) {
	t.Parallel()
	feed := func(p *progress) {
		p.observe(runner.Event{Kind: runner.EventStart, Total: 4})
		p.observe(runner.Event{Kind: runner.EventUnit, Model: "m", Partitions: []string{"2024-01-01", "2024-01-02"}})
		p.observe(runner.Event{Kind: runner.EventPartition, Result: &runner.PartitionResult{Model: "m", Partition: "2024-01-01",
			Status: runner.Succeeded, Rows: 27, Attempts: 1, Duration: 20 * time.Millisecond}})
		p.observe(runner.Event{Kind: runner.EventRetry, Model: "m", Partitions: []string{"2024-01-02"}, Attempt: 2,
			Delay: time.Second, Err: errors.New("connection reset by peer")})
		p.observe(runner.Event{Kind: runner.EventPartition, Result: &runner.PartitionResult{Model: "m", Partition: "2024-01-02",
			Status: runner.Failed, Attempts: 3, Err: errors.New("Binder Error: no column x\nLINE 1: ...")}})
		p.observe(runner.Event{Kind: runner.EventPartition, Result: &runner.PartitionResult{Model: "d", Partition: "2024-01-02",
			Status: runner.Skipped, Err: errors.New("upstream m 2024-01-02 failed")}})
		p.close()
	}
	redact := func(s string) string { return s }

	// Not a terminal: one line per finished partition, for logs.
	var logs bytes.Buffer
	feed(&progress{w: &logs, enabled: true, redact: redact, running: map[string]bool{}})
	want := "ok    m 2024-01-01  27 rows  0.02s  attempt 1\n" +
		"retry m 2024-01-02 (attempt 2 in 1s): connection reset by peer\n" +
		"FAIL  m 2024-01-02  0.00s  attempt 3: Binder Error: no column x\n" +
		"skip  d 2024-01-02: upstream m 2024-01-02 failed\n"
	if logs.String() != want {
		t.Errorf("log lines:\n%s\nwant:\n%s", logs.String(), want)
	}

	// A terminal: a live bar, redrawn in place, with failures above it.
	var live bytes.Buffer
	feed(&progress{w: &live, enabled: true, live: true, redact: redact, running: map[string]bool{}, start: time.Now()})
	out := live.String()
	for _, w := range []string{"\r\x1b[K[======                  ] 1/4  1 done  0 failed  1 running", "\r\x1b[KFAIL  m 2024-01-02",
		"] 3/4  1 done  1 failed  0 running"} {
		if !strings.Contains(out, w) {
			t.Errorf("live output lacks %q:\n%q", w, out)
		}
	}
	if strings.Contains(out, "ok    m") {
		t.Error("the live display also printed per-partition log lines")
	}
}
