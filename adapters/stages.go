package adapters

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/refill/refill/models"
)

// Kinds of tables refill makes in the stage schema (see StageName).
const (
	KindStage   = "s" // a staging table
	KindSwap    = "w" // a swap (work) table
	KindOverlay = "v" // an overlay view
	KindSeed    = "seed"
)

// StagePrefix is how the names of the tables refill makes for target in
// the stage schema begin: schema__table__.
func StagePrefix(target models.Relation) string {
	schema := target.Schema
	if target.Database != "" {
		schema = target.Database + "_" + schema
	}
	return schema + "__" + target.Name + "__"
}

// StageName names a table of kind (KindStage, ...) that run runID makes
// for target: StagePrefix(target), the kind, the run's token and unique,
// which must be made of letters and digits. Nothing after the prefix
// contains "__", so the names of a table t__x never pass for t's, and
// StageRun can read the run back.
func StageName(target models.Relation, kind, runID, unique string) string {
	return StagePrefix(target) + kind + "_" + RunToken(runID) + "_" + unique
}

// RunToken is the part of a run ID that names its tables: lower case,
// letters and digits only.
func RunToken(runID string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, runID)
}

// runTokenRE matches the tokens of run IDs refill generates
// (20240102T030405Z-1a2b3c).
var runTokenRE = regexp.MustCompile(`^[0-9]{8}t[0-9]{6}z[0-9a-f]+$`)

// StageRun returns the token of the run that made table name (as
// StageName makes them; compared without case, for warehouses that fold
// names). ok is false for other names, and for runs whose IDs refill did
// not generate.
func StageRun(name string) (token string, ok bool) {
	i := strings.LastIndex(name, "__")
	if i < 0 {
		return "", false
	}
	parts := strings.Split(strings.ToLower(name[i+2:]), "_")
	if len(parts) != 3 || !runTokenRE.MatchString(parts[1]) {
		return "", false
	}
	return parts[1], true
}

// WindowTag encodes a time window for the unique part of a stage's name
// (StageName), so that the stage names the partitions it holds even after
// the run that made it died: w<start>x<end>, in Unix seconds. Other
// windows have no tag.
func WindowTag(w Window) string {
	if w.Whole() || w.Values != nil {
		return ""
	}
	return fmt.Sprintf("w%dx%d", w.Start.Unix(), w.End.Unix())
}

// StageWindow returns the time window a stage's name carries (WindowTag),
// if it carries one.
func StageWindow(name string) (start, end time.Time, ok bool) {
	i := strings.LastIndex(name, "__")
	if i < 0 {
		return time.Time{}, time.Time{}, false
	}
	parts := strings.Split(strings.ToLower(name[i+2:]), "_")
	if len(parts) != 3 {
		return time.Time{}, time.Time{}, false
	}
	u := parts[2]
	j := strings.LastIndexByte(u, 'w')
	if j < 0 {
		return time.Time{}, time.Time{}, false
	}
	s, e, found := strings.Cut(u[j+1:], "x")
	from, err1 := strconv.ParseInt(s, 10, 64)
	to, err2 := strconv.ParseInt(e, 10, 64)
	if !found || err1 != nil || err2 != nil || to <= from {
		return time.Time{}, time.Time{}, false
	}
	return time.Unix(from, 0).UTC(), time.Unix(to, 0).UTC(), true
}

// TokenTime returns when the run whose token is token started (run IDs
// begin with their start time, 20240102T030405Z).
func TokenTime(token string) (time.Time, bool) {
	if len(token) < 16 {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102t150405z", token[:16])
	return t, err == nil
}

// IsStage reports whether name is a staging table (KindStage) of a run, as
// opposed to a swap table or an overlay.
func IsStage(name string) bool { return StageKind(name) == KindStage }

// StageKind returns the kind of table name is (as StageName makes them,
// compared without case), or "" for a name StageName did not make.
func StageKind(name string) string {
	i := strings.LastIndex(name, "__")
	if i < 0 {
		return ""
	}
	kind, _, found := strings.Cut(strings.ToLower(name[i+2:]), "_")
	if !found {
		return ""
	}
	return kind
}
