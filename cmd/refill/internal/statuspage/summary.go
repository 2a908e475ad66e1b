package statuspage

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// An issueGroup is a set of partitions in one state for one reason: the
// same error, or the same cause of staleness, up to dates and numbers.
type issueGroup struct {
	Class  string
	Count  int
	Text   string // the first partition's error or reason, as written
	Varies bool   // the others' texts differ from it in dates or numbers
	// Example is, for blocked partitions (grouped by cause), the first
	// one's detail.
	Example string
	Where   []groupWhere

	// consequence marks partitions blocked by blocked partitions.
	consequence bool
	members     map[int][]int // model index -> partition indexes, ascending
	models      []int         // model indexes in order of first appearance
}

// groupWhere lists a group's partitions in one model, as spans of
// neighbouring partitions linked to their calendar cells.
type groupWhere struct {
	Model, Anchor string
	Spans         []keySpan
	More          int // partitions in spans not listed
}

type keySpan struct{ Label, Href string }

// issueSection is the groups of one state.
type issueSection struct {
	Class, Title, By string
	Partitions       int
	Groups           []*issueGroup
	MoreGroups       int // groups not shown
}

// Limits on what the summary lists, so that it stays short however many
// partitions there are.
const (
	maxGroups     = 12   // groups per section
	maxSpans      = 4    // spans per model in a group
	maxIssueChars = 2000 // of an error
)

// attentionOrder is the order of the summary's sections, and how each is
// titled and grouped.
var attentionOrder = []struct{ class, title, by string }{
	{"failed", "Failed", "by error"},
	{"blocked", "Blocked: runs skip these", "by the upstream partitions they wait for"},
	{"pending", "Pending", "by what is known of the publication"},
	{"drift", "Drift", "by what differs"},
	{"stale", "Stale", "by reason"},
	{"partial", "Partial", "by reason"},
}

// grouper collects issue groups as partitions are added.
type grouper struct {
	byKey  map[string]*issueGroup
	groups []*issueGroup
	shapes map[string]string // shape's cache
}

func newGrouper() *grouper {
	return &grouper{byKey: map[string]*issueGroup{}, shapes: map[string]string{}}
}

// add puts partition part of model mi in the group of class for text (or
// for cause, when not empty: blocked partitions).
func (g *grouper) add(class, text, cause string, mi, part int) {
	key := class + "\x00" + cause
	if cause == "" {
		key += g.shape(text)
	}
	grp := g.byKey[key]
	if grp == nil {
		grp = &issueGroup{Class: class, Text: text, members: map[int][]int{}}
		if cause != "" {
			grp.Text, grp.Example = cause, text
			grp.consequence = strings.Contains(cause, "blocked")
		}
		if len(grp.Text) > maxIssueChars {
			grp.Text = grp.Text[:maxIssueChars] + " …"
		}
		g.byKey[key] = grp
		g.groups = append(g.groups, grp)
	} else if cause == "" && text != grp.Text {
		grp.Varies = true
	}
	grp.Count++
	if _, ok := grp.members[mi]; !ok {
		grp.models = append(grp.models, mi)
	}
	grp.members[mi] = append(grp.members[mi], part)
}

var (
	runIDRE     = regexp.MustCompile(`\d{8}T\d{6}Z-[0-9a-f]{6}`)
	timestampRE = regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?( ?(Z|UTC|[+-]\d\d:?\d\d))?`)
	keyRE       = regexp.MustCompile(`\d{4}-W\d\d|\d{4}-\d\d(-\d\d(T\d\d)?)?`)
	numberRE    = regexp.MustCompile(`\b\d+(\.\d+)?\b`)
)

// shape is text with run IDs, times, partition keys and numbers blanked:
// texts of one shape are one error or reason.
func (g *grouper) shape(text string) string {
	if s, ok := g.shapes[text]; ok {
		return s
	}
	s := runIDRE.ReplaceAllString(text, "#")
	s = timestampRE.ReplaceAllString(s, "#")
	s = keyRE.ReplaceAllString(s, "#")
	s = numberRE.ReplaceAllString(s, "#")
	g.shapes[text] = s
	return s
}

// sections sorts the groups into sections, largest group first, and
// resolves their partitions to links with link.
func (g *grouper) sections(modelNames []string, keys func(mi, part int) string, link func(mi, part int) string) []issueSection {
	var out []issueSection
	for _, o := range attentionOrder {
		sec := issueSection{Class: o.class, Title: o.title, By: o.by}
		for _, grp := range g.groups {
			if grp.Class == o.class {
				sec.Groups = append(sec.Groups, grp)
				sec.Partitions += grp.Count
			}
		}
		if len(sec.Groups) == 0 {
			continue
		}
		// Largest first; for blocked partitions, those waiting for a failed
		// or missing partition before those waiting for a blocked one.
		sort.SliceStable(sec.Groups, func(i, j int) bool {
			a, b := sec.Groups[i], sec.Groups[j]
			if a.consequence != b.consequence {
				return b.consequence
			}
			return a.Count > b.Count
		})
		if len(sec.Groups) > maxGroups {
			sec.MoreGroups = len(sec.Groups) - maxGroups
			sec.Groups = sec.Groups[:maxGroups]
		}
		for _, grp := range sec.Groups {
			for _, mi := range grp.models {
				grp.Where = append(grp.Where, whereOf(modelNames[mi], grp.members[mi], func(part int) string { return keys(mi, part) },
					func(part int) string { return link(mi, part) }))
			}
		}
		out = append(out, sec)
	}
	return out
}

// whereOf lists parts (ascending partition indexes of model) as spans of
// neighbours, the first maxSpans of them linked.
func whereOf(model string, parts []int, key func(int) string, link func(int) string) groupWhere {
	w := groupWhere{Model: model, Anchor: "#" + model}
	for i := 0; i < len(parts); {
		j := i + 1
		for j < len(parts) && parts[j] == parts[j-1]+1 {
			j++
		}
		if len(w.Spans) == maxSpans {
			w.More += j - i
		} else {
			label := key(parts[i])
			if j-i > 1 {
				label = fmt.Sprintf("%s … %s (%d)", label, key(parts[j-1]), j-i)
			}
			w.Spans = append(w.Spans, keySpan{Label: label, Href: link(parts[i])})
		}
		i = j
	}
	return w
}
