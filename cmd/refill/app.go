package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner"
	"github.com/refill/refill/runner/plan"
)

// Exit codes. They are a contract: scripts and schedulers branch on them.
const (
	exitOK          = 0   // success
	exitFailed      = 1   // some partitions (or tests) failed
	exitUsage       = 2   // usage, config or model error; nothing executed
	exitLocked      = 3   // another run holds a table (or the DuckDB file)
	exitWarehouse   = 4   // the warehouse or its ledger could not be reached
	exitIncomplete  = 5   // nothing failed, but selected partitions are blocked: not built
	exitInterrupted = 130 // stopped by SIGINT or SIGTERM
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// app is one invocation of refill: its streams, its flags and the project.
type app struct {
	ctx    context.Context
	stop   <-chan struct{}
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) (string, bool)

	projectDir string
	target     string
	vars       []string
	verbose    bool
	quiet      bool
	noColor    bool

	// silent is set when a command has already printed its error.
	silent bool
	// dsns are the connection strings in use, whose passwords are redacted
	// from everything refill prints.
	dsns []string
	// configure, when set, receives each adapter's Config (a
	// *duckdb.Config, *clickhouse.Config or *snowflake.Config) before it
	// opens: tests record statements through it.
	configure func(cfg any)
}

// Do runs refill with args and returns the exit code. Closing stop asks a
// run to stop launching work; cancelling ctx aborts it.
func Do(ctx context.Context, stop <-chan struct{}, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&app{ctx: ctx, stop: stop, stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.LookupEnv}).do(args)
}

// do runs refill with args and returns the exit code.
func (a *app) do(args []string) int {
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(a.ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if !a.silent {
		fmt.Fprintf(a.stderr, "refill: %s\n", indentAfterFirst(a.redact(err.Error())))
		if code == exitUsage && isFlagError(err) {
			fmt.Fprintln(a.stderr, "Run 'refill --help' or 'refill COMMAND --help' for usage.")
		}
	}
	return code
}

// exitCode is the one place that turns a command's error into an exit
// code. Commands return errors and never compute a code: an outcome that
// no error says (checks or partitions failed, a ledger that could not be
// read, a refusal) is declared with exitf and honoured first; every other
// error is classified here.
func exitCode(err error) int {
	var ee *exitError
	var held *adapters.LeaseHeldError
	var locked *adapters.LockedError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &held), errors.As(err, &locked):
		return exitLocked
	case isUsage(err):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitWarehouse
}

// isUsage reports whether err is a usage, config or model error, after
// which nothing was executed.
func isUsage(err error) bool {
	var list models.ErrorList
	var me *models.Error
	return errors.Is(err, plan.ErrUsage) || errors.Is(err, runner.ErrTogetherUnsupported) || errors.As(err, &list) ||
		errors.As(err, &me) || errors.Is(err, models.ErrUnknownModel) || isFlagError(err)
}

