package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// session is a loaded project bound to one target.
type session struct {
	app     *app
	project *models.Project
	dir     string
	target  *models.Target
	adapter adapters.Adapter // nil when offline
	info    adapters.Info
	scope   *models.Scope
	runner  *runner.Runner
	// broken holds the errors of the project's broken models, which it
	// loaded without (models.Project.Broken); nil when there are none.
	broken error
	// deferred is the session of the target --defer reads, if any.
	deferred *session
}

// session loads the project and, unless offline, connects to the target.
// With sel, a selection that the project's broken models stop is refused
// before anything connects (leaveOutBroken).
func (a *app) session(access targetAccess, offline bool, holder string, sel *plan.Selection) (*session, error) {
	p, dir, broken := a.loadProject()
	if p == nil {
		return nil, broken
	}
	t, err := p.LookupTarget(a.target)
	if err != nil {
		return nil, usageError{err}
	}
	if !offline {
		if err := t.Err(); err != nil {
			return nil, usageError{err}
		}
	}
	if t.DSN != "" {
		a.dsns = append(a.dsns, t.DSN)
	}
	e, err := checkTarget(t)
	if err != nil {
		return nil, usageError{err}
	}
	if err := checkProject(p, t); err != nil {
		return nil, usageError{err}
	}
	d, schema := e.Dialect(t)
	s := &session{app: a, project: p, dir: dir, target: t, info: e.Info, broken: broken,
		scope: &models.Scope{Dialect: d, Schema: schema, Vars: p.Vars, Target: t.Name}}
	if sel != nil {
		if err := s.leaveOutBroken(*sel); err != nil {
			return nil, err
		}
	}
	if offline {
		return s, nil
	}
	ad, err := a.open(e, t, dir, access, holder)
	if err != nil {
		var locked *adapters.LockedError
		if errors.As(err, &locked) {
			return nil, err
		}
		hint := ""
		if access == readOnly {
			hint = "\n(refill plan --offline plans from the model files alone, without a connection)"
		}
		return nil, exitf(exitWarehouse, "target %s: cannot connect: %v%s", t.Name, err, hint)
	}
	s.adapter, s.info = ad, ad.Info()
	s.runner = &runner.Runner{Reader: plan.Reader{Project: p, Adapter: ad, Scope: s.scope}, Target: t.Name}
	return s, nil
}

// leaveOutBroken decides whether a command selecting sel goes on without
// the project's broken models. It does not when sel selects every model,
// or names a broken one (by name, short name or path glob): it returns
// their errors, and the command exits 2 as it would have before anything
// ran. Otherwise it notes on stderr which models are left out.
func (s *session) leaveOutBroken(sel plan.Selection) error {
	if s.broken == nil {
		return nil
	}
	p := s.project
	if len(sel.Select) == 0 {
		return s.broken
	}
	for _, b := range p.Broken {
		for _, sl := range sel.Select {
			for _, name := range strings.FieldsFunc(sl, func(r rune) bool { return r == ',' || r == ' ' }) {
				if selectsBroken(p, b, strings.Trim(name, "+")) {
					return fmt.Errorf("%w\n(the selection includes %s, which is broken)", s.broken, b.Name)
				}
			}
		}
	}
	fmt.Fprintf(s.app.stderr, "note: %s left out; the selection does not name them:\n", plan.Plural(len(p.Broken), "broken model"))
	for _, b := range p.Broken {
		fmt.Fprintf(s.app.stderr, "  %s: %s\n", b.Name, b.Why())
	}
	return nil
}

// selectsBroken reports whether selector name (without + operators) would
// select broken model b: its name, its table's name, or a glob of paths
// under models/ that matches its file.
func selectsBroken(p *models.Project, b *models.BrokenModel, name string) bool {
	if name == b.Name || strings.HasSuffix(b.Name, "."+name) {
		return true
	}
	rel := strings.TrimSuffix(strings.TrimPrefix(b.Path, p.ModelsDir+"/"), ".sql")
	ok, _ := path.Match(name, rel)
	return ok
}

func (s *session) close() {
	if s.adapter != nil {
		s.adapter.Close()
	}
	if s.deferred != nil {
		s.deferred.close()
	}
}

// plan plans sel, from the ledger unless the session is offline.
func (s *session) plan(sel plan.Selection) (*plan.Plan, error) {
	if s.adapter == nil {
		return plan.NewPlan(s.project, s.scope, nil, sel)
	}
	pl, err := s.runner.Plan(s.app.ctx, sel)
	if err != nil && !isUsage(err) {
		return nil, exitf(exitWarehouse, "target %s: %v", s.target.Name, err)
	}
	return pl, err
}

func (s *session) records() ([]adapters.Record, error) {
	records, err := s.runner.Records(s.app.ctx)
	if err != nil {
		return nil, exitf(exitWarehouse, "target %s: reading the ledger: %v", s.target.Name, err)
	}
	return records, nil
}

// sqlLog returns the --verbose statement logger, or nil.
func (a *app) sqlLog() func(string) {
	if !a.verbose {
		return nil
	}
	return func(sql string) {
		fmt.Fprintf(a.stderr, "-- sql\n%s;\n", a.redact(strings.TrimSpace(sql)))
	}
}

var secretName = regexp.MustCompile(`(?i)(PASSWORD|PASSWD|SECRET|TOKEN|PRIVATE_KEY|PASSPHRASE|DSN)`)

// secrets returns values that must never be printed: every environment
// variable whose name suggests a credential, and the password parts of DSNs.
func (a *app) secrets() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if secretName.MatchString(k) && len(v) >= 4 {
			out = append(out, v)
			out = append(out, dsnPasswords(v)...)
		}
	}
	for _, dsn := range a.dsns {
		out = append(out, dsnPasswords(dsn)...)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

var queryPasswordRE = regexp.MustCompile(`(?i)(?:password|passcode|token|privateKey)=([^&\s]+)`)

// dsnPasswords extracts the passwords a DSN carries (user:password@host,
// ?password=...).
func dsnPasswords(dsn string) []string {
	var out []string
	if i := strings.Index(dsn, "@"); i > 0 {
		userinfo := dsn[:i]
		if j := strings.LastIndex(userinfo, "//"); j >= 0 {
			userinfo = userinfo[j+2:]
		}
		if _, pw, ok := strings.Cut(userinfo, ":"); ok && pw != "" {
			out = append(out, pw)
		}
	}
	for _, m := range queryPasswordRE.FindAllStringSubmatch(dsn, -1) {
		out = append(out, m[1])
	}
	return out
}

// redact replaces secrets in text with ***.
func (a *app) redact(text string) string {
	for _, s := range a.secrets() {
		text = strings.ReplaceAll(text, s, "***")
	}
	return text
}
