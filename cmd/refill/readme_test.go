package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refill/refill/runner/plan"
)

// Every command the README's quickstart shows works as written,
// after what `make demo` does, on a copy of the example project.
func TestReadmeQuickstart(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := shop(t, nil)
	run := func(line string) {
		t.Helper()
		args := strings.Fields(line)
		cmd := exec.Command(bin, args[1:]...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		t.Logf("$ %s\n%s", line, firstLines(string(out), 6))
	}
	demo := makeRecipe(t, "demo")
	if len(demo) < 3 {
		t.Fatalf("the Makefile's demo recipe is %v", demo)
	}
	for _, line := range demo {
		// cd $(SHOP) && ../../$(BIN) seed
		_, cmd, ok := strings.Cut(line, "&& ")
		if !ok || !strings.HasPrefix(cmd, "../../$(BIN) ") {
			t.Fatalf("unexpected demo step %q", line)
		}
		run("refill " + strings.TrimPrefix(cmd, "../../$(BIN) "))
	}
	quick := readmeBlockAfter(t, "`make demo` leaves `bin/refill`")
	if len(quick) < 4 {
		t.Fatalf("the README's quickstart commands are %v", quick)
	}
	for _, line := range quick {
		cmd, _, _ := strings.Cut(line, "#")
		if !strings.HasPrefix(cmd, "../../bin/refill ") {
			t.Fatalf("unexpected quickstart line %q", line)
		}
		run("refill " + strings.TrimSpace(strings.TrimPrefix(cmd, "../../bin/refill ")))
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}

// makeRecipe returns the command lines of a Makefile target.
func makeRecipe(t *testing.T, target string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, target+":"):
			in = true
		case in && strings.HasPrefix(line, "\t"):
			out = append(out, strings.TrimSpace(line))
		case in:
			return out
		}
	}
	return out
}

// readmeBlockAfter returns the lines of the first ```sh block after the
// line containing marker.
func readmeBlockAfter(t *testing.T, marker string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("README.md has no %q", marker)
	}
	text = text[i:]
	start := strings.Index(text, "```sh\n")
	end := strings.Index(text[start+6:], "```")
	var out []string
	for _, l := range strings.Split(text[start+6:start+6+end], "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestReadmeWalkthrough runs the README's first-project walkthrough as
// written, with bash, in a new folder, with the refill binary on PATH:
// init, a new source and two models, seed, plan, run, status and test.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "### Your first project")
	if i < 0 {
		t.Fatal("README.md has no walkthrough")
	}
	text = text[i:]
	start := strings.Index(text, "```sh\n") + len("```sh\n")
	script := text[start : start+strings.Index(text[start:], "\n```")]
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s", err, out)
	}
	for _, want := range []string{"loaded raw.users", "events_by_kind", "revenue_by_country", " 0 failed"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the walkthrough's output lacks %q:\n%s", want, out)
		}
	}
}

// TestReadmeListsEveryMode: every --mode the planner takes is in the
// README's table of modes, and the table names no other.
func TestReadmeListsEveryMode(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(b), "| mode | takes |")
	table, _, _ = strings.Cut(table, "\n\n")
	for _, line := range strings.Split(table, "\n")[2:] {
		mode, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		if _, err := plan.ParseMode(mode); err != nil {
			t.Errorf("the README lists --mode %q: %v", mode, err)
		}
	}
	for _, mode := range []string{"stale", "all", "missing", "failed"} {
		if !strings.Contains(table, "| `"+mode+"`") {
			t.Errorf("the README's table of modes lacks %s", mode)
		}
	}
}