// usageError marks errors from flag parsing and argument checks.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func isFlagError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func indentAfterFirst(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "refill",
		Short: "Warehouse-native SQL backfills that resume, verify and swap partitions atomically",
		Long: `refill backfills partitioned SQL models into a warehouse. For every partition
it renders the model's SELECT, computes it into a staging table, verifies that
every row falls inside the partition's window and that the model's audits pass,
and only then swaps the partition into the target table atomically. A ledger
inside the warehouse records every partition, so runs resume after failures,
stale partitions are found after logic changes, and status is one query away.

Models are .sql files under models/ with a /* refill ... */ YAML header.
The project is the folder holding refill.yml (see --project).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Example: `  refill plan --from 2024-01-01 --to 2024-01-31
  refill run marts.daily_revenue+ --from 2024-01 --yes
  refill status --output json`,
	}
	root.SetFlagErrorFunc(flagError)
	// --version prints versionText, computed only when asked. (Not cobra's
	// version template: its template functions are global, and Do runs
	// concurrently in tests.)
	showVersion := root.Flags().Bool("version", false, "print the versions of refill, Go, the DuckDB library and the drivers")
	root.SuggestionsMinimumDistance = 2
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		hint := ""
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			hint = fmt.Sprintf(": did you mean %s?", strings.Join(s, " or "))
		}
		return usagef("unknown command %q%s (refill --help lists the commands)", args[0], hint)
	}
	root.RunE = func(c *cobra.Command, args []string) error {
		if *showVersion {
			_, err := fmt.Fprint(a.stdout, versionText(a.ctx))
			return err
		}
		return c.Help()
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.projectDir, "project", "", "project folder (default: the nearest folder upward holding refill.yml)")
	pf.StringVarP(&a.target, "target", "t", "", "target from refill.yml (default: its target:)")
	root.RegisterFlagCompletionFunc("target", a.completeTargets)
	pf.StringArrayVar(&a.vars, "var", nil, "set a template var, as NAME=VALUE (repeatable); values parse as YAML scalars")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "print every SQL statement executed (secrets redacted)")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "print only errors and the final summary")
	pf.BoolVar(&a.noColor, "no-color", false, "do not color the output (also NO_COLOR=1)")
	root.AddCommand(
		a.validateCommand(), a.planCommand(), a.runCommand(), a.statusCommand(),
		a.renderCommand(), a.diffCommand(), a.verifyCommand(), a.seedCommand(), a.graphCommand(), a.testCommand(), a.initCommand(), a.manCommand(), a.acceptCommand(), a.pruneCommand(),
	)
	root.CompletionOptions.HiddenDefaultCmd = false
	return root
}

// flagError is a usage error for a flag cobra could not parse; an
// unknown flag gets the nearest one the command has.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	name, unknown := strings.CutPrefix(msg, "unknown flag: --")
	if !unknown {
		return usageError{err}
	}
	var known []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			known = append(known, f.Name)
		}
	})
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) { known = append(known, f.Name) })
	if best := models.Closest(name, known); best != "" {
		return usagef("%s: did you mean --%s?", msg, best)
	}
	return usageError{err}
}

// loadProject finds and loads the project.
func (a *app) loadProject() (*models.Project, string, error) {
	dir, err := a.findProject()
	if err != nil {
		return nil, "", err
	}
	vars, err := a.cliVars()
	if err != nil {
		return nil, "", err
	}
	p, err := models.Load(os.DirFS(dir), withAdapters(models.LoadOptions{LookupEnv: a.getenv, Vars: vars}))
	if p == nil {
		return nil, "", err
	}
	// With only models broken, p holds the rest, and err their errors.
	return p, dir, err
}

// cliVars are the --var flags' values.
func (a *app) cliVars() (map[string]any, error) {
	vars := map[string]any{}
	for _, kv := range a.vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("--var %q: want NAME=VALUE", kv)
		}
		vars[k] = models.ParseScalar(v)
	}
	return vars, nil
}

func (a *app) findProject() (string, error) {
	if a.projectDir != "" {
		if _, err := os.Stat(filepath.Join(a.projectDir, models.ProjectFile)); err != nil {
			return "", usagef("--project %s: no %s there", a.projectDir, models.ProjectFile)
		}
		return a.projectDir, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, models.ProjectFile)); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", usagef("no %s in this folder or any above it: pass --project DIR, or create one with refill init", models.ProjectFile)
		}
		dir = parent
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) color() bool {
	if a.noColor {
		return false
	}
	if v, ok := a.getenv("NO_COLOR"); ok && v != "" {
		return false
	}
	return isTerminal(a.stdout)
}

// parseNow reads --now.
func parseNow(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC(), nil
	}
	p, err := models.ParsePeriod(s, time.UTC)
	if err != nil {
		return time.Time{}, usagef("--now: %v", err)
	}
	return p.Start.UTC(), nil
}
