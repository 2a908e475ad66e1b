package plan

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/refill/refill/models"
)

// Mode chooses which partitions in range a plan takes.
type Mode string

// Plan modes. The default takes missing, failed and stale partitions.
const (
	ModeDefault Mode = ""
	ModeAll     Mode = "all"     // every partition in range (reason forced)
	ModeMissing Mode = "missing" // only partitions never built
	ModeFailed  Mode = "failed"  // only partitions whose last attempt failed
)

// ParseMode parses a --mode value.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeDefault, ModeAll, ModeMissing, ModeFailed:
		return Mode(s), nil
	case "default", "stale":
		return ModeDefault, nil
	}
	return "", usageErrorf("unknown --mode %q (want all, missing, failed or stale)", s)
}

// Selection is what a user asked to run. The runs table stores it as JSON
// so that --resume repeats a run's exact selection.
type Selection struct {
	Select  []string `json:"select,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// From and To are inclusive periods (partition keys or dates); each
	// maps to the partitions of each model it overlaps.
	From       string   `json:"from,omitempty"`
	To         string   `json:"to,omitempty"`
	Partitions []string `json:"partitions,omitempty"`
	Mode       Mode     `json:"mode,omitempty"`
	// Lookback overrides the models' lookback for this run.
	Lookback *int `json:"lookback,omitempty"`
	// Now is the clock that decides which partitions are complete.
	Now time.Time `json:"now"`
	// Since, when set, keeps partitions done with the current fingerprint
	// at or after it: a resumed run does not redo what it already did.
	Since time.Time `json:"since,omitzero"`
	// ResumeOf is the run this selection resumes.
	ResumeOf string `json:"resume_of,omitempty"`
	// FullRefresh rebuilds the whole tables of the selected models.
	FullRefresh bool `json:"full_refresh,omitempty"`
	// AllowMissingUpstream runs partitions that read upstream partitions
	// which are missing, failed or not complete yet, instead of blocking
	// them.
	AllowMissingUpstream bool `json:"allow_missing_upstream,omitempty"`
	// Shape is how the run that used this selection ran its work; Run
	// records it, so that --resume repeats it.
	Shape *Shape `json:"shape,omitempty"`
	// Checked is set by the plan of a scheduled run: by model and tracked
	// source with loaded_at, the latest loaded_at its check read. Recorded
	// with the run, it lets the next scheduled run, once this one
	// succeeded, read only the rows loaded after it. Plans ignore it.
	Checked map[string]map[string]Loaded `json:"checked,omitempty"`
	// Parts is set by the plan of a scheduled run: by model and tracked
	// source, the states of the source's physical partitions its check
	// read (adapters.PartStater), by partition id, as "state|min|max".
	// Once this run succeeded, the next check reads only the partitions
	// whose state moved.
	Parts map[string]map[string]map[string]string `json:"parts,omitempty"`
}

// Shape is the part of a run's options (runner.RunOptions) that decides what a run's publications
// are: a resumed run repeats it.
type Shape struct {
	Together    bool `json:"together,omitempty"`
	Batch       int  `json:"batch,omitempty"`
	SplitFailed bool `json:"split_failed,omitempty"`
	FailFast    bool `json:"fail_fast,omitempty"`
	Concurrency int  `json:"concurrency,omitempty"`
	Retries     int  `json:"retries,omitempty"`
}

// Scheduled reports whether the selection has no explicit range: the form
// cron runs, which applies lookback.
func (s Selection) Scheduled() bool {
	return s.From == "" && s.To == "" && len(s.Partitions) == 0
}

// JSON encodes the selection for the runs table.
func (s Selection) JSON() string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ParseSelection decodes a selection stored by JSON.
func ParseSelection(text string) (Selection, error) {
	var s Selection
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return s, fmt.Errorf("stored selection: %w", err)
	}
	return s, nil
}

// rangeFor returns the partitions of m that s covers at s.Now, and notes
// about what was left out.
func (s Selection) rangeFor(m *models.Model) (parts []models.Partition, notes []string, err error) {
	c, notes, _, err := s.rangeOf(m, time.Time{})
	return c.partitions(m), notes, err
}

// rangeOf is rangeFor, as candidates, also reporting whether --partitions
// named some partition of m, complete or not. From and to, it starts no
// earlier than the partition holding proven.
func (s Selection) rangeOf(m *models.Model, proven time.Time) (c cands, notes []string, named bool, err error) {
	if len(s.Partitions) > 0 && (s.From != "" || s.To != "") {
		return cands{}, nil, false, usageErrorf("--partitions cannot be combined with --from or --to")
	}
	if m.Kind() != models.TimePartitioned {
		all := m.Partitions(time.Time{}, time.Time{})
		if len(s.Partitions) == 0 {
			return cands{parts: all}, nil, false, nil
		}
		var parts []models.Partition
		keep := map[string]bool{}
		for _, k := range s.Partitions {
			keep[k] = true
		}
		for _, p := range all {
			if keep[p.Key] {
				parts = append(parts, p)
			}
		}
		return cands{parts: parts}, nil, len(parts) > 0, nil
	}
	loc := m.Config.Location
	last, complete := m.LastComplete(s.Now)
	if len(s.Partitions) > 0 {
		var parts []models.Partition
		seen := map[string]bool{}
		cut := 0
		for _, k := range s.Partitions {
			per, err := models.ParsePeriod(k, loc)
			if err != nil {
				continue // a list value, or a key for another model
			}
			for _, p := range m.Partitions(per.Start, endInstant(per)) {
				if seen[p.Key] {
					continue
				}
				seen[p.Key], named = true, true
				if !complete || p.Start.After(last) {
					cut++
					continue
				}
				parts = append(parts, p)
			}
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i].Start.Before(parts[j].Start) })
		if cut > 0 {
			notes = append(notes, fmt.Sprintf("%s: left out %d partition(s) not complete at %s (allow_partial: true runs them)",
				m.Name, cut, s.Now.UTC().Format(time.RFC3339)))
		}
		return candsOf(m, parts), notes, named, nil
	}
	first := m.Config.Start
	if s.From != "" {
		per, err := models.ParsePeriod(s.From, loc)
		if err != nil {
			return cands{}, nil, false, usageErrorf("--from: %v", err)
		}
		first = per.Start
	}
	if !complete {
		return cands{}, []string{fmt.Sprintf("%s: no partition is complete yet at %s", m.Name, s.Now.UTC().Format(time.RFC3339))}, false, nil
	}
	to := last
	if s.To != "" {
		per, err := models.ParsePeriod(s.To, loc)
		if err != nil {
			return cands{}, nil, false, usageErrorf("--to: %v", err)
		}
		to = endInstant(per)
		if to.After(last) {
			if cut := m.Partitions(m.Next(m.PartitionAt(last), 1).Start, to); len(cut) > 0 {
				notes = append(notes, fmt.Sprintf("%s: left out %d partition(s) after %s, the last complete one (allow_partial: true runs them)",
					m.Name, len(cut), m.PartitionAt(last).Key))
			}
			to = last
		}
	}
	if proven.After(first) {
		first = proven // the plan proved the partitions before it done (see planProven)
	}
	return between(m, first, to), notes, false, nil
}

// rangeEnd returns the end of the time the range names: of --to, or of
// the latest period --partitions names (an instant ends a second after
// it); zero without either.
func (s Selection) rangeEnd() time.Time {
	keys := s.Partitions
	if s.To != "" {
		keys = []string{s.To}
	}
	var end time.Time
	for _, k := range keys {
		per, err := models.ParsePeriod(k, time.UTC)
		if err != nil {
			continue // a list value
		}
		end = latest(end, endInstant(per).Truncate(time.Second).Add(time.Second))
	}
	return end
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// earliest returns the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// toBeforeFrom reports whether --to names an earlier period than --from.
func (s Selection) toBeforeFrom(loc *time.Location) bool {
	f, err1 := models.ParsePeriod(s.From, loc)
	t, err2 := models.ParsePeriod(s.To, loc)
	return err1 == nil && err2 == nil && endInstant(t).Before(f.Start)
}

// endInstant returns the last instant of a period (an instant is its own end).
func endInstant(p models.Period) time.Time {
	if p.End.After(p.Start) {
		return p.End.Add(-time.Nanosecond)
	}
	return p.Start
}

// validate checks the parts of s that do not depend on a model.
func (s Selection) validate() error {
	if s.From != "" {
		if _, err := models.ParsePeriod(s.From, time.UTC); err != nil {
			return usageErrorf("--from: %v", err)
		}
	}
	if s.To != "" {
		if _, err := models.ParsePeriod(s.To, time.UTC); err != nil {
			return usageErrorf("--to: %v", err)
		}
	}
	if s.toBeforeFrom(time.UTC) {
		return usageErrorf("--to %s is before --from %s", s.To, s.From)
	}
	if len(s.Partitions) > 0 && (s.From != "" || s.To != "") {
		return usageErrorf("--partitions cannot be combined with --from or --to")
	}
	if s.Lookback != nil && *s.Lookback < 0 {
		return usageErrorf("--lookback must be 0 or more")
	}
	return nil
}
