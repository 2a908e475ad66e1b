package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// The changed selector: the models whose version differs from a baseline,
// named by --state: a target (the latest version its ledger records of
// each model) or git:REF (the project's files at a git revision).

// changedTerm is the selector term of the changed models; changed+ adds
// what reads them, +changed what they read.
const changedTerm = "changed"

// usesChanged reports whether selectors name the changed models.
func usesChanged(selectors []string) bool {
	return slices.ContainsFunc(models.SelectorTerms(selectors), func(t string) bool { return strings.Trim(t, "+") == changedTerm })
}

// expandChanged replaces the changed term, keeping its + operators, by the
// names of the changed models.
func expandChanged(selectors []string, changed []string) []string {
	var out []string
	for _, t := range models.SelectorTerms(selectors) {
		if strings.Trim(t, "+") != changedTerm {
			out = append(out, t)
			continue
		}
		before, after := t[:strings.Index(t, changedTerm)], t[strings.Index(t, changedTerm)+len(changedTerm):]
		for _, name := range changed {
			out = append(out, before+name+after)
		}
	}
	return out
}

// changes is what resolveChanged found: the changed models, by name, and
// how to name what they changed since.
type changes struct {
	names []string
	since string
}

// resolveChanged expands the changed term of sel's selectors against
// state (--state: a target, default the command's own, or git:REF), and
// returns the changes (nil when the selectors do not use the term).
// nothing reports that the selectors named only the changed models and
// none changed: the command has nothing to do, and says so.
func (a *app) resolveChanged(sel *plan.Selection, state string) (ch *changes, nothing bool, err error) {
	if !usesChanged(sel.Select) {
		if state != "" {
			return nil, false, usagef("--state %s: it says what the changed selector compares with, and the selection does not use it", state)
		}
		return nil, false, nil
	}
	names, since, err := a.changedSince(state)
	if err != nil {
		return nil, false, err
	}
	if !a.quiet {
		fmt.Fprintf(a.stderr, "changed since %s: %s\n", since, changedList(names))
	}
	sel.Select = expandChanged(sel.Select, names)
	return &changes{names: names, since: since}, len(sel.Select) == 0, nil
}

// nothingChanged is the message of a command whose changed models are none.
const nothingChanged = "Nothing to do: no selected model changed."

// targetNames names the command's target and its adapter from the project
// alone, for output made without connecting.
func (a *app) targetNames() (target, adapter string) {
	p, _, _ := a.loadProject()
	if p == nil {
		return a.target, ""
	}
	t, err := p.LookupTarget(a.target)
	if err != nil {
		return a.target, ""
	}
	return t.Name, t.Adapter
}

func changedList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// changedSince returns the names of the project's models whose version
// differs from state's, in graph order, and how to name state.
func (a *app) changedSince(state string) ([]string, string, error) {
	if ref, ok := strings.CutPrefix(state, "git:"); ok {
		return a.changedSinceGit(ref)
	}
	target := state
	if target == "" {
		target = a.target
	}
	// The versions are those the state target resolves names to: open it.
	saved := a.target
	a.target = target
	s, err := a.session(readOnly, false, "refill", nil)
	a.target = saved
	if err != nil {
		return nil, "", err
	}
	defer s.close()
	names := make([]string, len(s.project.Models))
	for i, m := range s.project.Models {
		names[i] = m.Name
	}
	versions, err := s.adapter.Versions(a.ctx, names)
	if err != nil {
		return nil, "", exitf(exitWarehouse, "reading model versions of target %s: %v", s.target.Name, err)
	}
	// The latest version each model was published or accepted under.
	latest := map[string]string{}
	at := map[string]int64{}
	for _, v := range versions {
		t := v.CreatedAt.UnixNano()
		if v.AcceptedFrom != "" && v.AcceptedAt.UnixNano() > t {
			t = v.AcceptedAt.UnixNano()
		}
		if _, seen := latest[v.Model]; !seen || t >= at[v.Model] {
			latest[v.Model], at[v.Model] = v.Fingerprint, t
		}
	}
	var changed []string
	for _, m := range s.project.Models {
		if latest[m.Name] != m.Version(s.scope).Fingerprint {
			changed = append(changed, m.Name)
		}
	}
	return changed, "target " + s.target.Name + "'s ledger", nil
}

// changedSinceGit compares the project with its files at git revision ref,
// under the command's target: a model is changed when it is new or its
// version (its SQL, its table's config, the names and vars it resolves)
// differs.
func (a *app) changedSinceGit(ref string) ([]string, string, error) {
	p, dir, err := a.loadProject()
	if p == nil {
		return nil, "", err
	}
	t, err := p.LookupTarget(a.target)
	if err != nil {
		return nil, "", usageError{err}
	}
	e, err := checkTarget(t)
	if err != nil {
		return nil, "", usageError{err}
	}
	d, schema := e.Dialect(t)
	old, err := projectAt(dir, ref, a)
	if err != nil {
		return nil, "", err
	}
	scope := &models.Scope{Dialect: d, Schema: schema, Vars: p.Vars, Target: t.Name}
	oldScope := &models.Scope{Dialect: d, Schema: schema, Target: t.Name}
	if old != nil {
		oldScope.Vars = old.Vars
	}
	var changed []string
	for _, m := range p.Models {
		var om *models.Model
		if old != nil {
			om, _ = old.Model(m.Name)
		}
		if om == nil || om.Version(oldScope).Fingerprint != m.Version(scope).Fingerprint {
			changed = append(changed, m.Name)
		}
	}
	return changed, "git " + ref, nil
}

// projectAt loads the project in dir as it was at git revision ref (nil
// when it did not exist there), from git archive into a temporary folder.
func projectAt(dir, ref string, a *app) (*models.Project, error) {
	git := func(args ...string) ([]byte, error) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, usagef("--state git:%s: git %s: %v: %s", ref, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	prefix, err := git("rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	if _, err := git("rev-parse", "--verify", "--quiet", ref+"^{commit}"); err != nil {
		return nil, err
	}
	tree := ref + ":" + strings.TrimSpace(string(prefix))
	if _, err := git("cat-file", "-e", tree); err != nil {
		return nil, nil // the project did not exist at ref
	}
	archive, err := git("archive", "--format=tar", tree)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "refill-state-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		path := filepath.Join(tmp, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, tmp+string(filepath.Separator)) {
			continue // not under the folder
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				return nil, err
			}
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, models.ProjectFile)); err != nil {
		return nil, nil
	}
	vars, err := a.cliVars()
	if err != nil {
		return nil, err
	}
	old, _ := models.Load(os.DirFS(tmp), withAdapters(models.LoadOptions{LookupEnv: a.getenv, Vars: vars}))
	return old, nil
}
