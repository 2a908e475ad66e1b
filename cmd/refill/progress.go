package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/refill/refill/runner"
)

// progress shows a run as it goes: a live line on a terminal, otherwise one
// log line per finished partition, so cron and CI logs stay readable.
type progress struct {
	w       io.Writer
	enabled bool
	live    bool
	color   bool
	redact  func(string) string

	mu                           sync.Mutex
	total, done, failed, skipped int
	running                      map[string]bool // model + partition in flight
	start                        time.Time
	drawn                        bool
	// seen maps each error a partition failed with to the first partition
	// that did: the next ones say "same error as" instead of repeating it.
	seen map[string]string
}

func newProgress(a *app, enabled bool) *progress {
	return &progress{w: a.stdout, enabled: enabled, live: enabled && isTerminal(a.stdout), color: a.color(),
		redact: a.redact, start: time.Now(), running: map[string]bool{}}
}

func (p *progress) observe(ev runner.Event) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Kind {
	case runner.EventStart:
		p.total, p.start = ev.Total, time.Now()
	case runner.EventUnit:
		for _, k := range ev.Partitions {
			p.running[ev.Model+" "+k] = true
		}
	case runner.EventRetry:
		p.line(fmt.Sprintf("%s %s %s (attempt %d in %s): %s", p.paint("retry", "33"), ev.Model,
			strings.Join(shortKeys(ev.Partitions), ","), ev.Attempt, ev.Delay.Round(10*time.Millisecond), p.redact(firstLine(ev.Err.Error()))))
	case runner.EventWarning:
		p.line(p.paint("warn ", "33") + " " + p.redact(ev.Message))
	case runner.EventWaiting:
		p.line(p.paint("wait ", "33") + " " + ev.Message)
	case runner.EventPartition:
		r := ev.Result
		delete(p.running, r.Model+" "+r.Partition)
		switch r.Status {
		case runner.Succeeded:
			p.done++
			switch {
			case p.live:
			case r.Unchanged && r.Attempts == 0:
				// A conditional step that did not need to run: one line
				// per model would be noise for a thousand days.
			case r.Unchanged:
				p.line(fmt.Sprintf("%s %s %s  %d rows, unchanged  %.2fs  attempt %d", p.paint("ok   ", "32"), r.Model, r.Partition, r.Rows, r.Duration.Seconds(), r.Attempts))
			default:
				p.line(fmt.Sprintf("%s %s %s  %d rows  %.2fs  attempt %d", p.paint("ok   ", "32"), r.Model, r.Partition, r.Rows, r.Duration.Seconds(), r.Attempts))
			}
		case runner.Failed:
			p.failed++
			msg := p.redact(firstLine(r.Err.Error()))
			if first, ok := p.seen[msg]; ok {
				msg = "the same error as " + first
			} else {
				if p.seen == nil {
					p.seen = map[string]string{}
				}
				p.seen[msg] = r.Model + " " + r.Partition
			}
			p.line(fmt.Sprintf("%s %s %s  %.2fs  attempt %d: %s", p.paint("FAIL ", "31"), r.Model, r.Partition, r.Duration.Seconds(), r.Attempts, msg))
		default:
			p.skipped++
			if !p.live {
				p.line(fmt.Sprintf("%s %s %s: %v", p.paint("skip ", "90"), r.Model, r.Partition, r.Err))
			}
		}
	}
	p.draw()
}

// line prints a permanent line, above the live bar if there is one.
func (p *progress) line(s string) {
	if p.live && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintln(p.w, s)
	p.drawn = false
}

func (p *progress) draw() {
	if !p.live || p.total == 0 {
		return
	}
	finished := p.done + p.failed + p.skipped
	const width = 24
	filled := width * finished / p.total
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	elapsed := time.Since(p.start).Seconds()
	rate, eta := 0.0, "?"
	if elapsed > 0 && finished > 0 {
		rate = float64(finished) / elapsed
		eta = (time.Duration(float64(p.total-finished)/rate) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r\x1b[K[%s] %d/%d  %s  %s  %d running  %.1f/s  ETA %s", bar, finished, p.total,
		p.paint(fmt.Sprintf("%d done", p.done), "32"), p.paint(fmt.Sprintf("%d failed", p.failed), "31"), len(p.running), rate, eta)
	p.drawn = true
}

func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && p.drawn {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) paint(s, code string) string {
	if !p.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func shortKeys(keys []string) []string {
	if len(keys) <= 2 {
		return keys
	}
	return []string{keys[0] + ".." + keys[len(keys)-1]}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
